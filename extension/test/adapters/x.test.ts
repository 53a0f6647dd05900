import { describe, expect, it } from "vitest";
import { parseXStatusUrl, xAdapter } from "../../src/content/adapters/x";
import { canonicalizeOccurrences } from "../../src/lib/hash";
import { buildRegisterInput } from "../../src/lib/platform";
import { skipReasonFor } from "../../src/lib/skip";
import { domFor } from "../dom";
import { readLocalFixture } from "../fixtures";

const FOCAL_URL = "https://x.com/ada_l/status/1790000000000000002";

describe("X status URLs", () => {
  it("reads the post id and handle", () => {
    expect(parseXStatusUrl(FOCAL_URL)).toEqual({ tweetId: "1790000000000000002", handle: "ada_l" });
    expect(parseXStatusUrl("https://twitter.com/ada_l/status/42/photo/1")).toEqual({ tweetId: "42", handle: "ada_l" });
    expect(parseXStatusUrl("https://x.com/i/web/status/42")).toEqual({ tweetId: "42", handle: null });
    expect(parseXStatusUrl("https://x.com/home")).toBeNull();
    expect(parseXStatusUrl("https://x.com/explore/status/42")).toBeNull();
    expect(parseXStatusUrl("https://x.com/ada_l")).toBeNull();
    expect(parseXStatusUrl("https://example.com/ada_l/status/42")).toBeNull();
  });
});

describe("X adapter", () => {
  it("reads the focal post only: its text, its photos, its author and counts", () => {
    const document = domFor(readLocalFixture("x-status-thread.html"), FOCAL_URL);
    expect(xAdapter.matches(FOCAL_URL)).toBe(true);
    expect(xAdapter.detectPrivateOrGated?.(document)).toBe(false);
    const result = xAdapter.extract(document);
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    const content = result.content;
    const text =
      'The Analytical Engine weaves "algebraical patterns" just as the Jacquard loom weaves flowers and leaves. It was designed in 1837.';
    expect(content.contentText).toBe(text);
    expect(content.externalId).toBe("1790000000000000002");
    expect(content.imageOccurrences).toEqual([
      {
        originalIndex: 0,
        normalizedTextOffset: text.length,
        sourceUrl: "https://pbs.twimg.com/media/GAda001.jpg?format=jpg&name=small",
      },
      {
        originalIndex: 1,
        normalizedTextOffset: text.length,
        sourceUrl: "https://pbs.twimg.com/media/GAda002.jpg?format=jpg&name=small",
        captionText: "A punched card of the Jacquard loom",
      },
    ]);
    expect(canonicalizeOccurrences(content.imageOccurrences, text)).toEqual(content.imageOccurrences);
    expect(content.mediaState).toBe("has_images");
    expect(skipReasonFor(content)).toBeNull();

    expect(buildRegisterInput(content)).toEqual({
      platform: "X",
      externalId: "1790000000000000002",
      url: FOCAL_URL,
      observedImageUrls: [
        "https://pbs.twimg.com/media/GAda001.jpg?format=jpg&name=small",
        "https://pbs.twimg.com/media/GAda002.jpg?format=jpg&name=small",
      ],
      observedImageOccurrences: content.imageOccurrences,
      observedContentText: text,
      metadata: {
        authorHandle: "ada_l",
        authorDisplayName: "Ada Lovelace",
        text,
        mediaUrls: [
          "https://pbs.twimg.com/media/GAda001.jpg?format=jpg&name=small",
          "https://pbs.twimg.com/media/GAda002.jpg?format=jpg&name=small",
        ],
        likeCount: 5310,
        retweetCount: 1204,
        postedAt: "2024-05-13T10:30:00.000Z",
      },
    });
    expect(xAdapter.getContentRoot(document)?.textContent).toContain("The Analytical Engine");
  });

  it("reads another post of the same thread when the URL names it", () => {
    const url = "https://x.com/charles_b/status/1790000000000000001";
    const result = xAdapter.extract(domFor(readLocalFixture("x-status-thread.html"), url));
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    expect(result.content.contentText).toBe("Has anyone read the Menabrea memoir?");
    expect(result.content.mediaState).toBe("text_only");
    expect(result.content.platform === "X" && result.content.metadata.authorDisplayName).toBe("Charles Babbage");
  });

  it("waits while the post is not rendered yet", () => {
    const url = "https://x.com/ada_l/status/1790000000000000077";
    const document = domFor(readLocalFixture("x-status-thread.html"), url);
    expect(xAdapter.extract(document)).toEqual({ kind: "not_ready", reason: "hydrating" });
    expect(xAdapter.detectPrivateOrGated?.(document)).toBe(false);
  });

  it("detects protected accounts", () => {
    const document = domFor(readLocalFixture("x-status-protected.html"), FOCAL_URL);
    expect(xAdapter.detectPrivateOrGated?.(document)).toBe(true);
  });

  it("marks video posts has_video and takes the handle from the byline on /i/web/status", () => {
    const url = "https://x.com/i/web/status/1790000000000000009";
    const result = xAdapter.extract(domFor(readLocalFixture("x-status-video.html"), url));
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    expect(result.content.mediaState).toBe("has_video");
    expect(skipReasonFor(result.content)).toBe("has_video");
    expect(result.content.platform === "X" && result.content.metadata.authorHandle).toBe("ada_l");
  });
});
