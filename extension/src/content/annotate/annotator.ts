// Inline annotations for one page: anchors the claims of a completed
// investigation to DOM ranges, draws them, shows the tooltip on hover and the
// panel on click, and anchors again after the page re-renders (React, X's
// recycling) without ever changing the post's DOM. The claims live here, not
// in the DOM, so a re-render loses nothing.

import type { Claim } from "../../lib/api-types";
import type { TextFilter } from "../../lib/dom-text";
import { WikipediaTextFilter } from "../../lib/wikipedia-filter";
import type { PlatformAdapter } from "../adapters/model";
import type { AppealTracker } from "./appeal-tracker";
import { disputeSection } from "./dispute";
import { type MatchTier, findClaim } from "./match";
import { type Painter, createPainter } from "./painter";
import { buildTextMap, rangeFor } from "./text-map";
import { type AnchorBox, AnnotationUi, HOST_TAG, pageIsDark } from "./ui";

export interface AnchoredClaim {
  claim: Claim;
  range: Range;
  tier: MatchTier;
}

export interface AnchorResult {
  anchored: AnchoredClaim[];
  unanchored: Claim[];
  /** Characters of post text searched. */
  textLength: number;
}

/** The text filter an adapter's extraction uses (Wikipedia prunes appendices and navigation). */
export function textFilterFor(adapter: Pick<PlatformAdapter, "platformKey">): TextFilter | undefined {
  return adapter.platformKey === "WIKIPEDIA" ? new WikipediaTextFilter() : undefined;
}

/** Anchors claims under a content root: one text map, then the three matching tiers per claim. */
export function anchorClaims(root: Node, claims: readonly Claim[], filter?: TextFilter): AnchorResult {
  const doc = root.ownerDocument ?? (root as Document);
  const map = buildTextMap(root, filter);
  const anchored: AnchoredClaim[] = [];
  const unanchored: Claim[] = [];
  for (const claim of claims) {
    const match = findClaim(map.text, claim);
    const range = match === null ? null : rangeFor(map, match.start, match.end, doc);
    if (match !== null && range !== null) anchored.push({ claim, range, tier: match.tier });
    else unanchored.push(claim);
  }
  return { anchored, unanchored, textLength: map.text.length };
}

/** Quiet time after the last relevant DOM change before anchoring again... */
const REANCHOR_DEBOUNCE_MS = 250;
/** ...but never more than this after the first one (pages that never stop changing). */
const REANCHOR_MAX_WAIT_MS = 1500;
const TOOLTIP_SHOW_DELAY_MS = 120;
const TOOLTIP_HIDE_DELAY_MS = 300;
const INTERACTIVE = "a, button, input, textarea, select, summary, label, [contenteditable], [role=button], [role=link]";

export interface AnnotatorOptions {
  /**
   * Told after each anchoring pass whose outcome differs from the previous one, and after a retraction:
   * the claims placed, those not found, and those withdrawn after an appeal (never drawn again).
   */
  report(anchored: string[], unanchored: string[], withdrawn: string[]): void;
  /** Appeals of the claims ("Dispute this claim" in each panel); without it the panel has no dispute section. */
  appeals?: AppealTracker;
}

interface Hit {
  anchored: AnchoredClaim;
  box: AnchorBox;
}

export class Annotator {
  private claims: Claim[] = [];
  /** Claims withdrawn after an appeal: never drawn again on this page, whatever the background sends. */
  private readonly retracted = new Set<string>();
  private visible = true;
  private anchored: AnchoredClaim[] = [];
  private painter: Painter | null = null;
  private readonly ui: AnnotationUi;
  private observer: MutationObserver | null = null;
  private debounceTimer: ReturnType<typeof setTimeout> | null = null;
  private maxWaitTimer: ReturnType<typeof setTimeout> | null = null;
  private tooltipTimer: ReturnType<typeof setTimeout> | null = null;
  private pointerFrame = 0;
  private pointer: { x: number; y: number } | null = null;
  private hovered: string | null = null;
  private overTooltip = false;
  private lastReport = "";
  private root: Element | null = null;
  private listening = false;
  /** Anchoring passes so far and the duration of the last, for diagnostics. */
  stats = { passes: 0, lastMs: 0, textLength: 0 };

