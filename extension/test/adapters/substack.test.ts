import { describe, expect, it } from "vitest";
import { selectAdapter } from "../../src/content/adapters";
import { substackAdapter } from "../../src/content/adapters/substack";
import { htmlToNormalizedText } from "../../src/lib/dom-text";
import { canonicalizeOccurrences } from "../../src/lib/hash";
import { buildRegisterInput } from "../../src/lib/platform";
import { skipReasonFor } from "../../src/lib/skip";
import { blankDocument, domFor } from "../dom";
import { readLocalFixture } from "../fixtures";

const POST_URL = "https://enginesweekly.substack.com/p/on-difference-engines";
const CUSTOM_URL = "https://www.enginesweekly.example/p/on-difference-engines";
const TEXT =
  "The Difference Engine computes tables of polynomials by the method of finite differences. " +
  "Babbage's Difference Engine No. 1, fragment " +
  "The Analytical Engine, by contrast, was designed to be programmable with punched cards - an idea borrowed from Jacquard. " +
  "Notes on the design Store: 1,000 numbers of 40 digits. Mill: the arithmetic unit. " +
  '"It weaves algebraical patterns." Mention of Mary Somerville, who introduced us.';
const IMAGE = "https://substack-post-media.s3.amazonaws.com/public/images/engine.png";

describe("Substack adapter", () => {
  it("extracts a post on a substack.com subdomain", () => {
    expect(substackAdapter.matches(POST_URL)).toBe(true);
    expect(substackAdapter.matches("https://enginesweekly.substack.com/archive")).toBe(false);
    expect(substackAdapter.matches("https://substack.com/p/x")).toBe(false);
    const document = domFor(readLocalFixture("substack-post.html"), POST_URL);
    expect(substackAdapter.detectPrivateOrGated?.(document)).toBe(false);
    const result = substackAdapter.extract(document);
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    const content = result.content;
    if (content.platform !== "SUBSTACK") throw new Error("wrong platform");

    expect(content.contentText).toBe(TEXT);
    expect(content.externalId).toBe("148000123");
    expect(content.imageUrls).toEqual([IMAGE]);
    // The image sits after the first paragraph (91 characters and no more).
    expect(content.imageOccurrences).toEqual([
      {
        originalIndex: 0,
        normalizedTextOffset: TEXT.indexOf(" Babbage's"),
        sourceUrl: IMAGE,
        captionText: "Babbage's Difference Engine No. 1, fragment",
      },
    ]);
    expect(canonicalizeOccurrences(content.imageOccurrences, TEXT)).toEqual(content.imageOccurrences);
    expect(content.mediaState).toBe("has_images");
    expect(skipReasonFor(content)).toBeNull();

    const { htmlContent, ...metadata } = content.metadata;
    expect(metadata).toEqual({
      substackPostId: "148000123",
      publicationSubdomain: "enginesweekly",
      slug: "on-difference-engines",
      title: "On Difference Engines",
      subtitle: "Why the Analytical Engine is more than a calculator",
      authorName: "Ada Lovelace",
      authorSubstackHandle: "adalovelace",
      publishedAt: "2024-09-02T14:05:00.000Z",
    });
    // The body HTML, read on the server's path, gives the same text.
    expect(htmlToNormalizedText(htmlContent ?? "", "SUBSTACK", blankDocument())).toBe(TEXT);

    const input = buildRegisterInput(content);
    expect(input).toMatchObject({
      platform: "SUBSTACK",
      externalId: "148000123",
      url: POST_URL,
      observedContentText: TEXT,
      observedImageUrls: [IMAGE],
    });
  });

  it("recognises a custom domain by its fingerprint and finds the publication in the preview URL", () => {
    const document = domFor(readLocalFixture("substack-post-custom-domain.html"), CUSTOM_URL);
    expect(substackAdapter.matches(CUSTOM_URL)).toBe(false);
    expect(substackAdapter.detectFromDom?.(document)).toBe(true);
    expect(selectAdapter(CUSTOM_URL, document)?.platformKey).toBe("SUBSTACK");
    const result = substackAdapter.extract(document);
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    expect(result.content.contentText).toBe(TEXT);
    expect(result.content.platform === "SUBSTACK" && result.content.metadata.publicationSubdomain).toBe(
      "enginesweekly",
    );
    // An ordinary page on another host is not taken for Substack.
    const plain = domFor("<html><body><p>Hello</p></body></html>", "https://blog.example/p/hello");
    expect(selectAdapter("https://blog.example/p/hello", plain)).toBeNull();
  });

  it("skips paid-subscriber views", () => {
    const url = "https://enginesweekly.substack.com/p/subscriber-notes";
    const document = domFor(readLocalFixture("substack-post-paywalled.html"), url);
    expect(substackAdapter.detectPrivateOrGated?.(document)).toBe(true);
  });

  it("needs the numeric id", () => {
    const html = readLocalFixture("substack-post.html").replace(/post_preview/g, "post_image");
    expect(substackAdapter.extract(domFor(html, POST_URL))).toEqual({ kind: "not_ready", reason: "missing_identity" });
  });
});
