// X status pages (spec 3.10): a React SPA whose markup changes often; the
// hooks used here are X's data-testid attributes, which are the most stable
// thing it offers and still fragile. Only the focal post of /status/{id} is
// read; replies, and any quoted post inside the focal one, are not.

import { extractContent, imageCaption, resolveImageUrl } from "../../lib/dom-text";
import type { ImageOccurrence } from "../../lib/hash";
import { normalizeContent } from "../../lib/normalize";
import type { XMetadata } from "../../lib/platform";
import { documentUrl, mediaStateOf, parseExactCount, toIsoTimestamp } from "./dom-utils";
import { type AdapterExtractionResult, type AdapterNotReadyReason, type PlatformAdapter, notReady } from "./model";

const TWEET_TEXT_SELECTOR = '[data-testid="tweetText"]';
const HOSTS = new Set(["x.com", "twitter.com", "mobile.x.com", "mobile.twitter.com", "www.x.com", "www.twitter.com"]);
const HANDLE = /^[A-Za-z0-9_]{1,15}$/;
// First path segments that are X's own routes, never a user handle.
const RESERVED_SEGMENTS = new Set([
  "i",
  "home",
  "explore",
  "search",
  "notifications",
  "messages",
  "settings",
  "compose",
  "intent",
  "login",
  "signup",
  "hashtag",
]);
const PRIVATE_OR_GATED_PATTERNS = [
  /these (?:posts|tweets) are protected/i,
  /only (?:confirmed|approved) followers (?:have access|can see)/i,
  /account owner limits who can view/i,
  /you(?:'|’)re unable to view this (?:post|tweet)/i,
];
// A quoted post sits inside the focal article as a clickable card,
// div[role="link"] (X's own anchors carry role="link" too, so the tag matters).
const QUOTED_POST_SELECTOR = 'div[role="link"]';
const VIDEO_SELECTOR = '[data-testid="videoPlayer"], [data-testid="videoComponent"], video';

export interface XStatusUrl {
  tweetId: string;
  /** The handle in the path, or null for /i/web/status/{id}. */
  handle: string | null;
}

export function parseXStatusUrl(raw: string): XStatusUrl | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (!HOSTS.has(url.hostname.toLowerCase())) return null;
  const segments = url.pathname.split("/").filter((s) => s.length > 0);
  // /i/web/status/{id} and /i/status/{id}
  if (segments[0] === "i") {
    const at = segments.indexOf("status");
    const id = at >= 0 ? segments[at + 1] : undefined;
    return id !== undefined && /^\d+$/.test(id) ? { tweetId: id, handle: null } : null;
  }
  const [handle, status, id] = segments;
  if (handle === undefined || status !== "status" || id === undefined || !/^\d+$/.test(id)) return null;
  if (!HANDLE.test(handle) || RESERVED_SEGMENTS.has(handle.toLowerCase())) return null;
  return { tweetId: id, handle };
}

function statusIdOfHref(href: string | null, base: string): string | null {
  if (href === null) return null;
  try {
    const url = new URL(href, base);
    const segments = url.pathname.split("/").filter((s) => s.length > 0);
    const at = segments.indexOf("status");
    const id = at >= 0 ? segments[at + 1] : undefined;
    return id !== undefined && /^\d+$/.test(id) ? id : null;
  } catch {
    return null;
  }
}

function insideQuotedPost(element: Element, article: Element): boolean {
  const card = element.closest(QUOTED_POST_SELECTOR);
  return card !== null && card !== article && article.contains(card);
}

/** Elements of the focal post itself (not of a quoted post inside it). */
function ownElements(article: Element, selector: string): Element[] {
  return Array.from(article.querySelectorAll(selector)).filter((el) => !insideQuotedPost(el, article));
}

/**
 * The article of the focal post: the one whose timestamp links to the status
 * id (a post's own permalink wraps its <time>). Replies and the thread above
 * link to other ids.
 */
function focalArticle(document: Document, tweetId: string): Element | AdapterNotReadyReason {
  const base = documentUrl(document);
  const articles = Array.from(document.querySelectorAll("article"));
  const byPermalink = articles.filter((article) =>
    ownElements(article, "a[href] time").some(
      (time) => statusIdOfHref(time.closest("a")?.getAttribute("href") ?? null, base) === tweetId,
    ),
  );
  if (byPermalink.length > 1) return "ambiguous_dom";
  const article = byPermalink[0];
  return article ?? "hydrating";
}

function displayNameOf(article: Element): string | null {
  for (const link of Array.from(article.querySelectorAll('[data-testid="User-Name"] a'))) {
    const text = normalizeContent(link.textContent ?? "");
    if (text.length > 0 && !text.startsWith("@")) return text;
  }
  return null;
}

