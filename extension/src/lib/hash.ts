// Version identity: contentHash, occurrencesHash and versionHash, computed
// exactly as the server does (events/content/occurrences.go, identity.go).
// SubtleCrypto is available in extension pages, content scripts, service
// workers and Node 20 alike.

import { utf16Length } from "./normalize";

/** One image's place in a post version (CONTRACT.md, registerObservedVersion input). */
export interface ImageOccurrence {
  /** 0-based position of the image among the post's images, in page order. */
  originalIndex: number;
  /** Offset into the normalized content text, in UTF-16 code units. */
  normalizedTextOffset: number;
  sourceUrl: string;
  captionText?: string;
}

export const MAX_IMAGE_OCCURRENCES = 256;

/** sha256("[]"): the occurrences hash of a version without images. */
export const EMPTY_OCCURRENCES_HASH = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945";

export class InvalidImageOccurrencesError extends Error {
  override name = "InvalidImageOccurrencesError";
}

function toHex(buffer: ArrayBuffer): string {
  let out = "";
  for (const byte of new Uint8Array(buffer)) {
    out += byte.toString(16).padStart(2, "0");
  }
  return out;
}

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (s === undefined) {
    throw new Error("SubtleCrypto is not available in this context");
  }
  return s;
}

// The UTF-8 bytes in a plain ArrayBuffer of their own (exactly the bytes, no
// shared or larger backing buffer).
function utf8(text: string): ArrayBuffer {
  const bytes = new TextEncoder().encode(text);
  const buffer = new ArrayBuffer(bytes.length);
  new Uint8Array(buffer).set(bytes);
  return buffer;
}

/** Lowercase hex SHA-256 of the UTF-8 bytes of text. */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(await subtle().digest("SHA-256", utf8(text)));
}

/** Lowercase hex HMAC-SHA256 of the UTF-8 bytes of message. */
export async function hmacSha256Hex(key: string, message: string): Promise<string> {
  const cryptoKey = await subtle().importKey("raw", utf8(key), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return toHex(await subtle().sign("HMAC", cryptoKey, utf8(message)));
}

function isAbsoluteHttpUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (url.protocol === "http:" || url.protocol === "https:") && url.host !== "";
  } catch {
    return false;
  }
}

/**
 * Validates occurrences against the text they were measured on and returns
 * them in canonical form: sorted by originalIndex, captions trimmed and
 * dropped when empty. Throws InvalidImageOccurrencesError on anything the
 * server would reject (gaps or repeats in originalIndex, offsets beyond the
 * text or going backwards, non-http(s) URLs, more than 256 entries).
 */
export function canonicalizeOccurrences(
  occurrences: readonly ImageOccurrence[],
  contentText: string,
): ImageOccurrence[] {
  if (occurrences.length > MAX_IMAGE_OCCURRENCES) {
    throw new InvalidImageOccurrencesError(`more than ${MAX_IMAGE_OCCURRENCES} image occurrences`);
  }
  occurrences.forEach((o, i) => {
    if (!Number.isInteger(o.originalIndex) || !Number.isInteger(o.normalizedTextOffset)) {
      throw new InvalidImageOccurrencesError(`entry ${i}: indexes must be integers`);
    }
    if (o.originalIndex < 0 || o.normalizedTextOffset < 0) {
      throw new InvalidImageOccurrencesError(`entry ${i}: indexes must be non-negative`);
    }
    if (!isAbsoluteHttpUrl(o.sourceUrl)) {
      throw new InvalidImageOccurrencesError(`entry ${i}: sourceUrl must be an absolute http(s) URL`);
    }
    if (o.captionText !== undefined && o.captionText.length === 0) {
      throw new InvalidImageOccurrencesError(`entry ${i}: captionText, when present, must be non-empty`);
    }
  });

  const sorted = [...occurrences].sort((a, b) => a.originalIndex - b.originalIndex);
  const length = utf16Length(contentText);
  return sorted.map((o, position) => {
    if (o.originalIndex !== position) {
      throw new InvalidImageOccurrencesError(`position ${position} has originalIndex ${o.originalIndex}`);
    }
    if (o.normalizedTextOffset > length) {
      throw new InvalidImageOccurrencesError(
        `originalIndex ${o.originalIndex}: offset ${o.normalizedTextOffset} exceeds text length ${length}`,
      );
    }
    const previous = sorted[position - 1];
    if (previous !== undefined && o.normalizedTextOffset < previous.normalizedTextOffset) {
      throw new InvalidImageOccurrencesError(`originalIndex ${o.originalIndex}: offset decreases`);
    }
    const canonical: ImageOccurrence = {
      originalIndex: o.originalIndex,
      normalizedTextOffset: o.normalizedTextOffset,
      sourceUrl: o.sourceUrl,
    };
    const caption = o.captionText?.trim();
    if (caption !== undefined && caption.length > 0) {
      canonical.captionText = caption;
    }
    return canonical;
  });
}

/**
 * The JSON the occurrences hash is taken over: keys in the order
 * originalIndex, normalizedTextOffset, sourceUrl, captionText, no spaces.
 * JSON.stringify never HTML-escapes, and object literal keys keep insertion
 * order, so building fresh objects in that order is enough.
 */
export function serializeOccurrences(occurrences: readonly ImageOccurrence[], contentText: string): string {
  const canonical = canonicalizeOccurrences(occurrences, contentText).map((o) =>
    o.captionText === undefined
      ? { originalIndex: o.originalIndex, normalizedTextOffset: o.normalizedTextOffset, sourceUrl: o.sourceUrl }
      : {
          originalIndex: o.originalIndex,
          normalizedTextOffset: o.normalizedTextOffset,
          sourceUrl: o.sourceUrl,
          captionText: o.captionText,
        },
  );
  return JSON.stringify(canonical);
}

export function versionHashSeed(contentHash: string, occurrencesHash: string): string {
  return `${contentHash}\n${occurrencesHash}`;
}

export interface VersionIdentity {
  contentHash: string;
  occurrencesSerialized: string;
  occurrencesHash: string;
  versionHash: string;
}

/** contentHash, occurrencesHash and versionHash of normalized text plus its image occurrences. */
export async function computeVersionIdentity(
  normalizedText: string,
  occurrences: readonly ImageOccurrence[] = [],
): Promise<VersionIdentity> {
  const occurrencesSerialized = serializeOccurrences(occurrences, normalizedText);
  const [contentHash, occurrencesHash] = await Promise.all([
    sha256Hex(normalizedText),
    sha256Hex(occurrencesSerialized),
  ]);
  return {
    contentHash,
    occurrencesSerialized,
    occurrencesHash,
    versionHash: await sha256Hex(versionHashSeed(contentHash, occurrencesHash)),
  };
}

/**
 * The stable serialization of what a client observed, text plus canonical
 * occurrences: {"contentText":...,"imageOccurrences":[...]}.
 */
export function serializeObservedVersionIdentity(
  contentText: string,
  occurrences: readonly ImageOccurrence[],
): string {
  return `{"contentText":${JSON.stringify(contentText)},"imageOccurrences":${serializeOccurrences(
    occurrences,
    contentText,
  )}}`;
}
