// Messages between the content script, the background worker and the popup.
// Every message carries the protocol version so mismatched parts of an
// updating extension can tell.

import type { AdapterNotReadyReason } from "../content/adapters/model";
import type { AnalysisStatus, Claim, VerdictJob } from "./api-types";
import type { AppealRecord, AppealRole } from "./appeals";
import type { Platform, PlatformContent } from "./platform";
import type { SkipReason } from "./skip";
import type { TabState } from "./tab-state";

export const MESSAGE_PROTOCOL_VERSION = 1;

export type ContentMessage =
  /** A supported post was read and may be sent to the API. */
  | { v: 1; type: "PAGE_CONTENT"; content: PlatformContent }
  /** A supported page that must not be sent (spec 3.8 skip reasons). */
  | { v: 1; type: "PAGE_SKIPPED"; platform: Platform; url: string; reason: SkipReason }
  /** The page never became readable before the content script gave up. */
  | { v: 1; type: "PAGE_UNAVAILABLE"; platform: Platform; url: string; reason: AdapterNotReadyReason }
  /** Which of the drawn claims could be placed on the page (ids), after each anchoring pass. */
  | { v: 1; type: "CLAIMS_ANCHORED"; url: string; anchored: string[]; unanchored: string[]; withdrawn?: string[] };

export type PopupMessage =
  | { v: 1; type: "GET_TAB_STATE"; tabId: number }
  /** The user pressed Investigate Now (or Retry after a failure). */
  | { v: 1; type: "INVESTIGATE_NOW"; tabId: number }
  /** Read the page again and ask the server afresh (after an error, or to refresh a running investigation). */
  | { v: 1; type: "RECHECK"; tabId: number };

/** Background or popup to content script. */
export type BackgroundMessage =
  /** The page changed without a reload (SPA navigation); read it again. */
  | { v: 1; type: "RESCAN" }
  /** Draw these claims (an empty list removes every annotation). */
  | { v: 1; type: "SHOW_CLAIMS"; url: string; claims: Claim[]; visible: boolean }
  /** Show or hide the annotations without forgetting them. */
  | { v: 1; type: "SET_VISIBILITY"; visible: boolean }
  /** Scroll to a claim and open its details. */
  | { v: 1; type: "FOCUS_CLAIM"; claimId: string };

export type GetTabStateResponse = { v: 1; state: TabState };

/**
 * Verdict analyses (issue 15), answered through sendResponse: the content
 * script (the Fact-check button on Bluesky and Threads) and the popup
 * ("Verdict for this post") ask; the background worker calls the API.
 */
export type VerdictMessage =
  /** Register this post and request its verdict analysis (the content script, for a post it read). */
  | { v: 1; type: "VERDICT_START"; content: PlatformContent }
  /** Read an analysis's job once; with tabId, the tab's state records it (the popup). */
  | { v: 1; type: "VERDICT_GET"; analysisId: string; tabId?: number }
  /** Request the verdict analysis of the post the tab shows (the popup's "Verdict for this post"). */
  | { v: 1; type: "VERDICT_FOR_TAB"; tabId: number };

export type VerdictStartResponse =
  | { v: 1; ok: true; analysisId: string; status: AnalysisStatus; postVersionId: string }
  | { v: 1; ok: false; error: string };

export type VerdictGetResponse = { v: 1; ok: true; job: VerdictJob } | { v: 1; ok: false; error: string; permanent: boolean };

/**
 * Appeals of published claims (issue 18), answered through sendResponse:
 * the claim panel asks, the background worker calls appeal.* and remembers
 * each claim's appeal in storage.local.
 */
export type AppealMessage =
  /** File an appeal of a claim (the form's values, checked again by the background). */
  | { v: 1; type: "APPEAL_FILE"; claimId: string; role: AppealRole; reason: string; urls: string[] }
  /** Read a claim's appeal once and remember the answer. */
  | { v: 1; type: "APPEAL_GET"; claimId: string; appealId: string }
  /** The remembered appeals of these claims. */
  | { v: 1; type: "APPEAL_STATES"; claimIds: string[] };