  private readonly onPointerMove = (event: PointerEvent | MouseEvent): void => {
    this.pointer = { x: event.clientX, y: event.clientY };
    if (this.pointerFrame !== 0) return;
    this.pointerFrame = this.win.requestAnimationFrame(() => {
      this.pointerFrame = 0;
      this.updateHover();
    });
  };

  private readonly onClick = (event: MouseEvent): void => {
    if (event.button !== 0 || this.anchored.length === 0 || !this.visible) return;
    const path = event.composedPath();
    const host = this.ui.hostElement;
    if (host !== null && path.includes(host)) return; // inside our own tooltip or panel
    const hit = this.hitTest(event.clientX, event.clientY);
    if (hit === null) {
      if (this.ui.openPanelClaimId !== null) this.closePanel();
      return;
    }
    const target = event.target instanceof this.win.Element ? event.target : null;
    if (target?.closest(INTERACTIVE) !== null && target !== null) return; // a link inside a claim still works
    const selection = this.doc.getSelection();
    if (selection !== null && !selection.isCollapsed) return; // the user is selecting text
    this.openPanel(hit.anchored, hit.box);
  };

  private readonly onKeyDown = (event: KeyboardEvent): void => {
    if (event.key === "Escape" && this.ui.openPanelClaimId !== null && !this.ui.escape()) this.closePanel();
  };

  private readonly onScroll = (): void => {
    if (!this.overTooltip) this.ui.hideTooltip();
  };

  constructor(
    private readonly adapter: PlatformAdapter,
    private readonly doc: Document,
    private readonly options: AnnotatorOptions,
  ) {
    this.ui = new AnnotationUi(doc, {
      onDetails: (id) => {
        const anchored = this.anchored.find((a) => a.claim.id === id);
        if (anchored !== undefined) this.openPanel(anchored, this.boxOf(anchored.range));
      },
      onTooltipHover: (inside) => {
        this.overTooltip = inside;
        if (inside) this.cancelTooltipTimer();
        else this.scheduleTooltipHide();
      },
      onPanelClosed: () => this.painter?.setActive(this.hovered),
      ...(options.appeals === undefined
        ? {}
        : {
            panelSection: (claim: Claim, relayout: () => void) =>
              options.appeals === undefined ? null : disputeSection(doc, claim, options.appeals, relayout),
          }),
    });
  }

  private get win(): Window & typeof globalThis {
    const win = this.doc.defaultView;
    if (win === null) throw new Error("document has no window");
    return win as Window & typeof globalThis;
  }

  get anchoredClaims(): readonly AnchoredClaim[] {
    return this.anchored;
  }

  /** Draws these claims (replacing any before); an empty list removes everything. */
  setClaims(claims: readonly Claim[], visible: boolean): void {
    this.claims = claims.filter((c) => !this.retracted.has(c.id));
    this.visible = visible;
    this.lastReport = "";
    if (this.claims.length === 0) {
      this.clear();
      return;
    }
    this.startListening();
    this.anchor();
    void this.options.appeals?.load(this.claims.map((c) => c.id)).catch(() => {
      // The background is gone (extension reloaded); the panels offer the form again.
    });
  }

  /** A claim withdrawn after review: its highlight goes (an open panel stays, showing the outcome). */
  retract(claimId: string): void {
    this.retracted.add(claimId);
    if (!this.claims.some((c) => c.id === claimId)) return;
    this.claims = this.claims.filter((c) => c.id !== claimId);
    this.anchored = this.anchored.filter((a) => a.claim.id !== claimId);
    if (this.hovered === claimId) this.hovered = null;
    if (this.ui.tooltipClaim === claimId) this.ui.hideTooltip();
    this.paint();
    const anchoredIds = this.anchored.map((a) => a.claim.id);
    const unanchoredIds = this.claims.filter((c) => !anchoredIds.includes(c.id)).map((c) => c.id);
    const withdrawnIds = [...this.retracted];
    this.lastReport = JSON.stringify([anchoredIds, unanchoredIds, withdrawnIds]);
    this.options.report(anchoredIds, unanchoredIds, withdrawnIds);
  }

