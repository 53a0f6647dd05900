// Substack posts (spec 3.11) on *.substack.com/p/* and on publishers' own
// domains, which are recognised by Substack's CDN fingerprint. The numeric
// post id comes from the social preview image URL
// (.../post_preview/{id}/twitter.jpg); paywalled views are never sent.

import { extractContent } from "../../lib/dom-text";
import { normalizeContent, utf8ByteLength } from "../../lib/normalize";
import { MAX_OPTIONAL_HTML_BYTES, type SubstackMetadata } from "../../lib/platform";
import { isSubstackPostPath, substackSlugOf } from "../../lib/substack-url";
import {
  MEDIA_SELECTOR,
  documentUrl,
  findJsonLdString,
  firstMetaDate,
  firstTimeElementDate,
  isRecord,
  jsonLdBlocks,
  mediaStateOf,
  metaContent,
  toIsoTimestamp,
} from "./dom-utils";
import { type AdapterExtractionResult, type PlatformAdapter, notReady } from "./model";

const CONTENT_ROOT_SELECTOR = ".body.markup";
const SUBSTACK_HOST = /^([a-z0-9-]+)\.substack\.com$/i;
const PUBLICATION_IN_URL = /(?:^|[^a-z0-9-])([a-z0-9-]+)\.substack\.com/i;
const POST_PREVIEW_ID = /post_preview\/(\d+)\/(?:twitter|facebook)\.(?:jpe?g|png)/i;
/** The fingerprint of a Substack page on a custom domain (spec 3.11). */
export const SUBSTACK_FINGERPRINT_SELECTOR = 'link[href*="substackcdn.com"]';
const IMAGE_META_SELECTORS = [
  'meta[name="twitter:image"]',
  'meta[property="twitter:image"]',
  'meta[property="og:image"]',
  'meta[name="og:image"]',
];
const DATE_META_SELECTORS = [
  'meta[property="article:published_time"]',
  'meta[name="article:published_time"]',
  'meta[property="og:article:published_time"]',
];
const PAYWALL_SELECTOR = '.paywall, [data-testid="paywall"], [class*="paywall"], [data-component-name="Paywall"]';
const PAYWALL_PATTERNS = [
  /this post is for paid subscribers/i,
  /this post is for paying subscribers/i,
  /subscribe to (?:continue|keep) reading/i,
  /keep reading with a (?:7|\d+)-day free trial/i,
  /already a paid subscriber\?/i,
];
const RESERVED_SUBDOMAINS = new Set(["www", "substack", "on"]);

function substackSubdomainOfHost(hostname: string): string | null {
  const sub = SUBSTACK_HOST.exec(hostname)?.[1]?.toLowerCase();
  return sub === undefined || RESERVED_SUBDOMAINS.has(sub) ? null : sub;
}

/** A value and its URL-decoded forms (preview URLs are often nested, encoded, in a CDN fetch URL). */
function decodedForms(value: string): string[] {
  const forms = [value];
  let current = value;
  for (let i = 0; i < 2; i += 1) {
    try {
      const next = decodeURIComponent(current);
      if (next === current) break;
      forms.push(next);
      current = next;
    } catch {
      break;
    }
  }
  return forms;
}

function previewImageUrls(document: Document): string[] {
  return IMAGE_META_SELECTORS.map((s) => metaContent(document, s)).filter((v): v is string => v !== null);
}

export function substackPostIdOf(document: Document): string | null {
  for (const candidate of previewImageUrls(document).flatMap(decodedForms)) {
    const id = POST_PREVIEW_ID.exec(candidate)?.[1];
    if (id !== undefined) return id;
  }
  return null;
}

function publicationSubdomainOf(document: Document, url: URL): string | null {
  const fromHost = substackSubdomainOfHost(url.hostname);
  if (fromHost !== null) return fromHost;
  // On a custom domain the publication's substack.com address still shows in
  // the page's own metadata.
  const candidates = [
    ...previewImageUrls(document),
    metaContent(document, 'meta[property="og:url"]'),
    document.querySelector('link[rel="canonical"]')?.getAttribute("href") ?? null,
    document.querySelector('link[rel="alternate"][type="application/rss+xml"]')?.getAttribute("href") ?? null,
  ].filter((v): v is string => v !== null);
  for (const candidate of candidates.flatMap(decodedForms)) {
    const sub = PUBLICATION_IN_URL.exec(candidate)?.[1]?.toLowerCase();
    if (sub !== undefined && !RESERVED_SUBDOMAINS.has(sub)) return sub;
  }
  return null;
}

function isHidden(element: Element): boolean {
  return element.closest('[hidden], [aria-hidden="true"]') !== null;
}

