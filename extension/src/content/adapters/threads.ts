// Threads (threads.com, formerly threads.net): a React app with generated
// class names. Each post, in feeds, threads and on post pages, is a
// [data-pressable-container="true"] box; a post quoted inside another is a
// box of its own inside it. The hooks used here are those boxes, the
// author link (/@{username}), the timestamp permalink
// (/@{username}/post/{code} around a <time datetime>), the text spans
// (span[dir="auto"] outside links and buttons) and the action buttons'
// icon labels (Like, Reply, Repost, Share).

import { resolveImageUrl } from "../../lib/dom-text";
import type { ImageOccurrence } from "../../lib/hash";
import { normalizeContent } from "../../lib/normalize";
import type { ThreadsMetadata } from "../../lib/platform";
import { documentUrl, mediaStateOf, parseExactCount, toIsoTimestamp } from "./dom-utils";
import { type FeedAdapter, type FeedPostIdentity, type Theme, outermost, ownedBy } from "./feed-model";
import { type AdapterExtractionResult, notReady } from "./model";

const HOSTS = new Set(["threads.net", "www.threads.net", "threads.com", "www.threads.com"]);
const POST_SELECTOR = '[data-pressable-container="true"]';
// The identity syntax the server accepts (events/content/social.go).
const CODE = /^[A-Za-z0-9_-]{5,64}$/;
const USERNAME = /^[a-z0-9._]{1,30}$/;
/** Elements whose text is never the post's: links (author, timestamp, topic), buttons (counts, Translate, More), time. */
const NOT_TEXT = 'a, time, button, [role="button"], [role="link"], h1, h2, h3, h4, h5, h6';

export interface ThreadsPostUrl {
  /** Lowercased, without the @. */
  username: string;
  code: string;
}

export function normalizeThreadsUsername(raw: string): string | null {
  const username = raw.trim().replace(/^@/, "").trim().toLowerCase();
  return USERNAME.test(username) ? username : null;
}

/** The author and code of a post URL (absolute, or a path on the site); null for anything else. */
export function parseThreadsPostUrl(raw: string, base = "https://www.threads.com/"): ThreadsPostUrl | null {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" || !HOSTS.has(url.hostname.toLowerCase())) return null;
  const match = /^\/@([^/]+)\/post\/([^/]+)\/?$/.exec(url.pathname);
  if (match?.[1] === undefined || match[2] === undefined) return null;
  let user: string;
  try {
    user = decodeURIComponent(match[1]);
  } catch {
    return null;
  }
  const username = normalizeThreadsUsername(user);
  const code = match[2];
  return username === null || !CODE.test(code) ? null : { username, code };
}

/** The canonical page of a post (threads.com, the site's current name). */
export function threadsPostPageUrl(username: string, code: string): string {
  return `https://www.threads.com/@${username}/post/${code}`;
}

function profileOf(href: string | null, base: string): string | null {
  if (href === null) return null;
  try {
    const url = new URL(href, base);
    if (!HOSTS.has(url.hostname.toLowerCase())) return null;
    const match = /^\/@([^/]+)\/?$/.exec(url.pathname);
    return match?.[1] === undefined ? null : normalizeThreadsUsername(decodeURIComponent(match[1]));
  } catch {
    return null;
  }
}

/** Elements of the post itself, not of a post it quotes. */
function own(post: Element, selector: string): Element[] {
  return Array.from(post.querySelectorAll(selector)).filter((el) =>
    ownedBy(el, post, (e) => e !== post && e.matches(POST_SELECTOR)),
  );
}

function authorOf(post: Element, base: string): string | null {
  for (const link of own(post, "a[href]")) {
    const username = profileOf(link.getAttribute("href"), base);
    if (username !== null) return username;
  }
  return null;
}

/** The timestamp permalink: a link to a post of the author around a <time>. */
function permalinkOf(post: Element, base: string, author: string | null): { url: ThreadsPostUrl; link: Element } | null {
  let fallback: { url: ThreadsPostUrl; link: Element } | null = null;
  for (const link of own(post, "a[href]")) {
    const url = parseThreadsPostUrl(link.getAttribute("href") ?? "", base);
    if (url === null || (author !== null && url.username !== author)) continue;
    if (link.querySelector("time") !== null) return { url, link };
    fallback ??= { url, link };
  }
  return fallback;
}

function locate(post: Element, document: Document): { url: ThreadsPostUrl; link: Element | null } | null {
  const base = documentUrl(document);
  const author = authorOf(post, base);
  const found = permalinkOf(post, base, author);
  if (found !== null) return found;
  // A post page's focal post may show no permalink: the page's URL names it.
  const page = parseThreadsPostUrl(base);
  if (page !== null && author !== null && page.username === author) return { url: page, link: null };
  return null;
}

