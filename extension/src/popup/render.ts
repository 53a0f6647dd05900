// The popup's view of a tab's state, as plain DOM (no innerHTML). Kept apart
// from the page wiring so every state can be rendered in tests.

import type { Claim, ClaimPayload, PriorInvestigationResult } from "../lib/api-types";
import { renderMarkdown, safeLinkUrl } from "../lib/markdown";
import { SKIP_TITLES, type StatusState, type TabState } from "../lib/tab-state";

const PLATFORM_NAMES = { LESSWRONG: "LessWrong", X: "X", SUBSTACK: "Substack", WIKIPEDIA: "Wikipedia" } as const;

export interface PopupContext {
  doc: Document;
  /** An instance key or an OpenAI key is set (Investigate Now can be authorized). */
  hasCredentials: boolean;
  onInvestigate(): void;
  onRecheck(): void;
  onFocusClaim(claimId: string): void;
  onOpenSettings(): void;
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
          return state.status.claims.length === 0 ? "clean" : "incorrect-claims";
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
  box.append(el(ctx, "p", `${PLATFORM_NAMES[state.platform]} · ${state.url}`, "url muted"));
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
      if (anchoring?.anchored.includes(claim.id) === true) {
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
      const out: HTMLElement[] = [post, el(ctx, "p", "Not yet investigated.", "headline"), ...priorNote(ctx, s.priorInvestigationResult)];
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
      const n = s.claims.length;
      if (n === 0) return [post, el(ctx, "p", "No issues found.", "headline good")];
      const out: HTMLElement[] = [
        post,
        el(ctx, "p", `${n} incorrect claim${n === 1 ? "" : "s"} found`, "headline bad"),
        claimList(ctx, s.claims, state),
      ];
      const missing = state.anchoring?.unanchored.length ?? 0;
      if (missing > 0) {
        out.push(el(ctx, "p", `${missing} of them could not be placed in the page and ${missing === 1 ? "is" : "are"} listed here only.`, "muted"));
      }
      return out;
    }
  }
}

export function renderState(ctx: PopupContext, state: TabState): HTMLElement[] {
  switch (state.kind) {
    case "idle":
      return [el(ctx, "p", "No supported post on this page.", "muted")];
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
      return renderStatus(ctx, state);
  }
}
