// Bluesky (bsky.app): a React Native Web app. Posts in feeds are
// [data-testid="feedItem-by-{handle}"], posts of a thread
// [data-testid="postThreadItem-by-{handle}"]; the hooks used here are those
// test ids, post permalinks (/profile/{actor}/post/{rkey}), the post text
// ([data-testid="postText"]) and Bluesky's CDN URLs, which carry the
// author's DID. A quoted post inside a post is a link box of its own and is
// never read as the quoting post.
//
// A post's external id is its AT URI under the author's DID
// (at://{did}/app.bsky.feed.post/{rkey}): handles change, DIDs do not. The
// DID comes from the permalink when it names one, else from the author's
// avatar or the post's own images on cdn.bsky.app.

import { extractContent, resolveImageUrl } from "../../lib/dom-text";
import type { ImageOccurrence } from "../../lib/hash";
import { normalizeContent } from "../../lib/normalize";
import type { BlueskyMetadata } from "../../lib/platform";
import { documentUrl, mediaStateOf, parseExactCount } from "./dom-utils";
import { type FeedAdapter, type FeedPostIdentity, type Theme, outermost, ownedBy } from "./feed-model";
import { type AdapterExtractionResult, notReady } from "./model";

const HOSTS = new Set(["bsky.app", "www.bsky.app"]);
const POST_SELECTOR = '[data-testid^="feedItem-by-"], [data-testid^="postThreadItem-by-"]';
const TEST_ID_AUTHOR = /^(?:feedItem|postThreadItem)-by-(.+)$/;
const TEXT_SELECTOR = '[data-testid="postText"]';
export const BLUESKY_POST_COLLECTION = "app.bsky.feed.post";

// The identity syntax the server accepts (events/content/social.go).
const DID_PLC = /^did:plc:[a-z2-7]{24}$/;
const DID_WEB = /^did:web:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
const TID = /^[2-7a-j][2-7a-z]{12}$/;
const HANDLE = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** cdn.bsky.app/img/{preset}/plain/{did}/{cid}@{format} (avatars, post images) and video.bsky.app/watch/{did}/... */
const CDN_DID = /^https:\/\/(?:cdn\.bsky\.app\/img\/[a-z_]+\/plain|video\.bsky\.app\/watch)\/(did(?::|%3A)[^/]+)\//i;
const POST_IMAGE = /^https:\/\/cdn\.bsky\.app\/img\/feed_(?:thumbnail|fullsize)\//i;
const AVATAR_IMAGE = /^https:\/\/cdn\.bsky\.app\/img\/avatar(?:_thumbnail)?\//i;

export function isBlueskyDid(value: string): boolean {
  return value.length <= 8 + 253 && (DID_PLC.test(value) || DID_WEB.test(value));
}

/** A handle as the server stores it (one leading @ and spaces trimmed, lowercased), or null when it is not one. */
export function normalizeBlueskyHandle(raw: string): string | null {
  const handle = raw.trim().replace(/^@/, "").trim().toLowerCase();
  return handle.length <= 253 && HANDLE.test(handle) ? handle : null;
}

