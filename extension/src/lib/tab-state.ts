// What the extension knows about the post open in a tab, as the background
// worker records it and the popup shows it.

import type { AdapterNotReadyReason } from "../content/adapters/model";
import type { Provenance, ViewStatus } from "./api-types";
import type { Platform } from "./platform";
import type { SkipReason } from "./skip";

interface PostRef {
  platform: Platform;
  url: string;
}

export type TabState =
  /** No supported post on this page (or nothing reported yet). */
  | { kind: "idle" }
  | (PostRef & { kind: "skipped"; reason: SkipReason })
  | (PostRef & { kind: "unavailable"; reason: AdapterNotReadyReason })
  | (PostRef & { kind: "registering"; externalId: string })
  | (PostRef & {
      kind: "status";
      externalId: string;
      postVersionId: string;
      versionHash: string;
      provenance: Provenance;
      status: ViewStatus;
    })
  | (PostRef & {
      kind: "error";
      /** What failed, worded for the user. */
      message: string;
      /** Set when the server refuses this extension version. */
      upgradeRequired?: { minimumVersion?: string };
    });

export interface Badge {
  text: string;
  color: string;
  title: string;
}

const RED = "#b3261e";
const GREY = "#5f6368";
const GREEN = "#1e7b34";

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
          return { text: "", color: GREY, title: "Errata: not investigated yet" };
        case "INVESTIGATING":
          return { text: "…", color: GREY, title: "Errata: investigation in progress" };
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
