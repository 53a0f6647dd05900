// LessWrong posts (spec 3.9): React renders the post body as static HTML
// inside .PostsPage-postContent. The API is sent that body's HTML
// (metadata.htmlContent) and no observed text: the server derives the text
// from its own GraphQL fetch, or from this HTML when it cannot fetch.

import { extractContent } from "../../lib/dom-text";
import { normalizeContent } from "../../lib/normalize";
import type { LessWrongMetadata } from "../../lib/platform";
import {
  MEDIA_SELECTOR,
  documentUrl,
  findJsonLdString,
  firstMetaDate,
  firstTimeElementDate,
  isRecord,
  jsonLdBlocks,
  mediaStateOf,
  toIsoTimestamp,
} from "./dom-utils";
import { type AdapterExtractionResult, type PlatformAdapter, notReady } from "./model";

const CONTENT_ROOT_SELECTOR = ".PostsPage-postContent";
const HOST = /^(?:www\.)?lesswrong\.com$/i;
const POST_PATH = /^\/posts\/([A-Za-z0-9]+)(?:\/([^/?#]*))?\/?$/;
// Client-rendered blocks inside the body that are not part of the post's HTML
// on LessWrong's servers (the linkpost callout).
const NON_POST_BLOCKS = ".LinkPostMessage-root";
const AUTHOR_LINK_SELECTORS = [
  '.PostsAuthors-authorName a[href*="/users/"]',
  '.LWPostsPageHeader-authorInfo a[href*="/users/"]',
  '.PostsAuthors-root a[href*="/users/"]',
];
const DATE_META_SELECTORS = [
  'meta[property="article:published_time"]',
  'meta[name="article:published_time"]',
  'meta[property="og:article:published_time"]',
];

export interface LessWrongPostUrl {
  postId: string;
  slug: string | null;
}

export function parseLessWrongPostUrl(raw: string): LessWrongPostUrl | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (!HOST.test(url.hostname)) return null;
  const match = POST_PATH.exec(url.pathname);
  const postId = match?.[1];
  if (postId === undefined) return null;
  const slug = match?.[2];
  return { postId, slug: slug === undefined || slug.length === 0 ? null : slug };
}

/** Post ids named by the page's JSON-LD (LessWrong describes the open post there). */
function jsonLdPostIds(document: Document): Set<string> {
  const ids = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach(visit);
      return;
    }
    if (!isRecord(value)) return;
    for (const key of ["url", "@id", "mainEntityOfPage"]) {
      const candidate = value[key];
      if (typeof candidate === "string") {
        const parsed = parseLessWrongPostUrl(candidate);
        if (parsed !== null) ids.add(parsed.postId);
      }
    }
  };
  jsonLdBlocks(document).forEach(visit);
  return ids;
}

/** The single post body on the page, or why there is none yet. */
function pickBody(document: Document): Element | "hydrating" | "ambiguous_dom" {
  const roots = Array.from(document.querySelectorAll(CONTENT_ROOT_SELECTOR));
  if (roots.length === 0) return "hydrating";
  const withBody = roots.filter((r) => r.querySelector("#postContent") !== null);
  const candidates = withBody.length > 0 ? withBody : roots;
  if (candidates.length > 1) return "ambiguous_dom";
  const root = candidates[0];
  if (root === undefined) return "hydrating";
  return root.querySelector("#postContent") ?? root;
}

function pickTitle(document: Document, scope: ParentNode): string | undefined {
  for (const heading of Array.from(scope.querySelectorAll("h1"))) {
    const text = normalizeContent(heading.textContent ?? "");
    if (text.length > 0) return text;
  }
  const fromDocument = normalizeContent(document.title.replace(/\s*[—|·-]\s*LessWrong\s*$/i, ""));
  return fromDocument.length > 0 ? fromDocument : undefined;
}

function pickAuthor(scope: ParentNode): { name?: string; slug: string | null } {
  for (const selector of AUTHOR_LINK_SELECTORS) {
    const link = scope.querySelector(selector);
    if (link === null) continue;
    const name = normalizeContent(link.textContent ?? "");
    const slug = /\/users\/([^/?#]+)/.exec(link.getAttribute("href") ?? "")?.[1] ?? null;
    return name.length > 0 ? { name, slug } : { slug };
  }
  return { slug: null };
}

function pickTags(scope: ParentNode, body: Element): string[] {
  const tags: string[] = [];
  for (const link of Array.from(scope.querySelectorAll('a[href*="/tag/"]'))) {
    if (body.contains(link)) continue; // a link inside the post is prose, not a tag
    const name = normalizeContent(link.textContent ?? "");
    if (name.length > 0 && !tags.includes(name)) tags.push(name);
  }
  return tags;
}

function pickPublishedAt(document: Document, scope: ParentNode): string | null {
  return (
    firstMetaDate(document, DATE_META_SELECTORS) ??
    toIsoTimestamp(findJsonLdString(jsonLdBlocks(document), ["datePublished", "dateCreated"])) ??
    firstTimeElementDate([scope, document])
  );
}

export const lesswrongAdapter: PlatformAdapter = {
  platformKey: "LESSWRONG",
  contentRootSelector: CONTENT_ROOT_SELECTOR,

  matches(url: string): boolean {
    return parseLessWrongPostUrl(url) !== null;
  },

  getContentRoot(document: Document): Element | null {
    const body = pickBody(document);
    return typeof body === "string" ? null : body;
  },

  extract(document: Document): AdapterExtractionResult {
    const url = documentUrl(document);
    const post = parseLessWrongPostUrl(url);
    if (post === null) return notReady("missing_identity");

    // After a client-side navigation the previous post can linger in the DOM
    // while the URL already names the next one; its JSON-LD tells them apart.
    const described = jsonLdPostIds(document);
    if (described.size > 0 && !described.has(post.postId)) return notReady("hydrating");

    const body = pickBody(document);
    if (typeof body === "string") return notReady(body);

    const postHtml = body.cloneNode(true) as Element;
    postHtml.querySelectorAll(NON_POST_BLOCKS).forEach((node) => node.remove());
    const extracted = extractContent(postHtml, { baseUrl: document.baseURI });

    const scope = body.closest("#postBody") ?? document;
    const author = pickAuthor(scope);
    const metadata: LessWrongMetadata = {
      slug: post.slug ?? post.postId,
      htmlContent: postHtml.innerHTML,
      authorSlug: author.slug,
      tags: pickTags(scope, body),
    };
    const title = pickTitle(document, scope);
    if (title !== undefined) metadata.title = title;
    if (author.name !== undefined) metadata.authorName = author.name;
    const publishedAt = pickPublishedAt(document, scope);
    if (publishedAt !== null) metadata.publishedAt = publishedAt;

    return {
      kind: "ready",
      content: {
        platform: "LESSWRONG",
        externalId: post.postId,
        url,
        contentText: extracted.contentText,
        mediaState: mediaStateOf(postHtml.querySelector(MEDIA_SELECTOR) !== null, extracted.imageUrls),
        imageUrls: extracted.imageUrls,
        imageOccurrences: extracted.imageOccurrences,
        metadata,
      },
    };
  },
};
