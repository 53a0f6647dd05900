// The tooltip (summary, on hover) and the panel (reasoning and sources, on
// click), inside one shadow root attached to an element of the extension's
// own at the end of <html>: page styles cannot reach in, and the post's DOM
// is never touched. Light and dark themes follow the page's background.

import type { Claim } from "../../lib/api-types";
import { renderMarkdown, safeLinkUrl } from "../../lib/markdown";
import { DARK_BELOW, opaqueLuminance } from "../verdict/theme";
import { DISPUTE_STYLES, type PanelSection } from "./dispute";

export const HOST_TAG = "errata-annotations";

const STYLES = `
:host { all: initial; }
.layer, .overlay { position: fixed; inset: 0; pointer-events: none; }
.theme-light { --e-bg: #ffffff; --e-fg: #1f1f1f; --e-muted: #5f6368; --e-border: #d6d6d6; --e-accent: #c5221f; --e-link: #1a57c9; --e-code: #f1f3f4; --e-shadow: 0 4px 18px rgba(0,0,0,.18); }
.theme-dark { --e-bg: #26272b; --e-fg: #ececec; --e-muted: #a8abb0; --e-border: #45474c; --e-accent: #ff8a80; --e-link: #8ab4f8; --e-code: #34363b; --e-shadow: 0 4px 18px rgba(0,0,0,.6); }
.card { position: fixed; box-sizing: border-box; pointer-events: auto; background: var(--e-bg); color: var(--e-fg);
  border: 1px solid var(--e-border); border-left: 3px solid var(--e-accent); border-radius: 6px; box-shadow: var(--e-shadow);
  font: 13px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; text-align: left; letter-spacing: normal;
  word-wrap: break-word; overflow-wrap: anywhere; }
.card[hidden] { display: none; }
.tooltip { max-width: 340px; padding: 8px 10px; }
.panel { width: min(440px, calc(100vw - 16px)); max-height: min(70vh, 560px); overflow: auto; padding: 12px 14px; }
.label { display: block; font-size: 11px; font-weight: 600; text-transform: uppercase; letter-spacing: .04em; color: var(--e-accent); margin: 0 0 4px; }
.summary { margin: 0; }
.row { display: flex; justify-content: space-between; align-items: center; gap: 8px; margin-top: 6px; }
button { font: inherit; font-size: 12px; color: var(--e-link); background: none; border: 0; padding: 0; cursor: pointer; }
button:hover { text-decoration: underline; }
button:focus-visible, a:focus-visible { outline: 2px solid var(--e-link); outline-offset: 1px; }
.close { font-size: 18px; line-height: 1; color: var(--e-muted); }
.head { display: flex; justify-content: space-between; align-items: flex-start; gap: 8px; }
.quote { margin: 6px 0 8px; padding: 4px 8px; border-left: 2px solid var(--e-border); color: var(--e-muted); font-style: italic; }
h3 { font-size: 12px; margin: 12px 0 4px; color: var(--e-muted); text-transform: uppercase; letter-spacing: .04em; }
h4, h5, h6 { font-size: 13px; margin: 10px 0 4px; }
p { margin: 0 0 8px; }
ul, ol { margin: 0 0 8px; padding-left: 20px; }
blockquote { margin: 0 0 8px; padding-left: 8px; border-left: 2px solid var(--e-border); color: var(--e-muted); }
code { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; background: var(--e-code); padding: 0 3px; border-radius: 3px; }
pre { background: var(--e-code); padding: 6px 8px; overflow: auto; border-radius: 4px; }
pre code { padding: 0; }
a { color: var(--e-link); }
.sources { list-style: none; padding: 0; margin: 0; }
.sources li { margin: 0 0 8px; }
.snippet { display: block; color: var(--e-muted); font-size: 12px; }
.bar { position: fixed; pointer-events: none; border-bottom: 1.5px solid #d93025; box-sizing: border-box; }
.bar.dark { border-bottom-color: #ff8a80; }
.bar.active { background: rgba(217, 48, 37, .12); }
${DISPUTE_STYLES}`;