function authorNameOf(document: Document): string | null {
  const fromMeta = normalizeContent(metaContent(document, 'meta[name="author"]') ?? "");
  if (fromMeta.length > 0) return fromMeta;
  for (const block of jsonLdBlocks(document)) {
    const blocks = Array.isArray(block) ? block : [block];
    for (const item of blocks) {
      if (!isRecord(item)) continue;
      const author = Array.isArray(item["author"]) ? item["author"][0] : item["author"];
      if (isRecord(author) && typeof author["name"] === "string") {
        const name = normalizeContent(author["name"]);
        if (name.length > 0) return name;
      }
    }
  }
  return null;
}

function authorHandleOf(document: Document, body: Element): string | null {
  for (const link of Array.from(document.querySelectorAll('a[href*="substack.com/@"]'))) {
    if (body.contains(link)) continue; // mentions inside the post are not the byline
    const handle = /substack\.com\/@([A-Za-z0-9_.-]+)/.exec(link.getAttribute("href") ?? "")?.[1];
    if (handle !== undefined) return handle;
  }
  return null;
}

export const substackAdapter: PlatformAdapter = {
  platformKey: "SUBSTACK",
  contentRootSelector: CONTENT_ROOT_SELECTOR,

  matches(url: string): boolean {
    try {
      const parsed = new URL(url);
      return substackSubdomainOfHost(parsed.hostname) !== null && isSubstackPostPath(parsed.pathname);
    } catch {
      return false;
    }
  },

  /** Custom domains: a /p/{slug} page that loads Substack's CDN assets. */
  detectFromDom(document: Document): boolean {
    return (
      substackSlugOf(documentUrl(document)) !== null && document.querySelector(SUBSTACK_FINGERPRINT_SELECTOR) !== null
    );
  },

  detectPrivateOrGated(document: Document): boolean {
    for (const marker of Array.from(document.querySelectorAll(PAYWALL_SELECTOR))) {
      if (isHidden(marker)) continue;
      const text = normalizeContent(marker.textContent ?? "");
      if (PAYWALL_PATTERNS.some((p) => p.test(text))) return true;
    }
    return false;
  },

  getContentRoot(document: Document): Element | null {
    return document.querySelector(CONTENT_ROOT_SELECTOR);
  },

  extract(document: Document): AdapterExtractionResult {
    const href = documentUrl(document);
    const slug = substackSlugOf(href);
    if (slug === null) return notReady("unsupported");
    const roots = document.querySelectorAll(CONTENT_ROOT_SELECTOR);
    if (roots.length > 1) return notReady("ambiguous_dom");
    const body = roots[0];
    if (body === undefined) return notReady("hydrating");

    const url = new URL(href);
    const postId = substackPostIdOf(document);
    const publicationSubdomain = publicationSubdomainOf(document, url);
    if (postId === null || publicationSubdomain === null) return notReady("missing_identity");

    const title = normalizeContent(
      document.querySelector("h1.post-title")?.textContent ?? metaContent(document, 'meta[property="og:title"]') ?? "",
    );
    const authorName = authorNameOf(document);
    if (title.length === 0 || authorName === null) return notReady("hydrating");

    const extracted = extractContent(body, { baseUrl: document.baseURI });
    const metadata: SubstackMetadata = {
      substackPostId: postId,
      publicationSubdomain,
      slug,
      title,
      authorName,
    };
    const subtitle = normalizeContent(document.querySelector("h3.subtitle, h2.subtitle")?.textContent ?? "");
    if (subtitle.length > 0) metadata.subtitle = subtitle;
    const html = body.innerHTML;
    if (utf8ByteLength(html) <= MAX_OPTIONAL_HTML_BYTES) metadata.htmlContent = html;
    const handle = authorHandleOf(document, body);
    if (handle !== null) metadata.authorSubstackHandle = handle;
    const publishedAt =
      firstMetaDate(document, DATE_META_SELECTORS) ??
      toIsoTimestamp(findJsonLdString(jsonLdBlocks(document), ["datePublished"])) ??
      firstTimeElementDate([body.closest("article") ?? document, document]);
    if (publishedAt !== null) metadata.publishedAt = publishedAt;

    return {
      kind: "ready",
      content: {
        platform: "SUBSTACK",
        externalId: postId,
        url: href,
        contentText: extracted.contentText,
        mediaState: mediaStateOf(body.querySelector(MEDIA_SELECTOR) !== null, extracted.imageUrls),
        imageUrls: extracted.imageUrls,
        imageOccurrences: extracted.imageOccurrences,
        metadata,
      },
    };
  },
};