export type AppealFileResponse =
  | { v: 1; ok: true; record: AppealRecord; duplicate: boolean }
  | { v: 1; ok: false; error: string; retryAfterSeconds?: number };

export type AppealGetResponse = { v: 1; ok: true; record: AppealRecord } | { v: 1; ok: false; error: string; permanent: boolean };

export type AppealStatesResponse = { v: 1; records: AppealRecord[] };

function hasType(message: unknown): message is { v: unknown; type: unknown } {
  return typeof message === "object" && message !== null && "v" in message && "type" in message;
}

const CONTENT_TYPES = new Set(["PAGE_CONTENT", "PAGE_SKIPPED", "PAGE_UNAVAILABLE", "CLAIMS_ANCHORED"]);
const POPUP_TYPES = new Set(["GET_TAB_STATE", "INVESTIGATE_NOW", "RECHECK"]);
const VERDICT_TYPES = new Set(["VERDICT_START", "VERDICT_GET", "VERDICT_FOR_TAB"]);
const APPEAL_TYPES = new Set(["APPEAL_FILE", "APPEAL_GET", "APPEAL_STATES"]);
const BACKGROUND_TYPES = new Set(["RESCAN", "SHOW_CLAIMS", "SET_VISIBILITY", "FOCUS_CLAIM"]);

export function isContentMessage(message: unknown): message is ContentMessage {
  return hasType(message) && message.v === MESSAGE_PROTOCOL_VERSION && CONTENT_TYPES.has(String(message.type));
}

export function isPopupMessage(message: unknown): message is PopupMessage {
  return (
    hasType(message) &&
    message.v === MESSAGE_PROTOCOL_VERSION &&
    POPUP_TYPES.has(String(message.type)) &&
    typeof (message as { tabId?: unknown }).tabId === "number"
  );
}

export function isVerdictMessage(message: unknown): message is VerdictMessage {
  if (!hasType(message) || message.v !== MESSAGE_PROTOCOL_VERSION || !VERDICT_TYPES.has(String(message.type))) return false;
  const m = message as Record<string, unknown>;
  switch (m["type"]) {
    case "VERDICT_START":
      return typeof m["content"] === "object" && m["content"] !== null;
    case "VERDICT_GET":
      return typeof m["analysisId"] === "string" && (m["tabId"] === undefined || typeof m["tabId"] === "number");
    default:
      return typeof m["tabId"] === "number";
  }
}

/** Only the shape; the background checks the appeal itself (checkAppealInput) before sending it. */
export function isAppealMessage(message: unknown): message is AppealMessage {
  if (!hasType(message) || message.v !== MESSAGE_PROTOCOL_VERSION || !APPEAL_TYPES.has(String(message.type))) return false;
  const m = message as Record<string, unknown>;
  switch (m["type"]) {
    case "APPEAL_FILE":
      return typeof m["claimId"] === "string" && typeof m["reason"] === "string" && Array.isArray(m["urls"]);
    case "APPEAL_GET":
      return typeof m["claimId"] === "string" && typeof m["appealId"] === "string";
    default:
      return Array.isArray(m["claimIds"]) && m["claimIds"].length <= 500 && m["claimIds"].every((id) => typeof id === "string");
  }
}

export function isBackgroundMessage(message: unknown): message is BackgroundMessage {
  if (!hasType(message) || message.v !== MESSAGE_PROTOCOL_VERSION || !BACKGROUND_TYPES.has(String(message.type))) {
    return false;
  }
  const m = message as Record<string, unknown>;
  switch (m["type"]) {
    case "SHOW_CLAIMS":
      return Array.isArray(m["claims"]) && typeof m["visible"] === "boolean" && typeof m["url"] === "string";
    case "SET_VISIBILITY":
      return typeof m["visible"] === "boolean";
    case "FOCUS_CLAIM":
      return typeof m["claimId"] === "string";
    default:
      return true;
  }
}
