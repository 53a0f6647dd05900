// The LessWrong adapter on the saved real post body, wrapped in a minimal
// post page (the container LessWrong renders and the post's URL).

import { describe, expect, it } from "vitest";
import { lesswrongAdapter, parseLessWrongPostUrl } from "../../src/content/adapters/lesswrong";
import { htmlToNormalizedText } from "../../src/lib/dom-text";
import { canonicalizeOccurrences, computeVersionIdentity } from "../../src/lib/hash";
import { utf16Length, wordCount } from "../../src/lib/normalize";
import { buildRegisterInput } from "../../src/lib/platform";
import { skipReasonFor } from "../../src/lib/skip";
import { blankDocument, domFor } from "../dom";
import { loadGolden, loadPage, readSharedFixture } from "../fixtures";

const golden = loadGolden().find((g) => g.platform === "LESSWRONG");
if (golden === undefined) throw new Error("golden.json has no LessWrong fixture");
const page = loadPage(golden.fixture);
const POST_URL = page.postUrl ?? "";

function postPage(bodyHtml: string, options: { jsonLdUrl?: string; extraBody?: string } = {}): string {
  const jsonLd =
    options.jsonLdUrl === undefined
      ? ""
      : `<script type="application/ld+json">${JSON.stringify({
          "@context": "http://schema.org",
          "@type": "Article",
          url: options.jsonLdUrl,
          datePublished: "2025-08-24T17:00:00.000Z",
        })}</script>`;
  return `<!doctype html><html><head><title>Did Claude 3 Opus align itself via gradient hacking? — LessWrong</title>${jsonLd}</head>
<body><div id="postBody">
  <h1 class="PostsPageTitle-root"><a href="/posts/x">Did Claude 3 Opus align itself via gradient hacking?</a></h1>
  <div class="PostsAuthors-authorName"><a href="/users/fiora-starlight">Fiora Starlight</a></div>
  <div class="FooterTagList-root"><a href="/tag/ai">AI</a><a href="/tag/gradient-hacking">Gradient Hacking</a></div>
  <div class="PostsPage-postContent instapaper_body"><div id="postContent" class="ContentItemBody-root">${bodyHtml}</div></div>
  ${options.extraBody ?? ""}
</div></body></html>`;
}

describe("LessWrong URLs", () => {
  it("reads post id and slug", () => {
    expect(parseLessWrongPostUrl(POST_URL)).toEqual({
      postId: golden.externalId,
      slug: "did-claude-3-opus-align-itself-via-gradient-hacking",
    });
    expect(parseLessWrongPostUrl("https://lesswrong.com/posts/abc123")).toEqual({ postId: "abc123", slug: null });
    expect(parseLessWrongPostUrl("https://www.lesswrong.com/users/someone")).toBeNull();
    expect(parseLessWrongPostUrl("https://evil.example/posts/abc123/x")).toBeNull();
    expect(lesswrongAdapter.matches("https://www.lesswrong.com/")).toBe(false);
  });
});

describe("LessWrong adapter on the saved post", () => {
  it("extracts the reference text and sends the post HTML without observed text", async () => {
    const document = domFor(postPage(page.html, { jsonLdUrl: POST_URL }), POST_URL);
    const result = lesswrongAdapter.extract(document);
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    const content = result.content;
    if (content.platform !== "LESSWRONG") throw new Error("wrong platform");

    expect(content.externalId).toBe(golden.externalId);
    expect(utf16Length(content.contentText)).toBe(golden.utf16Length);
    expect(content.contentText).toBe(readSharedFixture(golden.normalizedTextFile));
    expect(wordCount(content.contentText)).toBe(golden.wordCount);

    // Text alone hashes to the golden identity (golden.json is computed without images).
    const textOnly = await computeVersionIdentity(content.contentText, []);
    expect(textOnly.contentHash).toBe(golden.contentHash);
    expect(textOnly.versionHash).toBe(golden.versionHash);

    // The HTML the server receives yields the same text on the server's path.
    const serverText = htmlToNormalizedText(content.metadata.htmlContent, "LESSWRONG", blankDocument());
    expect(serverText).toBe(content.contentText);

    // The post has one image; its occurrence is valid on the same text, so a
    // verified registration keeps it and both sides agree on the version.
    expect(content.imageUrls).toEqual([
      "https://res.cloudinary.com/lesswrong-2-0/image/upload/f_auto,q_auto/v1/mirroredImages/ioZxrP7BhS5ArK59w/87aa31c6688b9967ea23ce651f0706fbdca1b593b9a90fbfc5f8f6c494183186/g1arqkzt4tbigwrn2mqb",
    ]);
    expect(content.imageOccurrences).toHaveLength(1);
    expect(canonicalizeOccurrences(content.imageOccurrences, content.contentText)).toEqual(content.imageOccurrences);
    expect(content.mediaState).toBe("has_images");
    expect(skipReasonFor(content)).toBeNull();

    expect(content.metadata).toMatchObject({
      slug: "did-claude-3-opus-align-itself-via-gradient-hacking",
      title: "Did Claude 3 Opus align itself via gradient hacking?",
      authorName: "Fiora Starlight",
      authorSlug: "fiora-starlight",
      tags: ["AI", "Gradient Hacking"],
      publishedAt: "2025-08-24T17:00:00.000Z",
    });

    const input = buildRegisterInput(content);
    expect(input).not.toHaveProperty("observedContentText");
    expect(input).toMatchObject({
      platform: "LESSWRONG",
      externalId: golden.externalId,
      url: POST_URL,
      observedImageUrls: content.imageUrls,
      observedImageOccurrences: content.imageOccurrences,
    });
    expect(Object.keys(input)).toEqual([
      "platform",
      "externalId",
      "url",
      "observedImageUrls",
      "observedImageOccurrences",
      "metadata",
    ]);
  });

  it("leaves the linkpost callout out of text and HTML", () => {
    const callout = `<div class="LinkPostMessage-root">This is a linkpost for https://example.com</div>`;
    const document = domFor(postPage(`${callout}<p>Body text.</p>`), POST_URL);
    const result = lesswrongAdapter.extract(document);
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    expect(result.content.contentText).toBe("Body text.");
    expect(result.content.platform === "LESSWRONG" && result.content.metadata.htmlContent).toBe("<p>Body text.</p>");
  });

  it("waits while the DOM still shows another post", () => {
    const document = domFor(
      postPage("<p>Old post.</p>", { jsonLdUrl: "https://www.lesswrong.com/posts/otherPost123/old" }),
      POST_URL,
    );
    expect(lesswrongAdapter.extract(document)).toEqual({ kind: "not_ready", reason: "hydrating" });
  });

  it("waits for the body, refuses two bodies, and flags embeds as video", () => {
    expect(lesswrongAdapter.extract(domFor("<html><body><p>Loading</p></body></html>", POST_URL))).toEqual({
      kind: "not_ready",
      reason: "hydrating",
    });
    const second = `<div class="PostsPage-postContent"><div id="postContent"><p>Other</p></div></div>`;
    expect(lesswrongAdapter.extract(domFor(postPage("<p>One</p>", { extraBody: second }), POST_URL))).toEqual({
      kind: "not_ready",
      reason: "ambiguous_dom",
    });
    const withEmbed = lesswrongAdapter.extract(
      domFor(postPage(`<p>Text</p><iframe src="https://www.youtube.com/embed/x"></iframe>`), POST_URL),
    );
    if (withEmbed.kind !== "ready") throw new Error("not ready");
    expect(withEmbed.content.mediaState).toBe("has_video");
    expect(skipReasonFor(withEmbed.content)).toBe("has_video");
  });
});