export interface AnchorBox {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export interface UiCallbacks {
  /** "Details" in the tooltip. */
  onDetails(claimId: string): void;
  /** The pointer is over the tooltip (keep it) or left it (may hide). */
  onTooltipHover(inside: boolean): void;
  /** The panel was closed by the user. */
  onPanelClosed(): void;
  /** A section at the end of a claim's panel (the dispute form), if any. */
  panelSection?(claim: Claim, relayout: () => void): PanelSection | null;
}

function el<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  if (className !== undefined) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Whether the page looks dark: its own background first, the system preference when it has none. */
export function pageIsDark(doc: Document): boolean {
  for (const element of [doc.body, doc.documentElement]) {
    if (element === null) continue;
    const luminance = opaqueLuminance(doc.defaultView?.getComputedStyle(element).backgroundColor ?? "");
    if (luminance !== null) return luminance < DARK_BELOW;
  }
  return doc.defaultView?.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}

export class AnnotationUi {
  private host: HTMLElement | null = null;
  private root: ShadowRoot | null = null;
  private tooltip: HTMLElement | null = null;
  private panel: HTMLElement | null = null;
  private overlay: HTMLElement | null = null;
  private panelClaimId: string | null = null;
  private tooltipClaimId: string | null = null;
  private section: PanelSection | null = null;
  private panelBox: AnchorBox | null = null;

  constructor(
    private readonly doc: Document,
    private readonly callbacks: UiCallbacks,
  ) {}

  /** The host element, if created (mutation observers ignore changes inside it). */
  get hostElement(): HTMLElement | null {
    return this.host;
  }

  get openPanelClaimId(): string | null {
    return this.panelClaimId;
  }

  get tooltipClaim(): string | null {
    return this.tooltipClaimId;
  }

  contains(node: Node | null): boolean {
    return node !== null && this.host !== null && (node === this.host || this.host.contains(node));
  }

  private ensure(): ShadowRoot {
    if (this.root !== null && this.host?.isConnected === true) return this.root;
    const host = this.doc.createElement(HOST_TAG);
    host.style.cssText = "all: initial; position: fixed; top: 0; left: 0; width: 0; height: 0; z-index: 2147483647;";
    const root = host.attachShadow({ mode: "open" });
    this.attachStyles(root);
    const layer = el(this.doc, "div", "layer");
    this.overlay = el(this.doc, "div", "overlay");
    this.tooltip = el(this.doc, "div", "card tooltip");
    this.tooltip.hidden = true;
    this.tooltip.setAttribute("role", "tooltip");
    this.tooltip.addEventListener("mouseenter", () => this.callbacks.onTooltipHover(true));
    this.tooltip.addEventListener("mouseleave", () => this.callbacks.onTooltipHover(false));
    this.panel = el(this.doc, "div", "card panel");
    this.panel.hidden = true;
    this.panel.setAttribute("role", "dialog");
    this.panel.setAttribute("aria-label", "Errata: incorrect claim");
    layer.append(this.overlay, this.tooltip, this.panel);
    root.append(layer);
    (this.doc.documentElement ?? this.doc.body)?.appendChild(host);
    this.host = host;
    this.root = root;
    return root;
  }

  private attachStyles(root: ShadowRoot): void {
    try {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLES);
      root.adoptedStyleSheets = [sheet];
      return;
    } catch {
      // Constructable sheets unavailable here (or not adoptable across worlds): a <style> element in the shadow root.
    }
    const style = this.doc.createElement("style");
    style.textContent = STYLES;
    root.append(style);
  }

  /** The layer the overlay painter draws into. */
  overlayLayer(): HTMLElement {
    this.ensure();
    if (this.overlay === null) throw new Error("overlay missing");
    return this.overlay;
  }

  private theme(card: HTMLElement, dark: boolean): void {
    card.classList.toggle("theme-dark", dark);
    card.classList.toggle("theme-light", !dark);
  }

  /** Places a card under the anchor box, or above it when there is no room, kept inside the viewport. */
  private place(card: HTMLElement, box: AnchorBox): void {
    const win = this.doc.defaultView;
    const vw = win?.innerWidth ?? 1024;
    const vh = win?.innerHeight ?? 768;
    card.style.left = "0px";
    card.style.top = "0px";
    const { width, height } = card.getBoundingClientRect();
    const left = Math.max(8, Math.min(box.left, vw - width - 8));
    const below = box.bottom + 6;
    const top = below + height <= vh - 8 || box.top - 6 - height < 8 ? below : box.top - 6 - height;
    card.style.left = `${Math.round(left)}px`;
    card.style.top = `${Math.round(Math.max(8, Math.min(top, vh - Math.min(height, vh - 16) - 8)))}px`;
  }

