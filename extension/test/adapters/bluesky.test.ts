// The Bluesky adapter on the saved pages (test/fixtures/social/): a
// Following feed (light theme) and the thread page of its first post (dark
// theme), built after bsky.app's DOM (React Native Web, data-testid hooks).

import { describe, expect, it } from "vitest";
import { blueskyAdapter, parseBlueskyPostUrl } from "../../src/content/adapters/bluesky";
import { buildRegisterInput } from "../../src/lib/platform";
import { domFor } from "../dom";
import { readLocalFixture } from "../fixtures";

const FEED_URL = "https://bsky.app/";
const MAREN = "did:plc:ue4wzb3ysxq6g74ouj7ic7ha";
const WALL = "b4h4tghc6ol7k";
const WALL_TEXT =
  "Fun fact for the history nerds: the Great Wall of China is visible from the Moon with the naked eye. And it was built in one go, by a single dynasty, the Ming, between 1368 and 1644.";
const THREAD_URL = `https://bsky.app/profile/marenholt.bsky.social/post/${WALL}`;

function feed(url = FEED_URL): Document {
  return domFor(readLocalFixture("social/bluesky-feed.html"), url);
}

function ready(post: Element, document: Document) {
  const result = blueskyAdapter.extract(post, document);
  if (result.kind !== "ready" || result.content.platform !== "BLUESKY") throw new Error(`not ready: ${JSON.stringify(result)}`);
  return result.content;
}

describe("Bluesky post URLs", () => {
  it("reads the author and record key, and only of post pages on bsky.app", () => {
    expect(parseBlueskyPostUrl(THREAD_URL)).toEqual({ actor: "marenholt.bsky.social", rkey: WALL });
    expect(parseBlueskyPostUrl(`/profile/MarenHolt.bsky.social/post/${WALL}/`)).toEqual({ actor: "marenholt.bsky.social", rkey: WALL });
    expect(parseBlueskyPostUrl(`https://bsky.app/profile/${MAREN}/post/${WALL}`)).toEqual({ actor: MAREN, rkey: WALL });
    expect(parseBlueskyPostUrl(`https://bsky.app/profile/did%3Aplc%3Aue4wzb3ysxq6g74ouj7ic7ha/post/${WALL}`)).toEqual({ actor: MAREN, rkey: WALL });
    for (const bad of [
      `https://bsky.app/profile/marenholt.bsky.social/post/${WALL}/liked-by`,
      `https://bsky.app/profile/marenholt.bsky.social/post/not-a-tid`,
      `https://bsky.app/profile/marenholt.bsky.social/post/z4h4tghc6ol7k`, // a TID starts with 2-7 or a-j
      `https://bsky.app/profile/marenholt.bsky.social`,
      `http://bsky.app/profile/marenholt.bsky.social/post/${WALL}`,
      `https://bsky.app.evil.example/profile/marenholt.bsky.social/post/${WALL}`,
      `https://bsky.app/profile/did:plc:UPPERCASE4wzb3ysxq6g74ou/post/${WALL}`,
      `https://bsky.app/profile/no_underscores.bsky.social/post/${WALL}`,
      `https://bsky.app/profile/%E0%A4%A/post/${WALL}`,
      "javascript:alert(1)",
      "",
    ]) {
      expect(parseBlueskyPostUrl(bad), bad).toBeNull();
    }
  });
});

