// The Fact-check button next to a post and the verdict card under it, each
// in a shadow root of its own element: the site's styles cannot reach in,
// and ours cannot leak out. Clicks and key presses inside them stop at
// their element, so they never reach the post's own handlers (a click on a
// Bluesky or Threads post opens it).

import type { VerdictJob } from "../../lib/api-types";
import { VERDICT_STYLES, jobState, renderProgress, renderVerdict } from "../../ui/verdict-view";
import type { Theme } from "../adapters/feed-model";

export const BUTTON_TAG = "errata-fact-check";
export const CARD_TAG = "errata-verdict";

const ISOLATED_EVENTS = [
  "click",
  "auxclick",
  "dblclick",
  "mousedown",
  "mouseup",
  "pointerdown",
  "pointerup",
  "touchstart",
  "touchend",
  "keydown",
  "keyup",
  "keypress",
] as const;

/** Keeps the page from seeing interaction with our element (its default actions, such as following a link, still happen). */
function isolate(host: HTMLElement): void {
  for (const type of ISOLATED_EVENTS) host.addEventListener(type, (event) => event.stopPropagation());
}

/** One constructed sheet per document and style text, shared by every button and card (parsed once). */
const sheets = new WeakMap<Document, Map<string, CSSStyleSheet>>();

function attachStyles(doc: Document, root: ShadowRoot, css: string): void {
  try {
    let byText = sheets.get(doc);
    if (byText === undefined) {
      byText = new Map();
      sheets.set(doc, byText);
    }
    let sheet = byText.get(css);
    if (sheet === undefined) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
      byText.set(css, sheet);
    }
    root.adoptedStyleSheets = [sheet];
    return;
  } catch {
    // Constructable sheets unavailable (or not adoptable across worlds): a <style> element.
  }
  const style = doc.createElement("style");
  style.textContent = css;
  root.append(style);
}

const BUTTON_STYLES = `
:host { all: initial; display: inline-flex; align-items: center; vertical-align: middle; }
button { display: inline-flex; align-items: center; gap: 5px; margin: 0; padding: 4px 9px; border: 1px solid transparent; border-radius: 999px;
  background: none; cursor: pointer; font: 600 13px/18px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; white-space: nowrap; }
.light { color: #42576c; }
.dark { color: #aebbc9; }
button:hover { border-color: currentColor; }
button:focus-visible { outline: 2px solid #1a73e8; outline-offset: 1px; }
button[aria-busy="true"] { cursor: progress; opacity: .75; }
svg { width: 15px; height: 15px; flex: none; }
`;

const SVG_NS = "http://www.w3.org/2000/svg";

function checkIcon(doc: Document): SVGElement {
  const svg = doc.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  const path = doc.createElementNS(SVG_NS, "path");
  path.setAttribute("fill", "none");
  path.setAttribute("stroke", "currentColor");
  path.setAttribute("stroke-width", "2");
  path.setAttribute("stroke-linecap", "round");
  path.setAttribute("stroke-linejoin", "round");
  // A shield with a check mark.
  path.setAttribute("d", "M12 3 4.5 6v5.5c0 4.4 3.1 8.2 7.5 9.5 4.4-1.3 7.5-5.1 7.5-9.5V6L12 3Zm-3.5 9 2.5 2.5 4.5-5");
  svg.append(path);
  return svg;
}

/** The Fact-check button of one post. */
export class FactCheckButton {
  readonly host: HTMLElement;
  private readonly button: HTMLButtonElement;

  constructor(doc: Document, onClick: () => void) {
    this.host = doc.createElement(BUTTON_TAG);
    isolate(this.host);
    const root = this.host.attachShadow({ mode: "open" });
    attachStyles(doc, root, BUTTON_STYLES);
    this.button = doc.createElement("button");
    this.button.type = "button";
    this.button.className = "light";
    this.button.title = "Errata: fact-check this post";
    this.button.append(checkIcon(doc), doc.createTextNode("Fact-check"));
    this.button.addEventListener("click", (event) => {
      event.preventDefault();
      onClick();
    });
    root.append(this.button);
  }

  setTheme(theme: Theme): void {
    if (this.button.className !== theme) this.button.className = theme;
  }

  setBusy(busy: boolean): void {
    this.button.setAttribute("aria-busy", busy ? "true" : "false");
  }
}

/** What a card shows. */
export type CardView =
  /** The post is being read and registered; the analysis is being requested. */
  | { kind: "starting" }
  /** Following the analysis; job is null until its first read. */
  | { kind: "following"; job: VerdictJob | null }
  /** The check could not start, or polling gave up; retry is offered. */
  | { kind: "error"; message: string };