  showTooltip(claim: Claim, box: AnchorBox, dark: boolean): void {
    this.ensure();
    const tooltip = this.tooltip;
    if (tooltip === null) return;
    if (this.tooltipClaimId !== claim.id) {
      const details = el(this.doc, "button", "details", "Details");
      details.type = "button";
      details.addEventListener("click", () => this.callbacks.onDetails(claim.id));
      const row = el(this.doc, "div", "row");
      row.append(el(this.doc, "span", "hint", ""), details);
      tooltip.replaceChildren(el(this.doc, "span", "label", "Errata · incorrect claim"), el(this.doc, "p", "summary", claim.summary), row);
      this.tooltipClaimId = claim.id;
    }
    this.theme(tooltip, dark);
    tooltip.hidden = false;
    this.place(tooltip, box);
  }

  hideTooltip(): void {
    if (this.tooltip !== null) this.tooltip.hidden = true;
    this.tooltipClaimId = null;
  }

  openPanel(claim: Claim, box: AnchorBox, dark: boolean): void {
    this.ensure();
    const panel = this.panel;
    if (panel === null) return;
    this.hideTooltip();
    const close = el(this.doc, "button", "close", "×");
    close.type = "button";
    close.setAttribute("aria-label", "Close");
    close.addEventListener("click", () => {
      this.closePanel();
      this.callbacks.onPanelClosed();
    });
    const head = el(this.doc, "div", "head");
    head.append(el(this.doc, "span", "label", "Errata · incorrect claim"), close);

    const reasoning = el(this.doc, "div", "reasoning");
    reasoning.append(renderMarkdown(claim.reasoning, this.doc));

    const sources = el(this.doc, "ol", "sources");
    for (const source of claim.sources) {
      const item = el(this.doc, "li");
      const href = safeLinkUrl(source.url);
      const title = source.title.trim().length > 0 ? source.title : source.url;
      if (href !== null) {
        const a = el(this.doc, "a", undefined, title);
        a.href = href;
        a.target = "_blank";
        a.rel = "noopener noreferrer nofollow";
        item.append(a);
      } else {
        item.append(el(this.doc, "span", undefined, title));
      }
      if (source.snippet.trim().length > 0) item.append(el(this.doc, "span", "snippet", source.snippet));
      sources.append(item);
    }

    this.section = this.callbacks.panelSection?.(claim, () => this.relayoutPanel()) ?? null;
    panel.replaceChildren(
      head,
      el(this.doc, "p", "quote", `“${claim.text}”`),
      el(this.doc, "p", "summary", claim.summary),
      el(this.doc, "h3", undefined, "Reasoning"),
      reasoning,
      el(this.doc, "h3", undefined, claim.sources.length === 1 ? "Source" : "Sources"),
      sources,
      ...(this.section === null ? [] : [this.section.element]),
    );
    this.theme(panel, dark);
    panel.hidden = false;
    panel.scrollTop = 0;
    this.place(panel, box);
    this.panelBox = box;
    this.panelClaimId = claim.id;
    close.focus({ preventScroll: true });
  }

  closePanel(): void {
    if (this.panel !== null) {
      this.panel.hidden = true;
      this.panel.replaceChildren();
    }
    this.panelClaimId = null;
    this.section = null;
  }

  /** The panel's content grew or shrank (the dispute form): placed again inside the viewport, its section in view. */
  private relayoutPanel(): void {
    const panel = this.panel;
    const section = this.section?.element;
    if (panel === null || panel.hidden || this.panelBox === null || section === undefined) return;
    this.place(panel, this.panelBox);
    const bottom = section.offsetTop + section.offsetHeight;
    if (bottom > panel.scrollTop + panel.clientHeight) panel.scrollTop = Math.max(0, bottom - panel.clientHeight);
  }

  /** Escape while the panel is open: true when its section closed something of its own (the panel stays). */
  escape(): boolean {
    return this.panelClaimId !== null && this.section?.escape() === true;
  }

  destroy(): void {
    this.host?.remove();
    this.host = null;
    this.root = null;
    this.tooltip = null;
    this.panel = null;
    this.overlay = null;
    this.panelClaimId = null;
    this.tooltipClaimId = null;
    this.section = null;
  }
}
