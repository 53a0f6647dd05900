// Same page, same version, whichever extension registers it: the
// registerObservedVersion bodies this extension builds for the saved pages
// hash to the version the reference algorithm gives (OpenErrata's own
// extension for Wikipedia, whose exact body is in the shared fixtures; the
// golden text and image of the LessWrong post; the saved X page). The server
// side of the same check is producers/ingest/reference_body_test.go; the
// literal hashes below were cross-checked with the server's BuildRegistration.

import { describe, expect, it } from "vitest";
import { lesswrongAdapter } from "../src/content/adapters/lesswrong";
import type { PlatformAdapter } from "../src/content/adapters/model";
import { wikipediaAdapter } from "../src/content/adapters/wikipedia";
import { xAdapter } from "../src/content/adapters/x";
import { htmlToNormalizedText } from "../src/lib/dom-text";
import { type ImageOccurrence, canonicalizeOccurrences, computeVersionIdentity } from "../src/lib/hash";
import { normalizeContent } from "../src/lib/normalize";
import { type RegisterObservedVersionInput, buildRegisterInput } from "../src/lib/platform";
import { skipReasonFor } from "../src/lib/skip";
import { blankDocument, domFor } from "./dom";
import { PAGES } from "./e2e/pages";
import { loadGolden, loadReferenceRegister, readSharedFixture } from "./fixtures";

/** The version OpenErrata's extension v0.3.3 registers for the trimmed Einstein article. */
const EINSTEIN_REFERENCE_VERSION_HASH = "d513a0e949ec4f4210e8bbfeaecc03472a0178c4485a495be5d0871eba9b1877";
/** The saved LessWrong post with its one image (golden text, image after "nearly as often."). */
const LESSWRONG_VERSION_HASH = "e61ae165d20600dc5337bdf9e1f1c96ee64d8ba0a2af55dea93b1057d7021e07";
/** The saved X status page (test/e2e/fixtures/x-status.html): text and one captioned photo. */
const X_VERSION_HASH = "c9ade406a5e76fd193048920aa65e03e1f4d2e5d63e1b82dd147290835625088";

function registerBody(html: string, url: string, adapter: PlatformAdapter): RegisterObservedVersionInput {
  const result = adapter.extract(domFor(html, url));
  if (result.kind !== "ready") throw new Error(`${url}: not ready: ${result.reason}`);
  expect(skipReasonFor(result.content)).toBeNull(); // the body is really sent
  return buildRegisterInput(result.content);
}

describe("Wikipedia: the trimmed Einstein article", () => {
  const reference = loadReferenceRegister("wikipedia-albert-einstein-trimmed.reference-extension-register.json");
  const body = registerBody(readSharedFixture("wikipedia-albert-einstein-trimmed.html"), reference.pageUrl, wikipediaAdapter);
  if (body.platform !== "WIKIPEDIA") throw new Error("wrong platform");
  const want = reference.requestBody;

  it("registers the reference client's version", async () => {
    expect(reference.expectedVersionHash).toBe(EINSTEIN_REFERENCE_VERSION_HASH);
    const fromReference = await computeVersionIdentity(want.observedContentText, want.observedImageOccurrences);
    expect(fromReference.versionHash).toBe(EINSTEIN_REFERENCE_VERSION_HASH);

    const ours = await computeVersionIdentity(body.observedContentText, body.observedImageOccurrences);
    expect(ours.contentHash).toBe(fromReference.contentHash);
    expect(ours.occurrencesHash).toBe(fromReference.occurrencesHash);
    expect(ours.versionHash).toBe(EINSTEIN_REFERENCE_VERSION_HASH);
  });

  it("reads captions without footnote markers", () => {
    expect(body.observedContentText).toBe(want.observedContentText);
    expect(body.observedImageUrls).toEqual(want.observedImageUrls);
    expect(body.observedImageOccurrences).toHaveLength(22);
    expect(body.observedImageOccurrences.filter((o) => o.captionText !== undefined)).toHaveLength(18);
    expect(body.observedImageOccurrences).toEqual(want.observedImageOccurrences);
    // The three captions that carried [note 2], [97], [129] and [130].
    expect(body.observedImageOccurrences[6]?.captionText).toBe("Einstein's Matura certificate from canton Aargau, 1896");
    expect(body.observedImageOccurrences[14]?.captionText).toMatch(/Astronomical Society on 6 November 1919\.$/);
    expect(body.observedImageOccurrences[20]?.captionText).toBe(
      "Landing card for Einstein's 26 May 1933 arrival in Dover, England from Ostend, Belgium, enroute to Oxford",
    );
    for (const o of body.observedImageOccurrences) expect(o.captionText ?? "").not.toMatch(/\[(?:\d+|note \d+)\]/);
  });

  it("sends the pruned article as htmlContent, byte for byte the reference client's", () => {
    const html = body.metadata.htmlContent ?? "";
    expect(html.length).toBe(88_147);
    expect(html).toBe(want.metadata.htmlContent);
    expect(html.match(/<style\b/g) ?? []).toHaveLength(0);
    expect(html.match(/<sup\b/g) ?? []).toHaveLength(2); // two exponents, no citation markers
    expect(html).not.toMatch(/class="[^"]*\breference\b/);
    // The server reads the same text from it.
    expect(htmlToNormalizedText(html, "WIKIPEDIA", blankDocument())).toBe(body.observedContentText);
  });

  it("is the reference body, field for field", () => {
    expect(body).toEqual(want);
  });
});

