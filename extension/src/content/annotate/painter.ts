// Drawing the underline under anchored claims without touching the post's
// DOM. Where the CSS Custom Highlight API exists the ranges are registered
// in CSS.highlights and styled by annotations.css (::highlight); elsewhere a
// fallback draws thin bars in the extension's own overlay (inside its shadow
// root), following the ranges' client rectangles as the page scrolls.

export const HIGHLIGHT_NAME = "errata-claim";
export const HIGHLIGHT_NAME_DARK = "errata-claim-dark";
export const HIGHLIGHT_ACTIVE = "errata-claim-active";

export interface PaintedClaim {
  id: string;
  range: Range;
}

export interface Painter {
  readonly kind: "highlight-api" | "overlay";
  paint(claims: readonly PaintedClaim[], dark: boolean): void;
  setActive(id: string | null): void;
  clear(): void;
}

interface HighlightRegistryLike {
  set(name: string, highlight: unknown): unknown;
  delete(name: string): boolean;
}

type HighlightConstructor = new (...ranges: Range[]) => { priority: number };

function highlightApi(win: Window): { registry: HighlightRegistryLike; Highlight: HighlightConstructor } | null {
  const css = (win as unknown as { CSS?: { highlights?: HighlightRegistryLike } }).CSS;
  const Highlight = (win as unknown as { Highlight?: HighlightConstructor }).Highlight;
  if (css?.highlights === undefined || typeof Highlight !== "function") return null;
  return { registry: css.highlights, Highlight };
}

export class HighlightApiPainter implements Painter {
  readonly kind = "highlight-api" as const;
  private claims: readonly PaintedClaim[] = [];

  constructor(
    private readonly registry: HighlightRegistryLike,
    private readonly Highlight: HighlightConstructor,
  ) {}

  paint(claims: readonly PaintedClaim[], dark: boolean): void {
    this.claims = claims;
    const ranges = claims.map((c) => c.range);
    this.registry.delete(dark ? HIGHLIGHT_NAME : HIGHLIGHT_NAME_DARK);
    if (ranges.length === 0) {
      this.registry.delete(dark ? HIGHLIGHT_NAME_DARK : HIGHLIGHT_NAME);
    } else {
      this.registry.set(dark ? HIGHLIGHT_NAME_DARK : HIGHLIGHT_NAME, new this.Highlight(...ranges));
    }
  }

  setActive(id: string | null): void {
    const active = id === null ? [] : this.claims.filter((c) => c.id === id).map((c) => c.range);
    if (active.length === 0) {
      this.registry.delete(HIGHLIGHT_ACTIVE);
      return;
    }
    const highlight = new this.Highlight(...active);
    highlight.priority = 1;
    this.registry.set(HIGHLIGHT_ACTIVE, highlight);
  }

  clear(): void {
    this.claims = [];
    this.registry.delete(HIGHLIGHT_NAME);
    this.registry.delete(HIGHLIGHT_NAME_DARK);
    this.registry.delete(HIGHLIGHT_ACTIVE);
  }
}

/** Bars under each line box of each range, redrawn on scroll and resize (one frame at most per event burst). */
export class OverlayPainter implements Painter {
  readonly kind = "overlay" as const;
  private claims: readonly PaintedClaim[] = [];
  private active: string | null = null;
  private dark = false;
  private frame = 0;
  private readonly onViewportChange = (): void => this.schedule();

  constructor(
    private readonly layer: HTMLElement,
    private readonly win: Window,
  ) {}

  paint(claims: readonly PaintedClaim[], dark: boolean): void {
    const wasEmpty = this.claims.length === 0;
    this.claims = claims;
    this.dark = dark;
    if (wasEmpty && claims.length > 0) {
      this.win.addEventListener("scroll", this.onViewportChange, { capture: true, passive: true });
      this.win.addEventListener("resize", this.onViewportChange, { passive: true });
    }
    this.draw();
  }

  setActive(id: string | null): void {
    this.active = id;
    this.draw();
  }

  clear(): void {
    this.claims = [];
    this.win.removeEventListener("scroll", this.onViewportChange, { capture: true });
    this.win.removeEventListener("resize", this.onViewportChange);
    this.layer.replaceChildren();
  }

  private schedule(): void {
    if (this.frame !== 0) return;
    this.frame = this.win.requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  private draw(): void {
    const doc = this.layer.ownerDocument;
    const bars: HTMLElement[] = [];
    const height = this.win.innerHeight;
    for (const claim of this.claims) {
      for (const rect of Array.from(claim.range.getClientRects())) {
        if (rect.width === 0 || rect.bottom < 0 || rect.top > height) continue;
        const bar = doc.createElement("div");
        bar.className = `bar${this.dark ? " dark" : ""}${claim.id === this.active ? " active" : ""}`;
        bar.style.left = `${rect.left}px`;
        bar.style.top = `${rect.top}px`;
        bar.style.width = `${rect.width}px`;
        bar.style.height = `${rect.height}px`;
        bars.push(bar);
      }
    }
    this.layer.replaceChildren(...bars);
  }
}

/** The Highlight API painter when the browser has it, else the overlay. */
export function createPainter(win: Window, overlayLayer: () => HTMLElement): Painter {
  const api = highlightApi(win);
  return api !== null ? new HighlightApiPainter(api.registry, api.Highlight) : new OverlayPainter(overlayLayer(), win);
}
