// Every fixture of golden.json: the saved real LessWrong and Wikipedia pages
// give the reference's normalized text, hashes, word count and UTF-16 length.
// (Markdown is server-only and not checked here.)

import { describe, expect, it } from "vitest";
import { htmlToNormalizedText } from "../src/lib/dom-text";
import { computeVersionIdentity, sha256Hex, versionHashSeed } from "../src/lib/hash";
import { utf16Length, wordCount } from "../src/lib/normalize";
import { blankDocument } from "./dom";
import { loadGolden, loadPage, readSharedFixture } from "./fixtures";

const golden = loadGolden();

describe("golden.json", () => {
  it("lists the three saved pages", () => {
    expect(golden.map((g) => g.fixture).sort()).toEqual([
      "view-post-lesswrong-observed-html-1.json",
      "wikipedia-albert-einstein-page-html-1.json",
      "wikipedia-climate-change-page-html-1.json",
    ]);
  });

  for (const g of golden) {
    it(`${g.fixture} (${g.inputField})`, async () => {
      const page = loadPage(g.fixture);
      const input = page[g.inputField];
      expect(typeof input).toBe("string");
      if (input === undefined) return;
      expect(await sha256Hex(input)).toBe(g.inputSha256);

      const text = htmlToNormalizedText(input, g.platform, blankDocument());
      const expected = readSharedFixture(g.normalizedTextFile);
      // Compare lengths first: a diff of 100 KB strings is unreadable.
      expect(utf16Length(text)).toBe(g.utf16Length);
      expect(text).toBe(expected);
      expect(wordCount(text)).toBe(g.wordCount);

      const id = await computeVersionIdentity(text, []);
      expect(id.contentHash).toBe(g.contentHash);
      expect(id.occurrencesSerialized).toBe(g.occurrencesSerialized);
      expect(id.occurrencesHash).toBe(g.occurrencesHash);
      expect(versionHashSeed(id.contentHash, id.occurrencesHash)).toBe(g.versionHashSeed);
      expect(id.versionHash).toBe(g.versionHash);
    });
  }
});
