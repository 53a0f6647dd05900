// The Wikipedia adapter on the saved rendered article pages: the text read
// from the live page must equal the server's text of the Parse API HTML of
// the same revision (golden.json), so both sides hash to the same version.

import { describe, expect, it } from "vitest";
import { wikipediaAdapter } from "../../src/content/adapters/wikipedia";
import { computeVersionIdentity, canonicalizeOccurrences } from "../../src/lib/hash";
import { htmlToNormalizedText } from "../../src/lib/dom-text";
import { utf16Length, utf8ByteLength, wordCount } from "../../src/lib/normalize";
import { MAX_OPTIONAL_HTML_BYTES, buildRegisterInput } from "../../src/lib/platform";
import { skipReasonFor } from "../../src/lib/skip";
import { blankDocument, domFor } from "../dom";
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
      // The pruned article (no styles, citation markers, navboxes or appendix
      // sections) fits under 256 KiB although the rendered one is 0.8-1.1 MB;
      // the server reads the same text from it.
      const html = content.metadata.htmlContent ?? "";
      expect(utf8ByteLength(html)).toBeGreaterThan(100_000);
      expect(utf8ByteLength(html)).toBeLessThanOrEqual(MAX_OPTIONAL_HTML_BYTES);
      expect(utf8ByteLength(wikipediaAdapter.getContentRoot(document)?.outerHTML ?? "")).toBeGreaterThan(800_000);
      expect(html).not.toMatch(/<style\b|<sup[^>]*class="[^"]*\breference\b|class="[^"]*\bnavbox\b|class="[^"]*\bmw-editsection\b/);
      expect(html).not.toMatch(/<h2[^>]*>(?:References|Sources|External links|Further reading|Notes|Citations|Bibliography)<\/h2>/);
      expect(htmlToNormalizedText(html, "WIKIPEDIA", blankDocument())).toBe(content.contentText);

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
