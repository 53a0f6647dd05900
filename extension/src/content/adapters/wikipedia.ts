// Wikipedia articles (spec 3.12): static HTML, identity from MediaWiki's page
// config, text from #mw-content-text .mw-parser-output with appendix sections
// and non-article elements pruned by the same rules the server applies to the
// Parse API HTML of the pinned revision. Captions and htmlContent read the
// article as the reference client prunes it, so both clients register the
// same version of the same page.

import { extractContent } from "../../lib/dom-text";
import { normalizeContent, utf8ByteLength } from "../../lib/normalize";
import { MAX_OPTIONAL_HTML_BYTES, type WikipediaMetadata } from "../../lib/platform";
import { WikipediaTextFilter, isExcludedWikipediaElement, pruneWikipediaArticle } from "../../lib/wikipedia-filter";
import { normalizeWikipediaTitle, parseWikipediaUrl } from "../../lib/wikipedia-url";
import { MEDIA_SELECTOR, documentUrl, mediaStateOf } from "./dom-utils";
import { type AdapterExtractionResult, type PlatformAdapter, notReady } from "./model";
import { mediaWikiTimestampToIso, positiveIdString, readMwConfig } from "./mw-config";

const CONTENT_ROOT_SELECTOR = "#mw-content-text .mw-parser-output";
// Timed media players wrap audio and video; pronunciation buttons carry <audio>.
const WIKIPEDIA_MEDIA_SELECTOR = `${MEDIA_SELECTOR}, .mw-tmh-player`;

export const wikipediaAdapter: PlatformAdapter = {
  platformKey: "WIKIPEDIA",
  contentRootSelector: CONTENT_ROOT_SELECTOR,

  matches(url: string): boolean {
    return parseWikipediaUrl(url) !== null;
  },

  getContentRoot(document: Document): Element | null {
    return document.querySelector(CONTENT_ROOT_SELECTOR);
  },

  extract(document: Document): AdapterExtractionResult {
    const url = documentUrl(document);
    const identity = parseWikipediaUrl(url);
    if (identity === null) return notReady("missing_identity");

    const config = readMwConfig(document);
    const namespace = config["wgNamespaceNumber"];
    if (typeof namespace === "number" && namespace !== 0) return notReady("unsupported");
    const action = config["wgAction"];
    if (typeof action === "string" && action !== "view") return notReady("unsupported"); // edit, history, ...

    const root = this.getContentRoot(document);
    if (root === null) return notReady("hydrating");

    const pageId = positiveIdString(config["wgArticleId"]);
    const revisionId = positiveIdString(config["wgRevisionId"]);
    if (pageId === null || revisionId === null) return notReady("missing_identity");
    // The page's own name wins over the URL's: after a redirect the URL names the redirect.
    const pageName = config["wgPageName"];
    const title = (typeof pageName === "string" ? normalizeWikipediaTitle(pageName) : null) ?? identity.title;
    if (title === null) return notReady("missing_identity");

    const extracted = extractContent(root, {
      filter: new WikipediaTextFilter(),
      baseUrl: document.baseURI,
      captionExcludes: isExcludedWikipediaElement,
    });

    const metadata: WikipediaMetadata = { language: identity.language, title, pageId, revisionId };
    const displayTitle = normalizeContent(document.querySelector("#firstHeading")?.textContent ?? "");
    if (displayTitle.length > 0) metadata.displayTitle = displayTitle;
    const lastModifiedAt = mediaWikiTimestampToIso(config["wgRevisionTimestamp"]);
    if (lastModifiedAt !== null) metadata.lastModifiedAt = lastModifiedAt;
    // The article's content as the reference client sends it: without styles,
    // citation markers, navboxes, edit links or appendix sections.
    const html = pruneWikipediaArticle(root).innerHTML;
    if (utf8ByteLength(html) <= MAX_OPTIONAL_HTML_BYTES) metadata.htmlContent = html;

    return {
      kind: "ready",
      content: {
        platform: "WIKIPEDIA",
        externalId: `${identity.language}:${pageId}`,
        url,
        contentText: extracted.contentText,
        // Media anywhere in the article: the player MediaWiki draws (pruned from
        // text and htmlContent) replaces the <audio> it wraps.
        mediaState: mediaStateOf(root.querySelector(WIKIPEDIA_MEDIA_SELECTOR) !== null, extracted.imageUrls),
        imageUrls: extracted.imageUrls,
        imageOccurrences: extracted.imageOccurrences,
        metadata,
      },
    };
  },
};