export interface BlueskyPostUrl {
  /** A handle (lowercased) or a DID, as the URL names the author. */
  actor: string;
  rkey: string;
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The author and record key of a post URL (absolute, or a path on bsky.app); null for anything else. */
export function parseBlueskyPostUrl(raw: string, base = "https://bsky.app/"): BlueskyPostUrl | null {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" || !HOSTS.has(url.hostname.toLowerCase())) return null;
  const match = /^\/profile\/([^/]+)\/post\/([^/]+)\/?$/.exec(url.pathname);
  if (match?.[1] === undefined || match[2] === undefined) return null;
  const actorRaw = decodeSegment(match[1]);
  const rkey = decodeSegment(match[2]);
  if (actorRaw === null || rkey === null || !TID.test(rkey)) return null;
  const actor = actorRaw.startsWith("did:") ? (isBlueskyDid(actorRaw) ? actorRaw : null) : normalizeBlueskyHandle(actorRaw);
  return actor === null ? null : { actor, rkey };
}

export function blueskyPostUri(did: string, rkey: string): string {
  return `at://${did}/${BLUESKY_POST_COLLECTION}/${rkey}`;
}

export function blueskyPostPageUrl(actor: string, rkey: string): string {
  return `https://bsky.app/profile/${actor}/post/${rkey}`;
}

/**
 * A box of the post that holds another post (a quote embed): a link or
 * link-role element below the post that wraps block content and names a
 * post. The post's own timestamp permalink wraps only text.
 */
function isQuoteBox(element: Element, post: Element, base: string): boolean {
  if (element === post) return false;
  const linkLike = element.localName === "a" || element.getAttribute("role") === "link";
  if (!linkLike || element.querySelector("div") === null) return false;
  const href = element.getAttribute("href");
  if (href !== null && parseBlueskyPostUrl(href, base) !== null) return true;
  return Array.from(element.querySelectorAll("a[href]")).some((a) => parseBlueskyPostUrl(a.getAttribute("href") ?? "", base) !== null) ||
    element.querySelector(TEXT_SELECTOR) !== null;
}

/** Elements of the post itself, not of a post it quotes. */
function own(post: Element, selector: string, base: string): Element[] {
  return Array.from(post.querySelectorAll(selector)).filter((el) => ownedBy(el, post, (e) => isQuoteBox(e, post, base)));
}

function authorOfTestId(post: Element): string | null {
  const match = TEST_ID_AUTHOR.exec(post.getAttribute("data-testid") ?? "");
  if (match?.[1] === undefined) return null;
  const actor = match[1];
  return actor.startsWith("did:") ? (isBlueskyDid(actor) ? actor : null) : normalizeBlueskyHandle(actor);
}

/** The post's own permalink: a post link (not a quote's) by the post's author, or the first one when the author is unknown. */
function ownPermalink(post: Element, base: string, author: string | null): BlueskyPostUrl | null {
  const links = own(post, "a[href]", base)
    .filter((a) => a.querySelector("div") === null)
    .map((a) => parseBlueskyPostUrl(a.getAttribute("href") ?? "", base))
    .filter((p): p is BlueskyPostUrl => p !== null);
  return links.find((p) => author === null || p.actor === author) ?? null;
}

/** The author's DID as the post's own avatar, images or video name it. */
function didOf(post: Element, base: string): string | null {
  for (const element of own(post, "img[src], video[poster], source[src], video[src]", base)) {
    for (const attribute of ["src", "poster"]) {
      const value = element.getAttribute(attribute);
      if (value === null) continue;
      const resolved = resolveImageUrl(value, base);
      const match = resolved === null ? null : CDN_DID.exec(resolved);
      const did = match?.[1] === undefined ? null : decodeSegment(match[1]);
      if (did !== null && isBlueskyDid(did)) return did;
    }
  }
  return null;
}

/** Whether the element is inside a link (below the post) to a page off bsky.app: a link card. */
function insideExternalLink(element: Element, post: Element, base: string): boolean {
  for (let e: Element | null = element.parentElement; e !== null && e !== post; e = e.parentElement) {
    if (e.localName !== "a") continue;
    try {
      if (!HOSTS.has(new URL(e.getAttribute("href") ?? "", base).hostname.toLowerCase())) return true;
    } catch {
      return true;
    }
  }
  return false;
}

interface Located {
  url: BlueskyPostUrl;
  /** The author as the post names it (handle or DID). */
  author: string | null;
  did: string | null;
}

function locate(post: Element, document: Document): Located | null {
  const base = documentUrl(document);
  const author = authorOfTestId(post);
  let url = ownPermalink(post, base, author);
  if (url === null) {
    // The focal post of a thread page shows no permalink: the page's URL names it.
    const page = parseBlueskyPostUrl(base);
    const anyOwn = own(post, "a[href]", base).some((a) => parseBlueskyPostUrl(a.getAttribute("href") ?? "", base) !== null && a.querySelector("div") === null);
    if (page !== null && !anyOwn && post.matches('[data-testid^="postThreadItem-by-"]') && (author === null || page.actor === author || page.actor.startsWith("did:"))) {
      url = page;
    }
  }
  if (url === null) return null;
  const did = isBlueskyDid(url.actor) ? url.actor : author !== null && isBlueskyDid(author) ? author : didOf(post, base);
  return { url, author, did };
}

/** The author's display name: the text of a link to the author's own profile (not the avatar; not "Reposted by"). */
function displayNameOf(post: Element, base: string, handle: string): string | null {
  for (const link of own(post, 'a[href^="/profile/"]', base)) {
    const href = link.getAttribute("href") ?? "";
    const actor = /^\/profile\/([^/]+)\/?$/.exec(href)?.[1];
    if (actor === undefined || normalizeBlueskyHandle(decodeSegment(actor) ?? "") !== handle || link.querySelector("img, svg") !== null) continue;
    const text = normalizeContent(link.textContent ?? "").replace(/\s*@\S+$/, "").trim();
    if (text.length > 0 && text.toLowerCase() !== handle && !text.startsWith("@")) return text;
  }
  return null;
}

function countOf(post: Element, base: string, testId: string, statSuffix: string): number | null {
  const counter = own(post, `[data-testid="${testId}"]`, base)[0];
  if (counter !== undefined) return parseExactCount(counter.textContent);
  // The focal post of a thread shows its counts as links: "1,204 likes" -> /post/{rkey}/liked-by.
  const stat = own(post, `a[href$="/${statSuffix}"]`, base)[0];
  return stat === undefined ? null : parseExactCount(stat.textContent);
}

export const blueskyAdapter: FeedAdapter = {
  platformKey: "BLUESKY",

  matches(url: string): boolean {
    try {
      const parsed = new URL(url);
      return parsed.protocol === "https:" && HOSTS.has(parsed.hostname.toLowerCase());
    } catch {
      return false;
    }
  },

  findPosts(document: Document): Element[] {
    return outermost(Array.from(document.querySelectorAll(POST_SELECTOR)));
  },

  identify(post: Element, document: Document): FeedPostIdentity | null {
    const located = locate(post, document);
    if (located === null || located.did === null) return null;
    return { externalId: blueskyPostUri(located.did, located.url.rkey), url: blueskyPostPageUrl(located.url.actor, located.url.rkey) };
  },

  extract(post: Element, document: Document): AdapterExtractionResult {
    const base = documentUrl(document);
    const located = locate(post, document);
    if (located === null || located.did === null) return notReady("missing_identity");
    const { url, did } = located;
    // The server takes the handle (the test id and the permalink carry it; a DID alone is not enough).
    const handle = [url.actor, located.author].find((a): a is string => a !== null && !a.startsWith("did:"));
    if (handle === undefined) return notReady("missing_identity");

    const textRoot = own(post, TEXT_SELECTOR, base)[0];
    // Emoji and link-card thumbnails inside the text are not post images.
    const contentText = textRoot === undefined ? "" : extractContent(textRoot, { baseUrl: base, isContentImage: () => false }).contentText;

    const imageOccurrences: ImageOccurrence[] = [];
    for (const image of own(post, "img[src]", base)) {
      const sourceUrl = resolveImageUrl(image.getAttribute("src"), base);
      if (sourceUrl === null || !POST_IMAGE.test(sourceUrl) || AVATAR_IMAGE.test(sourceUrl) || imageOccurrences.length >= 256) continue;
      if (insideExternalLink(image, post, base)) continue; // a link card's thumbnail
      const occurrence: ImageOccurrence = { originalIndex: imageOccurrences.length, normalizedTextOffset: contentText.length, sourceUrl };
      const alt = normalizeContent(image.getAttribute("alt") ?? "");
      if (alt.length > 0) occurrence.captionText = alt;
      imageOccurrences.push(occurrence);
    }
    const imageUrls = [...new Set(imageOccurrences.map((o) => o.sourceUrl))];
    const hasVideo = own(post, "video", base).length > 0;

    const metadata: BlueskyMetadata = { handle };
    const displayName = displayNameOf(post, base, handle);
    if (displayName !== null) metadata.displayName = displayName;
    const likeCount = countOf(post, base, "likeCount", "liked-by");
    if (likeCount !== null) metadata.likeCount = likeCount;
    const repostCount = countOf(post, base, "repostCount", "reposted-by");
    if (repostCount !== null) metadata.repostCount = repostCount;
    const replyCount = countOf(post, base, "replyCount", "replies");
    if (replyCount !== null) metadata.replyCount = replyCount;

    return {
      kind: "ready",
      content: {
        platform: "BLUESKY",
        externalId: blueskyPostUri(did, url.rkey),
        url: blueskyPostPageUrl(url.actor, url.rkey),
        contentText,
        mediaState: mediaStateOf(hasVideo, imageUrls),
        imageUrls,
        imageOccurrences,
        metadata,
      },
    };
  },

  actionRow(post: Element): Element | null {
    const base = documentUrl(post.ownerDocument);
    const reply = own(post, '[data-testid="replyBtn"]', base)[0];
    const like = own(post, '[data-testid="likeBtn"]', base)[0];
    if (reply === undefined || like === undefined) return null;
    for (let row = reply.parentElement; row !== null && row !== post; row = row.parentElement) {
      if (row.contains(like)) return row;
    }
    return null;
  },

  siteTheme(document: Document): Theme | null {
    const classes = document.documentElement.classList;
    if (classes.contains("theme--dark") || classes.contains("theme--dim")) return "dark";
    if (classes.contains("theme--light")) return "light";
    return null;
  },
};
