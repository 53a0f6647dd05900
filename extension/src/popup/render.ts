// The popup's view of a tab's state, as plain DOM (no innerHTML). Kept apart
// from the page wiring so every state can be rendered in tests.

import { type Claim, type ClaimPayload, type PriorInvestigationResult, isSettled } from "../lib/api-types";
import { renderMarkdown, safeLinkUrl } from "../lib/markdown";
import type { Platform } from "../lib/platform";
import { SKIP_TITLES, type StatusState, type TabState } from "../lib/tab-state";
import { jobState, renderProgress, renderVerdict } from "../ui/verdict-view";

const PLATFORM_NAMES: Record<Platform, string> = {
  LESSWRONG: "LessWrong",
  X: "X",
  SUBSTACK: "Substack",
  WIKIPEDIA: "Wikipedia",
  BLUESKY: "Bluesky",
  THREADS: "Threads",
};

/** The longest URL shown whole in the popup's one header line; longer ones are cut in the middle. */
export const MAX_URL_CHARS = 40;

/**
 * A URL short enough for one line: without scheme, "www.", query and
 * fragment, and, when still longer than max characters, its start and end
 * around an ellipsis (the post id at the end stays visible). The full URL
 * goes in the element's title.
 */
export function shortenUrl(url: string, max = MAX_URL_CHARS): string {
  let display = url;
  try {
    const parsed = new URL(url);
    display = `${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
  } catch {
    // not a URL: shown as it is, shortened
  }
  display = display.replace(/^www\./i, "");
  const points = Array.from(display);
  if (points.length <= max) return display;
  const keep = Math.max(2, max - 1);
  const head = Math.ceil(keep / 2);
  return `${points.slice(0, head).join("")}…${points.slice(points.length - (keep - head)).join("")}`;
}

export interface PopupContext {
  doc: Document;
  /** An instance key or an OpenAI key is set (Investigate Now can be authorized). */
  hasCredentials: boolean;
  onInvestigate(): void;
  onRecheck(): void;
  onFocusClaim(claimId: string): void;
  onOpenSettings(): void;
  /** "Verdict for this post" (and its Try again). */
  onVerdict(): void;
  /** Following the verdict analysis gave up; worded for the user. */
  verdictError?: string;
  /** The tab shows Bluesky or Threads, whose posts carry their own Fact-check buttons. */
  feedSite?: string;
}

/** A short name for the state, set as data-state on the popup's main element. */
export function stateName(state: TabState): string {
  switch (state.kind) {
    case "idle":
    case "skipped":
    case "unavailable":
    case "registering":
      return state.kind;
    case "error":
      return state.upgradeRequired !== undefined ? "upgrade-required" : "error";
    case "status":
      switch (state.status.investigationState) {
        case "NOT_INVESTIGATED":
          return "not-investigated";
        case "INVESTIGATING":
          return "investigating";
        case "FAILED":
          return "failed";
        case "INVESTIGATED":
          return state.status.claims.some((c) => state.anchoring?.withdrawn?.includes(c.id) !== true) ? "incorrect-claims" : "clean";
      }
  }
}

function el<K extends keyof HTMLElementTagNameMap>(
  ctx: PopupContext,
  tag: K,
  text?: string,
  className?: string,
): HTMLElementTagNameMap[K] {
  const node = ctx.doc.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}

function button(ctx: PopupContext, label: string, onClick: () => void, className = "primary"): HTMLButtonElement {
  const b = el(ctx, "button", label, className);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

function actions(ctx: PopupContext, ...buttons: HTMLElement[]): HTMLElement {
  const div = el(ctx, "div", undefined, "actions");
  div.append(...buttons);
  return div;
}

function postHeader(ctx: PopupContext, state: Exclude<TabState, { kind: "idle" }>): HTMLElement {
  const box = el(ctx, "div", undefined, "post");
  if (state.title !== undefined) box.append(el(ctx, "p", state.title, "title"));
  const line = el(ctx, "p", `${PLATFORM_NAMES[state.platform]} · `, "url muted");
  const url = el(ctx, "span", shortenUrl(state.url), "url-text");
  url.title = state.url;
  line.append(url);
  box.append(line);
  return box;
}

function claimDetails(ctx: PopupContext, claim: ClaimPayload): HTMLElement {
  const details = el(ctx, "details");
  details.append(el(ctx, "summary", "Reasoning and sources"));
  const reasoning = el(ctx, "div", undefined, "reasoning");
  reasoning.append(renderMarkdown(claim.reasoning, ctx.doc));
  const sources = el(ctx, "ol", undefined, "sources");
  for (const source of claim.sources) {
    const li = el(ctx, "li");
    const href = safeLinkUrl(source.url);
    const title = source.title.trim().length > 0 ? source.title : source.url;
    if (href === null) li.append(el(ctx, "span", title));
    else {
      const a = el(ctx, "a", title);
      a.href = href;
      a.target = "_blank";
      a.rel = "noopener noreferrer nofollow";
      li.append(a);
    }
    sources.append(li);
  }
  details.append(reasoning, sources);
  return details;
}

function claimList(ctx: PopupContext, claims: ReadonlyArray<Claim | ClaimPayload>, state?: StatusState): HTMLElement {
  const list = el(ctx, "ol", undefined, "claims");
  for (const claim of claims) {
    const item = el(ctx, "li");
    item.append(el(ctx, "div", `“${claim.text}”`, "claim-text"), el(ctx, "div", claim.summary, "claim-summary"));
    if ("id" in claim && state !== undefined) {
      item.dataset["claimId"] = claim.id;
      const row = el(ctx, "div", undefined, "claim-actions");
      const anchoring = state.anchoring;
      if (anchoring?.withdrawn?.includes(claim.id) === true) {
        item.classList.add("withdrawn");
        row.append(el(ctx, "span", "Withdrawn after review; no longer highlighted.", "claim-note muted"));
      } else if (anchoring?.anchored.includes(claim.id) === true) {
        row.append(button(ctx, "Show in page", () => ctx.onFocusClaim(claim.id), "link-button show-in-page"));
      } else if (anchoring?.unanchored.includes(claim.id) === true) {
        item.classList.add("unanchored");
        row.append(el(ctx, "span", "Not found in the page text; not highlighted.", "claim-note muted"));
      }
      if (row.childNodes.length > 0) item.append(row);
    }
    item.append(claimDetails(ctx, claim));
    list.append(item);
  }
  return list;
}

function priorNote(ctx: PopupContext, prior: PriorInvestigationResult | null): HTMLElement[] {
  if (prior === null) return [];
  const n = prior.oldClaims.length;
  return [
    el(
      ctx,
      "p",
      n === 0
        ? "An earlier version of this post had no incorrect claims."
        : `An earlier version of this post had ${n} incorrect claim${n === 1 ? "" : "s"}.`,
      "muted prior",
    ),
  ];
}

function requestError(ctx: PopupContext, state: StatusState): HTMLElement[] {
  return state.requestError === undefined ? [] : [el(ctx, "p", `Could not continue: ${state.requestError}.`, "bad request-error")];
}

function renderStatus(ctx: PopupContext, state: StatusState): HTMLElement[] {
  const post = postHeader(ctx, state);
  const s = state.status;
  switch (s.investigationState) {
    case "NOT_INVESTIGATED": {
      const headline = el(ctx, "p", undefined, "headline");
      if (state.requesting === true) headline.append(el(ctx, "span", undefined, "spinner"), "Requesting an investigation…");
      else headline.append("Not yet investigated.");
      const out: HTMLElement[] = [post, headline, ...priorNote(ctx, s.priorInvestigationResult)];
      const investigate = button(ctx, state.requesting === true ? "Requesting…" : "Investigate Now", ctx.onInvestigate);
      investigate.id = "investigate-now";
      investigate.disabled = state.requesting === true || !ctx.hasCredentials;
      out.push(actions(ctx, investigate));
      if (!ctx.hasCredentials) {
        const hint = el(ctx, "p", "To request an investigation, add your OpenAI key or an instance API key in ", "muted hint");
        const link = button(ctx, "Settings", ctx.onOpenSettings, "link-button");
        hint.append(link, ".");
        out.push(hint);
      }
      out.push(...requestError(ctx, state));
      return out;
    }
    case "INVESTIGATING": {
      const headline = el(ctx, "p", undefined, "headline");
      headline.append(el(ctx, "span", undefined, "spinner"), s.status === "PENDING" ? "Investigation queued…" : "Investigating…");
      const out: HTMLElement[] = [post, headline];
      if (s.confirmedClaims.length > 0) {
        out.push(el(ctx, "p", `Confirmed so far (${s.confirmedClaims.length}):`, "section bad"), claimList(ctx, s.confirmedClaims));
      }
      if (s.pendingClaims.length > 0) {
        out.push(el(ctx, "p", `Being checked (${s.pendingClaims.length}), not final:`, "section muted"), claimList(ctx, s.pendingClaims));
      }
      if (s.confirmedClaims.length === 0 && s.pendingClaims.length === 0) {
        out.push(el(ctx, "p", "No claims flagged yet. This page updates by itself.", "muted"));
      }
      out.push(...priorNote(ctx, s.priorInvestigationResult), ...requestError(ctx, state));
      if (state.investigationId === undefined || state.requestError !== undefined) {
        out.push(actions(ctx, button(ctx, "Check again", ctx.onRecheck, "secondary")));
      }
      return out;
    }
    case "FAILED": {
      const retry = button(ctx, state.requesting === true ? "Retrying…" : "Retry", ctx.onInvestigate);
      retry.id = "retry";
      retry.disabled = state.requesting === true;
      return [post, el(ctx, "p", "The investigation failed.", "headline bad"), actions(ctx, retry), ...requestError(ctx, state)];
    }
    case "INVESTIGATED": {
      if (s.claims.length === 0) return [post, el(ctx, "p", "No issues found.", "headline good")];
      // A claim withdrawn after an appeal is listed as such, after the others, and not counted.
      const withdrawn = new Set(state.anchoring?.withdrawn ?? []);
      const standing = s.claims.filter((c) => !withdrawn.has(c.id));
      const gone = s.claims.filter((c) => withdrawn.has(c.id));
      const n = standing.length;
      const out: HTMLElement[] = [
        post,
        n === 0
          ? el(ctx, "p", "No incorrect claims remain.", "headline good")
          : el(ctx, "p", `${n} incorrect claim${n === 1 ? "" : "s"} found`, "headline bad"),
        claimList(ctx, [...standing, ...gone], state),
      ];
      const missing = state.anchoring?.unanchored.filter((id) => !withdrawn.has(id)).length ?? 0;
      if (missing > 0) {
        out.push(el(ctx, "p", `${missing} of them could not be placed in the page and ${missing === 1 ? "is" : "are"} listed here only.`, "muted"));
      }
      return out;
    }
  }
}

/** The popup's "Verdict for this post" section (data-verdict names its state). */
export function verdictSection(ctx: PopupContext, state: StatusState): HTMLElement {
  const section = el(ctx, "section", undefined, "verdict ev-box");
  section.id = "verdict";
  const v = state.verdict;
  const start = (label: string): HTMLButtonElement => {
    const b = button(ctx, label, ctx.onVerdict, "secondary");
    b.id = "verdict-for-post";
    return b;
  };
  if (v === undefined) {
    section.dataset["verdict"] = "none";
    section.append(actions(ctx, start("Verdict for this post")));
    return section;
  }
  section.append(el(ctx, "p", "Verdict for this post", "section muted"));
  if (v.requesting === true) {
    section.dataset["verdict"] = "requesting";
    section.append(...renderProgress(ctx.doc, null));
    return section;
  }
  if (v.error !== undefined || v.analysisId === undefined) {
    section.dataset["verdict"] = "error";
    section.append(el(ctx, "p", `Could not request a verdict: ${v.error ?? "unknown error"}.`, "bad"), actions(ctx, start("Try again")));
    return section;
  }
  const job = v.job ?? null;
  section.dataset["verdict"] = jobState(job);
  if (job !== null && job.status === "COMPLETE" && job.verdict !== null) {
    section.append(...renderVerdict(ctx.doc, job, job.verdict));
  } else if (job !== null && isSettled(job)) {
    section.dataset["verdict"] = "failed";
    section.append(el(ctx, "p", job.failure === null ? "The verdict analysis failed." : `The verdict analysis failed: ${Array.from(job.failure).slice(0, 300).join("")}`, "bad"));
  } else {
    section.append(...renderProgress(ctx.doc, job));
  }
  if (ctx.verdictError !== undefined && (job === null || !isSettled(job))) {
    section.dataset["verdict"] = "error";
    section.append(el(ctx, "p", `Lost track of the verdict: ${ctx.verdictError}.`, "bad"), actions(ctx, start("Try again")));
  }
  return section;
}

export function renderState(ctx: PopupContext, state: TabState): HTMLElement[] {
  switch (state.kind) {
    case "idle":
      return [
        el(
          ctx,
          "p",
          ctx.feedSite === undefined
            ? "No supported post on this page."
            : `On ${ctx.feedSite}, use the Fact-check button under a post.`,
          "muted",
        ),
      ];
    case "skipped":
      return [postHeader(ctx, state), el(ctx, "p", SKIP_TITLES[state.reason], "headline")];
    case "unavailable":
      return [
        postHeader(ctx, state),
        el(ctx, "p", `The post could not be read on this page (${state.reason.replace(/_/g, " ")}).`),
        actions(ctx, button(ctx, "Try again", ctx.onRecheck, "secondary")),
      ];
    case "registering":
      return [postHeader(ctx, state), el(ctx, "p", "Checking this post…", "muted")];
    case "error":
      if (state.upgradeRequired !== undefined) {
        const minimum = state.upgradeRequired.minimumVersion;
        return [
          postHeader(ctx, state),
          el(ctx, "p", "Update required", "headline bad"),
          el(
            ctx,
            "p",
            `This version of the extension is too old for the Errata server${
              minimum === undefined ? "" : ` (it needs ${minimum} or later)`
            }. Please update the extension.`,
          ),
        ];
      }
      return [
        postHeader(ctx, state),
        el(ctx, "p", `Could not check this post: ${state.message}.`, "bad"),
        actions(ctx, button(ctx, "Try again", ctx.onRecheck, "secondary")),
      ];
    case "status":
      return [...renderStatus(ctx, state), verdictSection(ctx, state)];
  }
}