describe("LessWrong: the saved post", () => {
  const golden = loadGolden().find((g) => g.platform === "LESSWRONG");
  if (golden === undefined) throw new Error("golden.json has no LessWrong fixture");
  const placeholders = (golden as unknown as { imagePlaceholders: Array<{ index: number; sourceUrl: string }> })
    .imagePlaceholders;

  it("registers the version of the golden text and its one image", async () => {
    const body = registerBody(PAGES.lesswrong.html, PAGES.lesswrong.url, lesswrongAdapter);
    if (body.platform !== "LESSWRONG") throw new Error("wrong platform");
    expect(body).not.toHaveProperty("observedContentText");

    // The text the server derives from the body's HTML is the reference text.
    const text = readSharedFixture(golden.normalizedTextFile);
    expect(htmlToNormalizedText(body.metadata.htmlContent, "LESSWRONG", blankDocument())).toBe(text);

    // The image, placed where the reference text puts it: after the paragraph it follows.
    const before = "No other model considered strategically faking alignment nearly as often.";
    const offset = text.indexOf(before) + before.length;
    expect(text.slice(offset, offset + 15)).toBe(" The key figure");
    const expected: ImageOccurrence[] = placeholders.map((p) => ({
      originalIndex: p.index,
      normalizedTextOffset: offset,
      sourceUrl: p.sourceUrl,
    }));
    expect(expected).toHaveLength(1);
    expect(body.observedImageOccurrences).toEqual(expected); // alt="" and no figure: no caption
    expect(body.observedImageUrls).toEqual([placeholders[0]?.sourceUrl]);

    const reference = await computeVersionIdentity(text, expected);
    expect(reference.contentHash).toBe(golden.contentHash);
    expect(reference.versionHash).toBe(LESSWRONG_VERSION_HASH);
    const ours = await computeVersionIdentity(text, canonicalizeOccurrences(body.observedImageOccurrences, text));
    expect(ours.versionHash).toBe(LESSWRONG_VERSION_HASH);
  });
});

describe("X: the saved status page", () => {
  it("registers the version of its text and captioned photo", async () => {
    const body = registerBody(PAGES.x.html, PAGES.x.url, xAdapter);
    if (body.platform !== "X") throw new Error("wrong platform");
    expect(body.observedContentText).toBe(normalizeContent(body.observedContentText));
    expect(body.metadata.text).toBe(body.observedContentText);
    expect(body.observedImageOccurrences).toEqual([
      {
        originalIndex: 0,
        normalizedTextOffset: body.observedContentText.length,
        sourceUrl: "https://pbs.twimg.com/media/GCable01.jpg?format=jpg&name=small",
        captionText: "A coil of telegraph cable on a ship's deck",
      },
    ]);
    const id = await computeVersionIdentity(body.observedContentText, body.observedImageOccurrences);
    expect(id.versionHash).toBe(X_VERSION_HASH);
  });
});
