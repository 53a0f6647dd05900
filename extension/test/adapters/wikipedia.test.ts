// The Wikipedia adapter on the saved rendered article pages: the text read
// from the live page must equal the server's text of the Parse API HTML of
// the same revision (golden.json), so both sides hash to the same version.

import { describe, expect, it } from "vitest";
import { wikipediaAdapter } from "../../src/content/adapters/wikipedia";
import { computeVersionIdentity, canonicalizeOccurrences } from "../../src/lib/hash";
import { utf16Length, wordCount } from "../../src/lib/normalize";
import { buildRegisterInput } from "../../src/lib/platform";
import { skipReasonFor } from "../../src/lib/skip";
import { domFor } from "../dom";
import { loadGolden, loadPage, readSharedFixture } from "../fixtures";

const wikipediaGolden = loadGolden().filter((g) => g.platform === "WIKIPEDIA");

describe("wikipedia adapter on saved pages", () => {
  it("covers both saved articles", () => {
    expect(wikipediaGolden).toHaveLength(2);
  });

  for (const g of wikipediaGolden) {
    it(`${g.fixture}: rendered page text = server text of the Parse API HTML`, async () => {
      const page = loadPage(g.fixture);
      expect(g.sourceUrl).toBe(page.sourceUrl);
      const document = domFor(page.html, g.sourceUrl);
      expect(wikipediaAdapter.matches(document.URL)).toBe(true);

      const result = wikipediaAdapter.extract(document);
      if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
      const content = result.content;
      if (content.platform !== "WIKIPEDIA") throw new Error("wrong platform");

      expect(utf16Length(content.contentText)).toBe(g.utf16Length);
      expect(content.contentText).toBe(readSharedFixture(g.normalizedTextFile));
      expect(wordCount(content.contentText)).toBe(g.wordCount);
      const textOnly = await computeVersionIdentity(content.contentText, []);
      expect(textOnly.contentHash).toBe(g.contentHash);
      expect(textOnly.versionHash).toBe(g.versionHash);

      // Identity: the server derives externalId "{lang}:{pageId}" itself.
      expect(content.externalId).toBe(g.externalId);
      expect(content.metadata).toMatchObject({
        language: "en",
        title: g.sourceUrl?.split("/wiki/")[1],
        pageId: g.pageId,
        revisionId: g.revisionId,
      });
      expect(content.metadata.displayTitle).toBe(g.sourceUrl?.split("/wiki/")[1]?.replace(/_/g, " "));
      // Far above 256 KiB, so the optional HTML stays home.
      expect(content.metadata.htmlContent).toBeUndefined();

      // Images: valid occurrences on this very text (the server re-checks them).
      expect(content.imageOccurrences.length).toBeGreaterThan(0);
      expect(() => canonicalizeOccurrences(content.imageOccurrences, content.contentText)).not.toThrow();
      expect(new Set(content.imageUrls).size).toBe(content.imageUrls.length);
      for (const u of content.imageUrls) expect(u).toMatch(/^https:\/\/upload\.wikimedia\.org\//);

      const input = buildRegisterInput(content);
      expect(input).not.toHaveProperty("externalId");
      expect(input).toMatchObject({ platform: "WIKIPEDIA", url: g.sourceUrl, observedContentText: content.contentText });

      // Both saved articles carry audio (pronunciation, media players) and are
      // over 10,000 words, so the browser skips them: they never reach the API.
      expect(content.mediaState).toBe("has_video");
      expect(skipReasonFor(content)).toBe("has_video");
      expect(skipReasonFor({ ...content, mediaState: "has_images" })).toBe("word_count");
    });
  }
});
