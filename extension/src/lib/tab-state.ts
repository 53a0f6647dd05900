// What the extension knows about the post open in a tab, as the background
// worker records it and the popup shows it.

import type { AdapterNotReadyReason } from "../content/adapters/model";
import type { Claim, Provenance, VerdictJob, ViewStatus } from "./api-types";
import type { Platform } from "./platform";
import type { SkipReason } from "./skip";

interface PostRef {
  platform: Platform;
  url: string;
  /** A short human name of the post (title, or @handle on X), when the page gave one. */
  title?: string;
}

/** The investigation failed (getInvestigation or investigateNow said so). */
export interface FailedStatus {
  investigationState: "FAILED";
  provenance: Provenance;
}

/** The status of the version on the page: the view path's answer, then whatever polling learned. */
export type PostStatus = ViewStatus | FailedStatus;

/** Which claims of a completed investigation the content script could place on the page. */
export interface Anchoring {
  anchored: string[];
  unanchored: string[];
  /** Claims withdrawn after an appeal (no longer highlighted; the server leaves them out from now on). */
  withdrawn?: string[];
}

/** The popup's "Verdict for this post": the verdict analysis of the version in the tab. */
export interface TabVerdict {
  /** verdict.request is in flight. */
  requesting?: boolean;
  /** Set once verdict.request answered (or a cached id for this version was found). */
  analysisId?: string;
  /** The latest verdict.get answer. */
  job?: VerdictJob;
  /** verdict.request failed; worded for the user. */
  error?: string;
}

export interface StatusState extends PostRef {
  kind: "status";
  externalId: string;
  postVersionId: string;
  versionHash: string;
  provenance: Provenance;
  status: PostStatus;
  /** Set once investigateNow answered (or a cached id for this version was found). */
  investigationId?: string;
  /** When the server last looked at the investigation (getInvestigation's checkedAt). */
  checkedAt?: string;
  /** investigateNow is in flight (a click or auto-investigate). */
  requesting?: boolean;
  /** The last Investigate Now or polling attempt went wrong; worded for the user. */
  requestError?: string;
  /** The investigation was requested automatically (user key + auto-investigate). */
  autoInvestigated?: boolean;
  /** Reported by the content script once it has tried to anchor the claims. */
  anchoring?: Anchoring;
  verdict?: TabVerdict;
}

export type TabState =
  /** No supported post on this page (or nothing reported yet). */
  | { kind: "idle" }
  | (PostRef & { kind: "skipped"; reason: SkipReason })
  | (PostRef & { kind: "unavailable"; reason: AdapterNotReadyReason })
  | (PostRef & { kind: "registering"; externalId: string })
  | StatusState
  | (PostRef & {
      kind: "error";
      /** What failed, worded for the user. */
      message: string;
      /** Set when the server refuses this extension version. */
      upgradeRequired?: { minimumVersion?: string };
    });

/** The claims drawn on the page for a state: only a completed investigation's (CONTRACT.md). */
export function claimsToDraw(state: TabState): Claim[] {
  return state.kind === "status" && state.status.investigationState === "INVESTIGATED" ? state.status.claims : [];
}

export interface Badge {
  text: string;
  color: string;
  title: string;
}

const RED = "#b3261e";
const GREY = "#5f6368";
const GREEN = "#1e7b34";
const AMBER = "#9a5b00";

const SKIP_TITLES: Record<SkipReason, string> = {
  has_video: "Skipped: posts with video or audio are not checked",
  word_count: "Skipped: longer than 10,000 words",
  no_text: "Skipped: no text to check",
  private_or_gated: "Skipped: private or subscriber-only",
  unsupported_content: "Skipped: this kind of page is not supported",
};

/** The toolbar badge for a tab's state. */
export function badgeFor(state: TabState): Badge {
  switch (state.kind) {
    case "idle":
      return { text: "", color: GREY, title: "Errata" };
    case "skipped":
      return { text: "", color: GREY, title: `Errata: ${SKIP_TITLES[state.reason]}` };
    case "unavailable":
      return { text: "", color: GREY, title: "Errata: the post could not be read on this page" };
    case "registering":
      return { text: "…", color: GREY, title: "Errata: checking this post" };
    case "error":
      return state.upgradeRequired !== undefined
        ? { text: "!", color: RED, title: "Errata: this extension version is too old for the server; please update" }
        : { text: "!", color: RED, title: `Errata: ${state.message}` };
    case "status":
      switch (state.status.investigationState) {
        case "NOT_INVESTIGATED":
          return state.requesting === true
            ? { text: "…", color: GREY, title: "Errata: requesting an investigation" }
            : { text: "", color: GREY, title: "Errata: not investigated yet" };
        case "INVESTIGATING":
          return { text: "…", color: GREY, title: "Errata: investigation in progress" };
        case "FAILED":
          return { text: "×", color: AMBER, title: "Errata: the investigation failed" };
        case "INVESTIGATED": {
          const n = state.status.claims.length;
          return n === 0
            ? { text: "✓", color: GREEN, title: "Errata: no incorrect claims found" }
            : { text: String(n), color: RED, title: `Errata: ${n} incorrect claim${n === 1 ? "" : "s"} found` };
        }
      }
  }
}

export { SKIP_TITLES };
