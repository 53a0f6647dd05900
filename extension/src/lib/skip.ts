// Which extracted posts the browser never sends (spec 3.8, "All skip reasons";
// CONTRACT.md, "What the reference client never sends").

import { WORD_COUNT_LIMIT, wordCount } from "./normalize";
import type { PlatformContent } from "./platform";

export type SkipReason = "has_video" | "word_count" | "no_text" | "private_or_gated" | "unsupported_content";

export const SKIP_REASONS: readonly SkipReason[] = [
  "has_video",
  "word_count",
  "no_text",
  "private_or_gated",
  "unsupported_content",
];

/**
 * The reason extracted content must not be sent, or null when it may be.
 * (private_or_gated and unsupported_content are decided before extraction.)
 */
export function skipReasonFor(content: PlatformContent): SkipReason | null {
  if (content.mediaState === "has_video") return "has_video";
  if (content.contentText.length === 0) return "no_text";
  if (wordCount(content.contentText) > WORD_COUNT_LIMIT) return "word_count";
  return null;
}
