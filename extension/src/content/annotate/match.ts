// Claim-to-text matching (spec 2.4.1). The model quotes each claim verbatim
// with about ten words of context either side; offsets are never trusted.
// Three tiers, over the post's normalized text:
//   1. exact: the claim occurs exactly once;
//   2. context: it occurs several times; the occurrence whose surroundings
//      agree best with the claim's context wins;
//   3. fuzzy: no exact occurrence; the best approximate occurrence within a
//      bounded edit distance (about 15% of the claim's length) is taken.
// Fuzzy search never scans the whole text with dynamic programming: pieces
// of the claim that must occur exactly in any close-enough match (the
// pigeonhole principle) propose a few windows, and only those are aligned.

import { normalizeContent } from "../../lib/normalize";

export type MatchTier = "exact" | "context" | "fuzzy";

export interface TextMatch {
  start: number;
  end: number;
  tier: MatchTier;
  /** Edit distance between the claim and the matched text (0 unless fuzzy). */
  distance: number;
}

export interface ClaimText {
  text: string;
  context: string;
}

/** Claims shorter than this are never matched approximately (too easy to match by chance). */
export const MIN_FUZZY_LENGTH = 12;
/** The allowed edit distance, as a share of the claim's length... */
export const FUZZY_RATIO = 0.15;
/** ...and never more than this many edits. */
export const MAX_FUZZY_DISTANCE = 40;
/** Occurrences looked at per exact search (a claim repeated more often than this is hopeless anyway). */
const MAX_OCCURRENCES = 2000;
/** Candidate windows aligned per fuzzy search. */
const MAX_WINDOWS = 12;
/** Occurrences of one pigeonhole piece considered. */
const MAX_PIECE_HITS = 400;
/** Claims are cut to this length for fuzzy alignment (claims are sentences, not pages). */
const MAX_FUZZY_CLAIM = 600;

function occurrences(text: string, needle: string, limit = MAX_OCCURRENCES): number[] {
  const found: number[] = [];
  if (needle.length === 0) return found;
  let at = text.indexOf(needle);
  while (at >= 0 && found.length < limit) {
    found.push(at);
    at = text.indexOf(needle, at + 1);
  }
  return found;
}

function commonSuffix(a: string, aEnd: number, b: string): number {
  let n = 0;
  while (n < b.length && aEnd - 1 - n >= 0 && a.charCodeAt(aEnd - 1 - n) === b.charCodeAt(b.length - 1 - n)) n += 1;
  return n;
}

function commonPrefix(a: string, aStart: number, b: string): number {
  let n = 0;
  while (n < b.length && aStart + n < a.length && a.charCodeAt(aStart + n) === b.charCodeAt(n)) n += 1;
  return n;
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
}

/** How well the text around [start, end) agrees with the claim's context (higher is better). */
export function contextScore(text: string, start: number, end: number, claim: string, context: string): number {
  const at = context.indexOf(claim);
  if (at >= 0) {
    const before = context.slice(0, at);
    const after = context.slice(at + claim.length);
    return commonSuffix(text, start, before) + commonPrefix(text, end, after);
  }
  // The context does not quote the claim verbatim: compare the words around.
  const span = Math.max(context.length, 60);
  const around = words(text.slice(Math.max(0, start - span), Math.min(text.length, end + span)));
  const have = new Map<string, number>();
  for (const w of around) have.set(w, (have.get(w) ?? 0) + 1);
  let score = 0;
  for (const w of words(context)) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      score += 1;
      have.set(w, n - 1);
    }
  }
  return score;
}

interface Alignment {
  start: number;
  end: number;
  distance: number;
}

/**
 * Semi-global edit distance (Sellers): the best alignment of the whole
 * pattern against any substring of text[from, to). Two rows, with the start
 * of each cell's alignment carried along. The window is small (about the
 * claim's length plus slack), so the quadratic cost stays bounded.
 */