/** The text spans of the post: outermost span[dir=auto] outside links, buttons and quoted posts. */
function textSpans(post: Element): Element[] {
  const spans = Array.from(post.querySelectorAll('span[dir="auto"]')).filter((span) =>
    ownedBy(span, post, (e) => e.matches(NOT_TEXT) || e.matches(POST_SELECTOR)),
  );
  return outermost(spans);
}

/** The count next to an action button whose icon has one of the labels. */
function countOf(post: Element, labels: readonly string[]): number | null {
  const button = actionButton(post, labels);
  if (button === null) return null;
  // The icon's <title> is text too: read the button without its icons.
  const copy = button.cloneNode(true) as Element;
  copy.querySelectorAll("svg").forEach((svg) => svg.remove());
  return parseExactCount(normalizeContent(copy.textContent ?? ""));
}

function actionButton(post: Element, labels: readonly string[]): Element | null {
  for (const icon of own(post, "svg[aria-label]")) {
    if (!labels.includes(icon.getAttribute("aria-label") ?? "")) continue;
    const button = icon.closest('[role="button"], button');
    if (button !== null && post.contains(button)) return button;
  }
  return null;
}

function isContentImage(image: Element, base: string): boolean {
  if (/profile picture/i.test(image.getAttribute("alt") ?? "")) return false;
  const link = image.closest("a[href]");
  return link === null || profileOf(link.getAttribute("href"), base) === null;
}

export const threadsAdapter: FeedAdapter = {
  platformKey: "THREADS",

  matches(url: string): boolean {
    try {
      const parsed = new URL(url);
      return parsed.protocol === "https:" && HOSTS.has(parsed.hostname.toLowerCase());
    } catch {
      return false;
    }
  },

  findPosts(document: Document): Element[] {
    const base = documentUrl(document);
    // A pressable box is a post when it names an author (suggested-account boxes and the like name none).
    const boxes = Array.from(document.querySelectorAll(POST_SELECTOR));
    return outermost(boxes).filter((box) => authorOf(box, base) !== null);
  },

  identify(post: Element, document: Document): FeedPostIdentity | null {
    const located = locate(post, document);
    return located === null ? null : { externalId: located.url.code, url: threadsPostPageUrl(located.url.username, located.url.code) };
  },

  extract(post: Element, document: Document): AdapterExtractionResult {
    const base = documentUrl(document);
    const located = locate(post, document);
    if (located === null) return notReady("missing_identity");
    const { url, link } = located;

    const contentText = normalizeContent(textSpans(post).map((span) => normalizeContent(span.textContent ?? "")).join(" "));

    const imageOccurrences: ImageOccurrence[] = [];
    for (const image of own(post, "img[src]")) {
      if (!isContentImage(image, base) || imageOccurrences.length >= 256) continue;
      const sourceUrl = resolveImageUrl(image.getAttribute("src"), base);
      if (sourceUrl === null) continue;
      const occurrence: ImageOccurrence = { originalIndex: imageOccurrences.length, normalizedTextOffset: contentText.length, sourceUrl };
      const alt = normalizeContent(image.getAttribute("alt") ?? "");
      if (alt.length > 0) occurrence.captionText = alt;
      imageOccurrences.push(occurrence);
    }
    const imageUrls = [...new Set(imageOccurrences.map((o) => o.sourceUrl))];
    const hasVideo = own(post, "video").length > 0;

    const metadata: ThreadsMetadata = { username: url.username };
    const postedAt = toIsoTimestamp(link?.querySelector("time[datetime]")?.getAttribute("datetime"));
    if (postedAt !== null) metadata.postedAt = postedAt;
    const likeCount = countOf(post, ["Like", "Unlike"]);
    if (likeCount !== null) metadata.likeCount = likeCount;
    const replyCount = countOf(post, ["Reply", "Comment"]);
    if (replyCount !== null) metadata.replyCount = replyCount;
    const repostCount = countOf(post, ["Repost"]);
    if (repostCount !== null) metadata.repostCount = repostCount;

    return {
      kind: "ready",
      content: {
        platform: "THREADS",
        externalId: url.code,
        url: threadsPostPageUrl(url.username, url.code),
        contentText,
        mediaState: mediaStateOf(hasVideo, imageUrls),
        imageUrls,
        imageOccurrences,
        metadata,
      },
    };
  },

  actionRow(post: Element): Element | null {
    const like = actionButton(post, ["Like", "Unlike"]);
    const reply = actionButton(post, ["Reply", "Comment"]);
    if (like === null || reply === null) return null;
    for (let row = like.parentElement; row !== null && row !== post; row = row.parentElement) {
      if (row.contains(reply)) return row;
    }
    return null;
  },

  siteTheme(document: Document): Theme | null {
    const classes = document.documentElement.classList;
    if (classes.contains("__fb-dark-mode")) return "dark";
    if (classes.contains("__fb-light-mode")) return "light";
    return null;
  },
};
