// Messages between the content script, the background worker and the popup.
// Every message carries the protocol version so mismatched parts of an
// updating extension can tell.

import type { AdapterNotReadyReason } from "../content/adapters/model";
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
  | { v: 1; type: "PAGE_UNAVAILABLE"; platform: Platform; url: string; reason: AdapterNotReadyReason };

export type PopupMessage = { v: 1; type: "GET_TAB_STATE"; tabId: number };

/** Background to content script: the page changed without a reload (SPA navigation); read it again. */
export type BackgroundMessage = { v: 1; type: "RESCAN" };

export type GetTabStateResponse = { v: 1; state: TabState };

function hasType(message: unknown): message is { v: unknown; type: unknown } {
  return typeof message === "object" && message !== null && "v" in message && "type" in message;
}

const CONTENT_TYPES = new Set(["PAGE_CONTENT", "PAGE_SKIPPED", "PAGE_UNAVAILABLE"]);

export function isContentMessage(message: unknown): message is ContentMessage {
  return hasType(message) && message.v === MESSAGE_PROTOCOL_VERSION && CONTENT_TYPES.has(String(message.type));
}

export function isPopupMessage(message: unknown): message is PopupMessage {
  return (
    hasType(message) &&
    message.v === MESSAGE_PROTOCOL_VERSION &&
    message.type === "GET_TAB_STATE" &&
    typeof (message as { tabId?: unknown }).tabId === "number"
  );
}

export function isBackgroundMessage(message: unknown): message is BackgroundMessage {
  return hasType(message) && message.v === MESSAGE_PROTOCOL_VERSION && message.type === "RESCAN";
}