export function alignInWindow(text: string, from: number, to: number, pattern: string, bound: number): Alignment | null {
  const m = pattern.length;
  let prev = new Int32Array(m + 1);
  let cur = new Int32Array(m + 1);
  let prevStart = new Int32Array(m + 1);
  let curStart = new Int32Array(m + 1);
  for (let i = 0; i <= m; i += 1) {
    prev[i] = i;
    prevStart[i] = from;
  }
  let best: Alignment | null = null;
  for (let j = from; j < to; j += 1) {
    const t = text.charCodeAt(j);
    cur[0] = 0;
    curStart[0] = j + 1;
    for (let i = 1; i <= m; i += 1) {
      const diagonal = (prev[i - 1] ?? 0) + (pattern.charCodeAt(i - 1) === t ? 0 : 1);
      const up = (cur[i - 1] ?? 0) + 1; // pattern char unmatched
      const left = (prev[i] ?? 0) + 1; // text char unmatched
      let value = diagonal;
      let start = prevStart[i - 1] ?? from;
      if (left < value) {
        value = left;
        start = prevStart[i] ?? from;
      }
      if (up < value) {
        value = up;
        start = curStart[i - 1] ?? from;
      }
      cur[i] = value;
      curStart[i] = start;
    }
    const distance = cur[m] ?? m;
    if (distance <= bound && (best === null || distance < best.distance)) {
      best = { start: curStart[m] ?? from, end: j + 1, distance };
    }
    [prev, cur] = [cur, prev];
    [prevStart, curStart] = [curStart, prevStart];
  }
  return best;
}

/** The edit distance a claim of this length may be matched with. */
export function fuzzyBound(length: number): number {
  return Math.min(MAX_FUZZY_DISTANCE, Math.max(1, Math.floor(length * FUZZY_RATIO)));
}

/** Approximate search: pigeonhole candidates, then alignment in the best-supported windows. */
export function fuzzyFind(text: string, claim: string, context: string): TextMatch | null {
  const pattern = claim.length > MAX_FUZZY_CLAIM ? claim.slice(0, MAX_FUZZY_CLAIM) : claim;
  const m = pattern.length;
  if (m < MIN_FUZZY_LENGTH) return null;
  const bound = fuzzyBound(m);
  const pieces = bound + 1;
  const pieceLength = Math.floor(m / pieces);
  if (pieceLength < 3) return null;

  // Votes per diagonal (where the claim would start), bucketed so that
  // insertions and deletions between pieces still vote together.
  const bucket = Math.max(8, bound);
  const votes = new Map<number, number>();
  for (let p = 0; p < pieces; p += 1) {
    const offset = p * pieceLength;
    const piece = pattern.slice(offset, p === pieces - 1 ? m : offset + pieceLength);
    const hits = occurrences(text, piece, MAX_PIECE_HITS + 1);
    if (hits.length > MAX_PIECE_HITS) continue; // too common to say anything
    for (const hit of hits) {
      const key = Math.floor((hit - offset) / bucket);
      votes.set(key, (votes.get(key) ?? 0) + 1);
    }
  }
  if (votes.size === 0) return null;
  const ranked = [...votes.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, MAX_WINDOWS);

  let best: (Alignment & { score: number }) | null = null;
  for (const [key] of ranked) {
    const diagonal = key * bucket;
    const from = Math.max(0, diagonal - bound - bucket);
    const to = Math.min(text.length, diagonal + m + bound + 2 * bucket);
    const found = alignInWindow(text, from, to, pattern, bound);
    if (found === null || found.end <= found.start) continue;
    if (best !== null && found.distance > best.distance) continue;
    const score = contextScore(text, found.start, found.end, claim, context);
    if (best === null || found.distance < best.distance || score > best.score) best = { ...found, score };
  }
  if (best === null) return null;
  let end = best.end;
  if (pattern.length < claim.length) end = Math.min(text.length, best.start + claim.length + (best.end - best.start - m));
  return { start: best.start, end, tier: "fuzzy", distance: best.distance };
}

/** Finds a claim in the normalized text of a post, or null when no tier matches. */
export function findClaim(text: string, claim: ClaimText): TextMatch | null {
  const needle = normalizeContent(claim.text);
  if (needle.length === 0) return null;
  const context = normalizeContent(claim.context);
  const hits = occurrences(text, needle);
  if (hits.length === 1) {
    const start = hits[0] ?? 0;
    return { start, end: start + needle.length, tier: "exact", distance: 0 };
  }
  if (hits.length > 1) {
    let best = hits[0] ?? 0;
    let bestScore = -1;
    for (const hit of hits) {
      const score = contextScore(text, hit, hit + needle.length, needle, context);
      if (score > bestScore) {
        best = hit;
        bestScore = score;
      }
    }
    return { start: best, end: best + needle.length, tier: "context", distance: 0 };
  }
  return fuzzyFind(text, needle, context);
}
