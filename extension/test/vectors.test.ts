// Every vector of normalization-and-hash-vectors.json, computed with the
// reference implementation: normalization, HTML to text (LessWrong and
// Wikipedia paths), and version identity. Markdown is server-only.

import { describe, expect, it } from "vitest";
import { normalizeContent, utf16Length, wordCount } from "../src/lib/normalize";
import {
  EMPTY_OCCURRENCES_HASH,
  computeVersionIdentity,
  serializeObservedVersionIdentity,
  serializeOccurrences,
  sha256Hex,
  versionHashSeed,
} from "../src/lib/hash";
import { htmlToNormalizedText } from "../src/lib/dom-text";
import { loadHashVectors } from "./fixtures";
import { blankDocument } from "./dom";

const vectors = loadHashVectors();

describe("normalization vectors", () => {
  it("has vectors", () => {
    expect(vectors.normalization.length).toBeGreaterThan(0);
  });
  for (const [i, v] of vectors.normalization.entries()) {
    it(`#${i} ${JSON.stringify(v.input)}`, async () => {
      const out = normalizeContent(v.input);
      expect(out).toBe(v.output);
      expect(await sha256Hex(out)).toBe(v.outputSha256);
      expect(wordCount(out)).toBe(v.wordCount);
    });
  }
});

describe("HTML vectors", () => {
  it("has vectors", () => {
    expect(vectors.html.length).toBeGreaterThan(0);
  });
  for (const [i, v] of vectors.html.entries()) {
    it(`#${i} ${v.platform} ${JSON.stringify(v.input).slice(0, 80)}`, () => {
      expect(htmlToNormalizedText(v.input, v.platform, blankDocument())).toBe(v.normalizedText);
    });
  }
});

describe("version vectors", () => {
  it("empty occurrences", async () => {
    expect(vectors.emptyOccurrencesSerialized).toBe("[]");
    expect(serializeOccurrences([], "")).toBe(vectors.emptyOccurrencesSerialized);
    expect(await sha256Hex("[]")).toBe(vectors.emptyOccurrencesHash);
    expect(EMPTY_OCCURRENCES_HASH).toBe(vectors.emptyOccurrencesHash);
  });
  for (const [i, v] of vectors.version.entries()) {
    it(`#${i} ${JSON.stringify(v.contentText)}`, async () => {
      const id = await computeVersionIdentity(v.contentText, v.imageOccurrences);
      expect(id).toEqual({
        contentHash: v.contentHash,
        occurrencesSerialized: v.occurrencesSerialized,
        occurrencesHash: v.occurrencesHash,
        versionHash: v.versionHash,
      });
      expect(versionHashSeed(id.contentHash, id.occurrencesHash)).toBe(v.versionHashSeed);
      expect(wordCount(v.contentText)).toBe(v.wordCount);
      expect(utf16Length(v.contentText)).toBe(v.utf16Length);
    });
  }
  it("serializeObservedVersionIdentity example", () => {
    const matching = vectors.version.filter((v) =>
      vectors.serializeObservedVersionIdentityExample.includes(`"contentText":${JSON.stringify(v.contentText)}`),
    );
    expect(matching).toHaveLength(1);
    const v = matching[0]!;
    expect(serializeObservedVersionIdentity(v.contentText, v.imageOccurrences)).toBe(
      vectors.serializeObservedVersionIdentityExample,
    );
  });
});
