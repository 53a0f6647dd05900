// The platform adapter interface (spec 3.8). An adapter recognises its pages
// (URL first, then an optional DOM fingerprint), reports private or gated
// views, and extracts the post once the page is ready.

import type { Platform, PlatformContent } from "../../lib/platform";

export type AdapterNotReadyReason =
  /** The page is still rendering; try again after the DOM changes. */
  | "hydrating"
  /** More than one candidate post body; extraction would be a guess. */
  | "ambiguous_dom"
  /** The page is of a kind the adapter does not handle (e.g. a Wikipedia talk page). */
  | "unsupported"
  /** The post's identity (id, author, page id) cannot be read. */
  | "missing_identity";

export type AdapterExtractionResult =
  | { kind: "ready"; content: PlatformContent }
  | { kind: "not_ready"; reason: AdapterNotReadyReason };

export interface PlatformAdapter {
  platformKey: Platform;
  contentRootSelector: string;
  matches(url: string): boolean;
  detectFromDom?(document: Document): boolean;
  detectPrivateOrGated?(document: Document): boolean;
  extract(document: Document): AdapterExtractionResult;
  getContentRoot(document: Document): Element | null;
}

export function notReady(reason: AdapterNotReadyReason): AdapterExtractionResult {
  return { kind: "not_ready", reason };
}
