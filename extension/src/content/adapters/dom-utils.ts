// Small DOM helpers shared by the adapters.

import type { MediaState } from "../../lib/platform";

/** Elements that make a post has_video: any video, audio or embedded frame. */
export const MEDIA_SELECTOR = [
  "video",
  "audio",
  "iframe",
  "source[type^='video/']",
  "source[type^='audio/']",
].join(", ");

/** The page's URL (adapters take the document, never the global window, so tests can hand them any page). */
export function documentUrl(document: Document): string {
  return document.location?.href ?? document.URL;
}

/** has_video wins over images, images over plain text (spec 3.8). */
export function mediaStateOf(hasVideo: boolean, imageUrls: readonly string[]): MediaState {
  if (hasVideo) return "has_video";
  return imageUrls.length > 0 ? "has_images" : "text_only";
}

export function metaContent(document: Document, selector: string): string | null {
  const value = document.querySelector(selector)?.getAttribute("content")?.trim();
  return value === undefined || value.length === 0 ? null : value;
}

/** An ISO-8601 UTC timestamp ending in Z for a parsable date, else null. */
export function toIsoTimestamp(value: string | null | undefined): string | null {
  if (value === null || value === undefined || value.trim().length === 0) return null;
  const time = Date.parse(value.trim());
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

/** The first parsable date among the given meta tags. */
export function firstMetaDate(document: Document, selectors: readonly string[]): string | null {
  for (const selector of selectors) {
    const iso = toIsoTimestamp(metaContent(document, selector));
    if (iso !== null) return iso;
  }
  return null;
}

/** The first parsable <time datetime> inside the given scopes, in order. */
export function firstTimeElementDate(scopes: ReadonlyArray<ParentNode>): string | null {
  for (const scope of scopes) {
    const iso = toIsoTimestamp(scope.querySelector("time[datetime]")?.getAttribute("datetime"));
    if (iso !== null) return iso;
  }
  return null;
}

/** Parsed JSON-LD blocks of the document (malformed ones are ignored). */
export function jsonLdBlocks(scope: ParentNode): unknown[] {
  const blocks: unknown[] = [];
  for (const script of Array.from(scope.querySelectorAll('script[type="application/ld+json"]'))) {
    const text = script.textContent?.trim() ?? "";
    if (text.length === 0) continue;
    try {
      blocks.push(JSON.parse(text) as unknown);
    } catch {
      // A page's broken JSON-LD is not our concern.
    }
  }
  return blocks;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Depth-first search through JSON-LD for the first string value under one of the keys. */
export function findJsonLdString(value: unknown, keys: readonly string[], depth = 0): string | null {
  if (depth > 8) return null;
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findJsonLdString(item, keys, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  if (!isRecord(value)) return null;
  for (const key of keys) {
    const direct = value[key];
    if (typeof direct === "string" && direct.length > 0) return direct;
  }
  for (const nested of Object.values(value)) {
    const found = findJsonLdString(nested, keys, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** A count such as "1,234" or "1234" from text; null when there is none. Abbreviated counts ("1.2K") are not exact, so they give null. */
export function parseExactCount(text: string | null | undefined): number | null {
  const match = /^\s*(\d{1,3}(?:,\d{3})+|\d+)(?![\d.,]*[KkMmBb])/.exec(text ?? "");
  if (match?.[1] === undefined) return null;
  const n = Number(match[1].replace(/,/g, ""));
  return Number.isSafeInteger(n) ? n : null;
}