  setVisible(visible: boolean): void {
    if (this.visible === visible) return;
    this.visible = visible;
    if (!visible) {
      this.ui.hideTooltip();
      this.closePanel();
    }
    this.paint();
  }

  /** Scrolls a claim into view and opens its panel; false when it is not on the page. */
  focus(claimId: string): boolean {
    const anchored = this.anchored.find((a) => a.claim.id === claimId);
    if (anchored === undefined) return false;
    if (!this.visible) this.setVisible(true);
    const element = anchored.range.startContainer.parentElement;
    if (typeof element?.scrollIntoView === "function") element.scrollIntoView({ block: "center", inline: "nearest" });
    this.openPanel(anchored, this.boxOf(anchored.range));
    return true;
  }

  /** Removes every annotation and listener. */
  clear(): void {
    this.claims = [];
    this.anchored = [];
    this.painter?.clear();
    this.ui.destroy();
    this.painter = null;
    this.stopListening();
  }

  private startListening(): void {
    if (this.listening) return;
    this.listening = true;
    this.doc.addEventListener("pointermove", this.onPointerMove, { passive: true });
    this.doc.addEventListener("click", this.onClick, true);
    this.doc.addEventListener("keydown", this.onKeyDown, true);
    this.win.addEventListener("scroll", this.onScroll, { passive: true, capture: true });
    this.observer = new this.win.MutationObserver((records) => this.onMutations(records));
    this.observer.observe(this.doc.documentElement, { childList: true, subtree: true, characterData: true });
  }

  private stopListening(): void {
    if (!this.listening) return;
    this.listening = false;
    this.doc.removeEventListener("pointermove", this.onPointerMove);
    this.doc.removeEventListener("click", this.onClick, true);
    this.doc.removeEventListener("keydown", this.onKeyDown, true);
    this.win.removeEventListener("scroll", this.onScroll, { capture: true });
    this.observer?.disconnect();
    this.observer = null;
    for (const timer of [this.debounceTimer, this.maxWaitTimer, this.tooltipTimer]) if (timer !== null) clearTimeout(timer);
    this.debounceTimer = null;
    this.maxWaitTimer = null;
    this.tooltipTimer = null;
  }

  private onMutations(records: MutationRecord[]): void {
    const root = this.root;
    let relevant = root === null || !root.isConnected;
    let added = false;
    for (const record of records) {
      if (relevant) break;
      if (this.ui.contains(record.target)) continue;
      if (record.type === "childList") {
        const nodes = [...Array.from(record.addedNodes), ...Array.from(record.removedNodes)];
        if (nodes.length > 0 && nodes.every((n) => this.ui.contains(n) || n.nodeName.toLowerCase() === HOST_TAG)) {
          continue; // our own host element coming or going
        }
        if (record.addedNodes.length > 0) added = true;
      }
      if (root !== null && root.contains(record.target)) relevant = true;
    }
    if (!relevant && this.anchored.some((a) => a.range.collapsed || !a.range.startContainer.isConnected)) relevant = true;
    // A new content root may have been rendered elsewhere (SPA re-render).
    if (!relevant && added && this.adapter.getContentRoot(this.doc) !== root) relevant = true;
    if (relevant) this.scheduleAnchor();
  }

