// Canonical text shared by the extension and the API. The SHA-256 of the
// result is a post's content hash, so every step below must agree with the
// server (events/content/normalize.go) character for character; see
// ../../shared/CONTRACT.md, "Text, offsets and hashes".

/** Posts above this many words are skipped in the browser and never investigated. */
export const WORD_COUNT_LIMIT = 10_000;

/** The most UTF-16 code units (and UTF-8 bytes) of observed text the API accepts. */
export const MAX_OBSERVED_TEXT_UNITS = 500_000;

// Typographic characters folded to ASCII, applied in this order after NFC.
const DOUBLE_QUOTES = /[\u201C\u201D]/g;
const SINGLE_QUOTES = /[\u2018\u2019]/g;
const DASHES = /[\u2010-\u2015]/g;
const ELLIPSIS = /\u2026/g;
// Deleted outright (before whitespace collapsing, so they never separate words).
const ZERO_WIDTH = /[\u200B-\u200D\uFEFF]/g;
// JavaScript's \s is exactly the whitespace set of the contract (it includes
// U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and
// U+FEFF, but not U+0085 or U+180E), so the native class is used on purpose.
const WHITESPACE_RUN = /\s+/g;

/** normalizeContent: the canonical form of observed or extracted text. */
export function normalizeContent(raw: string): string {
  return raw
    .normalize("NFC")
    .replace(DOUBLE_QUOTES, '"')
    .replace(SINGLE_QUOTES, "'")
    .replace(DASHES, "-")
    .replace(ELLIPSIS, "...")
    .replace(ZERO_WIDTH, "")
    .replace(WHITESPACE_RUN, " ")
    .trim();
}

/** Whitespace-delimited words, counted the way the server counts them. */
export function wordCount(text: string): number {
  let count = 0;
  for (const word of text.split(/\s+/)) {
    if (word.length > 0) count += 1;
  }
  return count;
}

/** Length in UTF-16 code units: the unit of every offset and length limit on the wire. */
export function utf16Length(text: string): number {
  return text.length;
}

/** Length in UTF-8 bytes (request bodies and text limits are measured in bytes too). */
export function utf8ByteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}