describe("Bluesky adapter, feed", () => {
  it("finds every post of the feed, a quoted post being part of its quoting post", () => {
    const document = feed();
    expect(blueskyAdapter.matches(FEED_URL)).toBe(true);
    expect(blueskyAdapter.matches("https://bsky.app/profile/x.bsky.social")).toBe(true);
    expect(blueskyAdapter.matches("https://example.com/")).toBe(false);
    const posts = blueskyAdapter.findPosts(document);
    expect(posts).toHaveLength(12);
    expect(blueskyAdapter.siteTheme(document)).toBe("light");
    const identities = posts.map((p) => blueskyAdapter.identify(p, document)?.externalId ?? null);
    // The reader without an avatar shows no DID anywhere: no identity (its button explains that on click).
    expect(identities.filter((id) => id === null)).toHaveLength(1);
    expect(new Set(identities.filter((id) => id !== null)).size).toBe(11);
    expect(identities[0]).toBe(`at://${MAREN}/app.bsky.feed.post/${WALL}`);
  });

  it("reads a post: text, AT URI under the author's DID, page URL and the register input", () => {
    const document = feed();
    const post = blueskyAdapter.findPosts(document)[0];
    if (post === undefined) throw new Error("no post");
    const content = ready(post, document);
    expect(content.contentText).toBe(WALL_TEXT);
    expect(content.url).toBe(THREAD_URL);
    expect(buildRegisterInput(content)).toEqual({
      platform: "BLUESKY",
      externalId: `at://${MAREN}/app.bsky.feed.post/${WALL}`,
      url: THREAD_URL,
      observedImageUrls: [],
      observedImageOccurrences: [],
      observedContentText: WALL_TEXT,
      metadata: { handle: "marenholt.bsky.social", displayName: "Maren Holt", likeCount: 1087, repostCount: 9, replyCount: 14 },
    });
  });

  it("keeps quotes, link cards, reposts and replies apart from the post itself", () => {
    const document = feed();
    const posts = blueskyAdapter.findPosts(document);
    const byText = (start: string) => {
      const post = posts.find((p) => (p.querySelector('[data-testid="postText"]')?.textContent ?? "").startsWith(start));
      if (post === undefined) throw new Error(`no post starting ${start}`);
      return ready(post, document);
    };

    const quoting = byText("This is the best explainer");
    expect(quoting.contentText).toBe(
      "This is the best explainer I've read on why the tides come twice a day. The bit about the Moon's pull on the far side finally clicked.",
    );
    expect(quoting.externalId).toMatch(/^at:\/\/did:plc:pnr5uhqxcfpe4id26hkj3xav\//); // Otto's DID, not the quoted author's

    const reposted = byText("New survey");
    expect(reposted.metadata).toMatchObject({ handle: "sciencedesk.bsky.social", displayName: "Science Desk" }); // not "Reposted by June Okafor"
    expect(reposted.externalId).toMatch(/^at:\/\/did:plc:4foh4evgngwyoaafi2kvcwat\//);

    const photos = byText("Sourdough update");
    expect(photos.contentText).toBe("Sourdough update: day 4 of the starter and it finally doubled 🎉 Feeding ratio 1:1:1 at 24 °C, rye for the first two days.");
    expect(photos.mediaState).toBe("has_images");
    expect(photos.imageOccurrences.map((o) => o.captionText)).toEqual([
      "A jar of bubbly sourdough starter on a kitchen counter",
      "Rubber band marking the starter's starting level",
    ]);
    expect(photos.imageOccurrences.every((o) => o.sourceUrl.startsWith("https://cdn.bsky.app/img/feed_thumbnail/plain/did:plc:5reyq5ayzncqb6dlindbdf75/"))).toBe(true);

    const linked = byText("City council");
    expect(linked.contentText).toBe("City council publishes the full transit budget tomorrow. Worth reading before the vote: example.org/transit-2027");
    expect(linked.imageUrls).toEqual([]); // the link card's thumbnail is not a post image

    expect(byText("Timelapse").mediaState).toBe("has_video");
    expect(byText("Thanks").contentText).toBe(
      "Thanks @otto.lindqvist.dev for the tide thread recommendation. Reading list for the weekend: #oceanography",
    );
  });

  it("an image-only post has no text; a post without any DID on the page has no identity", () => {
    const document = feed();
    const posts = blueskyAdapter.findPosts(document);
    const imageOnly = posts.find((p) => p.querySelector('[data-testid="postText"]') === null);
    if (imageOnly === undefined) throw new Error("no image-only post");
    expect(ready(imageOnly, document).contentText).toBe("");
    const anonymous = posts.find((p) => blueskyAdapter.identify(p, document) === null);
    if (anonymous === undefined) throw new Error("no post without identity");
    expect(anonymous.getAttribute("data-testid")).toBe("feedItem-by-quietreader.bsky.social");
    expect(blueskyAdapter.extract(anonymous, document)).toEqual({ kind: "not_ready", reason: "missing_identity" });
  });

  it("the action row holds reply, repost and like", () => {
    const document = feed();
    for (const post of blueskyAdapter.findPosts(document)) {
      const row = blueskyAdapter.actionRow(post);
      expect(row?.querySelector('[data-testid="replyBtn"]')).not.toBeNull();
      expect(row?.querySelector('[data-testid="likeBtn"]')).not.toBeNull();
      expect(post.contains(row)).toBe(true);
    }
  });
});

describe("Bluesky adapter, thread page", () => {
  it("finds the parent, the focal post (named by the page URL) and the replies; dark theme", () => {
    const document = domFor(readLocalFixture("social/bluesky-thread.html"), THREAD_URL);
    expect(blueskyAdapter.siteTheme(document)).toBe("dark");
    const posts = blueskyAdapter.findPosts(document);
    expect(posts).toHaveLength(6);
    const ids = posts.map((p) => blueskyAdapter.identify(p, document)?.externalId);
    expect(new Set(ids).size).toBe(6);
    const focal = posts[1];
    if (focal === undefined) throw new Error("no focal post");
    const content = ready(focal, document);
    expect(content.externalId).toBe(`at://${MAREN}/app.bsky.feed.post/${WALL}`);
    expect(content.contentText).toBe(WALL_TEXT);
    // The expanded post shows its counts as links ("1,087 likes").
    expect(content.metadata).toEqual({ handle: "marenholt.bsky.social", displayName: "Maren Holt", likeCount: 1087, repostCount: 9 });
    // The same post on another page (the focal post's URL names it) has no identity here.
    const elsewhere = domFor(readLocalFixture("social/bluesky-thread.html"), "https://bsky.app/profile/marenholt.bsky.social/post/3aaaaaaaaaaaa");
    const focalElsewhere = blueskyAdapter.findPosts(elsewhere)[1];
    if (focalElsewhere === undefined) throw new Error("no focal post");
    expect(blueskyAdapter.identify(focalElsewhere, elsewhere)?.externalId).toBe(`at://${MAREN}/app.bsky.feed.post/3aaaaaaaaaaaa`);
  });
});