  private scheduleAnchor(): void {
    if (this.debounceTimer !== null) clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => this.runScheduledAnchor(), REANCHOR_DEBOUNCE_MS);
    this.maxWaitTimer ??= setTimeout(() => this.runScheduledAnchor(), REANCHOR_MAX_WAIT_MS);
  }

  private runScheduledAnchor(): void {
    for (const timer of [this.debounceTimer, this.maxWaitTimer]) if (timer !== null) clearTimeout(timer);
    this.debounceTimer = null;
    this.maxWaitTimer = null;
    if (this.claims.length > 0) this.anchor();
  }

  /** One anchoring pass over the current content root. */
  anchor(): void {
    const started = performance.now();
    this.root = this.adapter.getContentRoot(this.doc);
    const result =
      this.root === null
        ? { anchored: [], unanchored: [...this.claims], textLength: 0 }
        : anchorClaims(this.root, this.claims, textFilterFor(this.adapter));
    this.anchored = result.anchored;
    const ms = performance.now() - started;
    this.stats = { passes: this.stats.passes + 1, lastMs: ms, textLength: result.textLength };
    try {
      performance.measure("errata:anchor", {
        start: started,
        end: started + ms,
        detail: { claims: this.claims.length, anchored: result.anchored.length, textLength: result.textLength },
      });
    } catch {
      // User Timing with details is missing in very old engines; diagnostics only.
    }
    const open = this.ui.openPanelClaimId;
    if (open !== null && !this.retracted.has(open) && !this.anchored.some((a) => a.claim.id === open)) {
      this.closePanel();
    }
    this.paint();
    const anchoredIds = result.anchored.map((a) => a.claim.id);
    const unanchoredIds = result.unanchored.map((c) => c.id);
    const withdrawnIds = [...this.retracted];
    const summary = JSON.stringify([anchoredIds, unanchoredIds, withdrawnIds]);
    if (summary !== this.lastReport) {
      this.lastReport = summary;
      this.options.report(anchoredIds, unanchoredIds, withdrawnIds);
    }
  }

  private paint(): void {
    if (this.anchored.length === 0 && this.painter === null) return;
    this.painter ??= createPainter(this.win, () => this.ui.overlayLayer());
    const dark = pageIsDark(this.doc);
    if (!this.visible) this.painter.clear();
    else this.painter.paint(
      this.anchored.map((a) => ({ id: a.claim.id, range: a.range })),
      dark,
    );
    this.painter.setActive(this.visible ? (this.ui.openPanelClaimId ?? this.hovered) : null);
  }

  private boxOf(range: Range): AnchorBox {
    const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0);
    const first = rects[0] ?? range.getBoundingClientRect();
    return { left: first.left, top: first.top, right: first.right, bottom: first.bottom };
  }

  /** The claim under a viewport point, by the client rectangles of each range. */
  hitTest(x: number, y: number): Hit | null {
    for (const anchored of this.anchored) {
      for (const rect of Array.from(anchored.range.getClientRects())) {
        if (rect.width === 0) continue;
        if (x >= rect.left - 1 && x <= rect.right + 1 && y >= rect.top && y <= rect.bottom + 3) {
          return { anchored, box: { left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom } };
        }
      }
    }
    return null;
  }

  private updateHover(): void {
    if (this.pointer === null || !this.visible || this.anchored.length === 0) return;
    const hit = this.hitTest(this.pointer.x, this.pointer.y);
    const id = hit?.anchored.claim.id ?? null;
    if (id !== this.hovered) {
      this.hovered = id;
      this.painter?.setActive(this.ui.openPanelClaimId ?? id);
    }
    if (hit === null) {
      this.scheduleTooltipHide();
      return;
    }
    if (this.ui.openPanelClaimId === id) return; // its panel is open already
    this.cancelTooltipTimer();
    const show = (): void => this.ui.showTooltip(hit.anchored.claim, hit.box, pageIsDark(this.doc));
    if (this.ui.tooltipClaim !== null) show();
    else this.tooltipTimer = setTimeout(show, TOOLTIP_SHOW_DELAY_MS);
  }

  private cancelTooltipTimer(): void {
    if (this.tooltipTimer !== null) clearTimeout(this.tooltipTimer);
    this.tooltipTimer = null;
  }

  private scheduleTooltipHide(): void {
    this.cancelTooltipTimer();
    this.tooltipTimer = setTimeout(() => {
      this.tooltipTimer = null;
      if (!this.overTooltip && this.hovered === null) this.ui.hideTooltip();
    }, TOOLTIP_HIDE_DELAY_MS);
  }

  private openPanel(anchored: AnchoredClaim, box: AnchorBox): void {
    this.cancelTooltipTimer();
    this.ui.openPanel(anchored.claim, box, pageIsDark(this.doc));
    this.painter?.setActive(anchored.claim.id);
  }

  private closePanel(): void {
    this.ui.closePanel();
    this.painter?.setActive(this.hovered);
  }
}