const CARD_STYLES = `
:host { all: initial; display: block; box-sizing: border-box; grid-column: 1 / -1; align-self: stretch; flex: none; width: auto; margin: 6px 0 12px; cursor: auto; }
:host([hidden]) { display: none; }
.ev-card { box-sizing: border-box; border: 1px solid var(--ev-border); border-radius: 12px; padding: 10px 14px 12px; box-shadow: 0 1px 3px rgba(0,0,0,.06); }
.ev-theme-dark.ev-card { box-shadow: none; }
.ev-head { display: flex; justify-content: space-between; align-items: center; gap: 8px; margin: 0 0 8px; }
.ev-brand { font-size: 12px; font-weight: 700; letter-spacing: .04em; text-transform: uppercase; color: var(--ev-muted); }
.ev-close { font: inherit; font-size: 20px; line-height: 1; color: var(--ev-muted); background: none; border: 0; padding: 0 2px; cursor: pointer; }
.ev-retry { font: inherit; font-size: 13px; font-weight: 600; color: var(--ev-link); background: none; border: 1px solid var(--ev-border); border-radius: 999px; padding: 3px 12px; cursor: pointer; }
button:focus-visible { outline: 2px solid var(--ev-link); outline-offset: 1px; }
${VERDICT_STYLES}`;

/** The card under one post. */
export class VerdictCard {
  readonly host: HTMLElement;
  private readonly box: HTMLElement;
  private readonly body: HTMLElement;
  private view: CardView = { kind: "starting" };

  constructor(
    private readonly doc: Document,
    private readonly callbacks: { onClose(): void; onRetry(): void },
  ) {
    this.host = doc.createElement(CARD_TAG);
    isolate(this.host);
    const root = this.host.attachShadow({ mode: "open" });
    attachStyles(doc, root, CARD_STYLES);
    this.box = doc.createElement("section");
    this.box.className = "ev-box ev-card ev-theme-light";
    this.box.setAttribute("aria-label", "Errata fact-check");
    const head = doc.createElement("div");
    head.className = "ev-head";
    const brand = doc.createElement("span");
    brand.className = "ev-brand";
    brand.textContent = "Errata · Fact-check";
    const close = doc.createElement("button");
    close.type = "button";
    close.className = "ev-close";
    close.setAttribute("aria-label", "Close");
    close.textContent = "×";
    close.addEventListener("click", () => this.callbacks.onClose());
    head.append(brand, close);
    this.body = doc.createElement("div");
    this.body.className = "ev-body";
    this.body.setAttribute("aria-live", "polite");
    this.box.append(head, this.body);
    root.append(this.box);
  }

  get state(): string {
    return this.host.dataset["state"] ?? "starting";
  }

  setTheme(theme: Theme): void {
    const name = `ev-box ev-card ev-theme-${theme}`;
    if (this.box.className !== name) this.box.className = name;
    this.host.dataset["theme"] = theme;
  }

  show(view: CardView): void {
    this.view = view;
    this.render();
  }

  private render(): void {
    const doc = this.doc;
    const view = this.view;
    switch (view.kind) {
      case "starting":
        this.host.dataset["state"] = "starting";
        this.body.replaceChildren(...renderProgress(doc, null));
        return;
      case "error": {
        this.host.dataset["state"] = "error";
        const message = doc.createElement("p");
        message.className = "ev-error";
        message.textContent = `Could not fact-check this post: ${view.message}.`;
        const retry = doc.createElement("button");
        retry.type = "button";
        retry.className = "ev-retry";
        retry.textContent = "Try again";
        retry.addEventListener("click", () => this.callbacks.onRetry());
        this.body.replaceChildren(message, retry);
        return;
      }
      case "following": {
        const job = view.job;
        this.host.dataset["state"] = jobState(job);
        if (job?.status === "COMPLETE" && job.verdict !== null) {
          this.body.replaceChildren(...renderVerdict(doc, job, job.verdict));
          return;
        }
        if (job?.status === "FAILED" || (job?.status === "COMPLETE" && job.verdict === null)) {
          this.host.dataset["state"] = "failed";
          const message = doc.createElement("p");
          message.className = "ev-error";
          message.textContent = job.failure !== null && job.failure.trim().length > 0
            ? `The fact-check failed: ${Array.from(job.failure).slice(0, 300).join("")}`
            : "The fact-check failed.";
          this.body.replaceChildren(message);
          return;
        }
        this.body.replaceChildren(...renderProgress(doc, job));
      }
    }
  }
}
