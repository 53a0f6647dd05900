// The Threads adapter on the saved pages (test/fixtures/social/): the "For
// you" feed (dark theme) and the page of its first post (light theme), built
// after threads.com's DOM (pressable containers, generated class names).

import { describe, expect, it } from "vitest";
import { parseThreadsPostUrl, threadsAdapter } from "../../src/content/adapters/threads";
import { buildRegisterInput } from "../../src/lib/platform";
import { domFor } from "../dom";
import { readLocalFixture } from "../fixtures";

const FEED_URL = "https://www.threads.com/";
const CODE = "DM7t8CdtApy";
const POST_URL = `https://www.threads.com/@kofi.mensah/post/${CODE}`;
const TEXT =
  "Reminder before tonight's storm: lightning never strikes the same place twice. Also, the Empire State Building gets hit about 20 to 25 times a year, so stay off rooftops.";

function ready(post: Element, document: Document) {
  const result = threadsAdapter.extract(post, document);
  if (result.kind !== "ready" || result.content.platform !== "THREADS") throw new Error(`not ready: ${JSON.stringify(result)}`);
  return result.content;
}

describe("Threads post URLs", () => {
  it("reads the username and code on threads.com and threads.net, and nothing else", () => {
    expect(parseThreadsPostUrl(POST_URL)).toEqual({ username: "kofi.mensah", code: CODE });
    expect(parseThreadsPostUrl(`https://threads.net/@Kofi.Mensah/post/${CODE}/`)).toEqual({ username: "kofi.mensah", code: CODE });
    expect(parseThreadsPostUrl(`/@kofi.mensah/post/${CODE}`, "https://www.threads.net/")).toEqual({ username: "kofi.mensah", code: CODE });
    for (const bad of [
      `https://www.threads.com/@kofi.mensah/post/${CODE}/media`,
      "https://www.threads.com/@kofi.mensah",
      `https://www.threads.com/@kofi-mensah/post/${CODE}`,
      `https://www.threads.com/@kofi.mensah/post/abc`,
      `https://www.threads.com/@kofi.mensah/post/DM7t8Cd%00tApy`,
      `https://threads.com.evil.example/@kofi.mensah/post/${CODE}`,
      `http://www.threads.com/@kofi.mensah/post/${CODE}`,
      `https://www.threads.com/@${"a".repeat(31)}/post/${CODE}`,
    ]) {
      expect(parseThreadsPostUrl(bad), bad).toBeNull();
    }
  });
});

describe("Threads adapter, feed", () => {
  const document = domFor(readLocalFixture("social/threads-feed.html"), FEED_URL);

  it("finds every post (a quoted post is part of its quoting post); dark theme", () => {
    expect(threadsAdapter.matches(FEED_URL)).toBe(true);
    expect(threadsAdapter.matches("https://threads.net/search")).toBe(true);
    expect(threadsAdapter.matches("https://www.instagram.com/")).toBe(false);
    expect(threadsAdapter.siteTheme(document)).toBe("dark");
    const posts = threadsAdapter.findPosts(document);
    expect(posts).toHaveLength(9);
    const ids = posts.map((p) => threadsAdapter.identify(p, document)?.externalId);
    expect(new Set(ids).size).toBe(9);
    expect(ids[0]).toBe(CODE);
  });

  it("reads a post: text from its spans (not the author, topic, time or counts), code, time and counts", () => {
    const post = threadsAdapter.findPosts(document)[0];
    if (post === undefined) throw new Error("no post");
    const content = ready(post, document);
    expect(content.contentText).toBe(TEXT);
    expect(buildRegisterInput(content)).toEqual({
      platform: "THREADS",
      externalId: CODE,
      url: POST_URL,
      observedImageUrls: [],
      observedImageOccurrences: [],
      observedContentText: TEXT,
      metadata: { username: "kofi.mensah", postedAt: "2026-11-25T14:12:00.000Z", likeCount: 1204, replyCount: 88, repostCount: 12 },
    });
  });

  it("keeps quoted posts, link cards, avatars and Translate out", () => {
    const posts = threadsAdapter.findPosts(document).map((p) => ready(p, document));
    const byStart = (start: string) => {
      const found = posts.find((c) => c.contentText.startsWith(start));
      if (found === undefined) throw new Error(`no post starting ${start}`);
      return found;
    };
    expect(byStart("This is exactly why").contentText).toBe(
      "This is exactly why we switched to heat pumps at the workshop. Bills down by a third over one winter.",
    );
    expect(byStart("This is exactly why").metadata.username).toBe("marco.builds");
    expect(byStart("Der Berliner").contentText).toBe("Der Berliner Fernsehturm ist mit 368 Metern das höchste Bauwerk Deutschlands.");
    const photos = byStart("Laminated dough");
    expect(photos.imageOccurrences).toHaveLength(2);
    expect(photos.imageOccurrences[0]?.captionText).toBe("Photo by rowan.bakes on November 25, 2026. May be an image of croissants.");
    expect(photos.imageOccurrences.every((o) => o.sourceUrl.includes("/t51.2885-15/"))).toBe(true); // no avatar (t51.2885-19)
    expect(byStart("Golden hour").mediaState).toBe("has_video");
    expect(byStart("Finished").contentText).toBe('Finished "The Overstory" on the train. Thanks @marco.builds for the recommendation!');
    expect(posts.filter((c) => c.contentText === "")).toHaveLength(1); // the photo-only post
  });

  it("the action row holds like and reply", () => {
    for (const post of threadsAdapter.findPosts(document)) {
      const row = threadsAdapter.actionRow(post);
      expect(row?.querySelector('svg[aria-label="Like"]')).not.toBeNull();
      expect(row?.querySelector('svg[aria-label="Reply"]')).not.toBeNull();
    }
  });
});

describe("Threads adapter, post page", () => {
  it("finds the post, the author's follow-up and the replies; light theme", () => {
    const document = domFor(readLocalFixture("social/threads-post.html"), POST_URL);
    expect(threadsAdapter.siteTheme(document)).toBe("light");
    const posts = threadsAdapter.findPosts(document);
    expect(posts).toHaveLength(5);
    const first = posts[0];
    if (first === undefined) throw new Error("no post");
    expect(ready(first, document).contentText).toBe(TEXT);
    expect(posts.map((p) => threadsAdapter.identify(p, document)?.url)).toEqual([
      POST_URL,
      "https://www.threads.com/@kofi.mensah/post/D01Ny9yqr5h",
      "https://www.threads.com/@the.weather.nerd/post/D4LFvzXVORu",
      "https://www.threads.com/@ada.reads/post/DppqJnuAvG2",
      "https://www.threads.com/@marco.builds/post/DaY8ZQfM_91",
    ]);
  });
});