function handleFromUserName(article: Element): string | null {
  for (const link of Array.from(article.querySelectorAll('[data-testid="User-Name"] a[href^="/"]'))) {
    const segment = (link.getAttribute("href") ?? "").split("/").filter((s) => s.length > 0)[0];
    if (segment !== undefined && HANDLE.test(segment) && !RESERVED_SEGMENTS.has(segment.toLowerCase())) {
      return segment;
    }
  }
  return null;
}

function countOf(article: Element, testIds: readonly string[]): number | null {
  for (const testId of testIds) {
    const button = ownElements(article, `[data-testid="${testId}"]`)[0];
    if (button === undefined) continue;
    const count = parseExactCount(button.getAttribute("aria-label"));
    if (count !== null) return count;
  }
  return null;
}

function isContentImage(image: Element): boolean {
  return image.closest('[data-testid="tweetPhoto"]') !== null;
}

export const xAdapter: PlatformAdapter = {
  platformKey: "X",
  contentRootSelector: TWEET_TEXT_SELECTOR,

  matches(url: string): boolean {
    return parseXStatusUrl(url) !== null;
  },

  detectPrivateOrGated(document: Document): boolean {
    const status = parseXStatusUrl(documentUrl(document));
    if (status === null) return false;
    if (typeof focalArticle(document, status.tweetId) !== "string") return false; // the post is visible
    const scope = document.querySelector('[data-testid="primaryColumn"]') ?? document.body;
    const text = normalizeContent(scope?.textContent ?? "");
    return PRIVATE_OR_GATED_PATTERNS.some((pattern) => pattern.test(text));
  },

  getContentRoot(document: Document): Element | null {
    const status = parseXStatusUrl(documentUrl(document));
    if (status === null) return null;
    const article = focalArticle(document, status.tweetId);
    return typeof article === "string" ? null : (ownElements(article, TWEET_TEXT_SELECTOR)[0] ?? null);
  },

  extract(document: Document): AdapterExtractionResult {
    const url = documentUrl(document);
    const status = parseXStatusUrl(url);
    if (status === null) return notReady("unsupported");
    const article = focalArticle(document, status.tweetId);
    if (typeof article === "string") return notReady(article);

    const handle = status.handle ?? handleFromUserName(article);
    if (handle === null) return notReady("missing_identity");

    const textRoot = ownElements(article, TWEET_TEXT_SELECTOR)[0];
    // Emoji are <img> inside the text; they are not post images.
    const contentText =
      textRoot === undefined
        ? ""
        : extractContent(textRoot, { baseUrl: document.baseURI, isContentImage: () => false }).contentText;

    // Attached photos come after the text, so they all sit at its end.
    const imageOccurrences: ImageOccurrence[] = [];
    for (const image of ownElements(article, "img")) {
      if (!isContentImage(image) || imageOccurrences.length >= 256) continue;
      const sourceUrl = resolveImageUrl(image.getAttribute("src"), document.baseURI);
      if (sourceUrl === null) continue;
      const occurrence: ImageOccurrence = {
        originalIndex: imageOccurrences.length,
        normalizedTextOffset: contentText.length,
        sourceUrl,
      };
      const caption = imageCaption(image);
      if (caption !== undefined && caption !== "Image") occurrence.captionText = caption; // "Image" is X's placeholder alt
      imageOccurrences.push(occurrence);
    }
    const imageUrls = [...new Set(imageOccurrences.map((o) => o.sourceUrl))];
    const hasVideo = ownElements(article, VIDEO_SELECTOR).length > 0;

    const metadata: XMetadata = {
      authorHandle: handle,
      authorDisplayName: displayNameOf(article),
      text: contentText,
      mediaUrls: imageUrls,
    };
    const likeCount = countOf(article, ["like", "unlike"]);
    if (likeCount !== null) metadata.likeCount = likeCount;
    const retweetCount = countOf(article, ["retweet", "unretweet"]);
    if (retweetCount !== null) metadata.retweetCount = retweetCount;
    const permalinkTime = ownElements(article, "a[href] time[datetime]").find(
      (time) => statusIdOfHref(time.closest("a")?.getAttribute("href") ?? null, url) === status.tweetId,
    );
    const postedAt = toIsoTimestamp(permalinkTime?.getAttribute("datetime"));
    if (postedAt !== null) metadata.postedAt = postedAt;

    return {
      kind: "ready",
      content: {
        platform: "X",
        externalId: status.tweetId,
        url,
        contentText,
        mediaState: mediaStateOf(hasVideo, imageUrls),
        imageUrls,
        imageOccurrences,
        metadata,
      },
    };
  },
};
