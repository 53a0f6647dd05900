// The pages the end-to-end tests serve, at their real URLs: the saved real
// LessWrong and Wikipedia documents from ../../shared/fixtures/openerrata/
// and the saved X and Substack pages in ./fixtures/.
//
// Both saved Wikipedia articles carry audio players and run past 10,000
// words, so the extension rightly skips them as they are (has_video). The
// unmodified Einstein article is served at its mobile URL to show exactly
// that; at the article URLs the tests serve the same real documents with the
// audio boxes removed and the last sections cut until the text is under the
// word limit, which is what a reader of a shorter, audio-free revision sees.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { JSDOM } from "jsdom";
import { wikipediaAdapter } from "../../src/content/adapters/wikipedia";
import { WORD_COUNT_LIMIT, wordCount } from "../../src/lib/normalize";
import { skipReasonFor } from "../../src/lib/skip";
import { normalizedTextOf } from "../../src/lib/dom-text";
import { WikipediaTextFilter } from "../../src/lib/wikipedia-filter";
import { loadPage, readLocalFixture, readSharedFixture } from "../fixtures";

const here = dirname(fileURLToPath(import.meta.url));

export interface ServedPage {
  url: string;
  html: string;
}

/** LessWrong's post page around the saved post body (the body is the real document; the shell is minimal). */
export function lesswrongShell(bodyHtml: string, postUrl: string, title: string): string {
  const jsonLd = JSON.stringify({ "@context": "http://schema.org", "@type": "Article", url: postUrl, headline: title });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title} — LessWrong</title>
<script type="application/ld+json">${jsonLd}</script>
<style>
  body { margin: 0; background: #f8f4ee; color: rgba(0,0,0,.87); font: 19.5px/1.6 warnock-pro, Palatino, "Palatino Linotype", "Book Antiqua", Georgia, serif; }
  #postBody { max-width: 682px; margin: 0 auto; padding: 40px 24px; }
  .PostsPageTitle-root { font-size: 42px; line-height: 1.2; margin: 0 0 12px; }
  .PostsPageTitle-root a { color: inherit; text-decoration: none; }
  .PostsAuthors-authorName a { color: #5f9b65; font: 16px system-ui, sans-serif; text-decoration: none; }
  blockquote { border-left: 3px solid #ccc; margin: 0; padding-left: 16px; color: #555; }
  img { max-width: 100%; }
</style></head>
<body><div id="postBody">
  <h1 class="PostsPageTitle-root"><a href="${postUrl}">${title}</a></h1>
  <div class="PostsAuthors-authorName"><a href="/users/fiora-starlight">Fiora Starlight</a></div>
  <div class="PostsPage-postContent instapaper_body"><div id="postContent" class="ContentItemBody-root">${bodyHtml}</div></div>
</div></body></html>`;
}

function fixture(name: string): string {
  return readFileSync(join(here, "fixtures", name), "utf8");
}

/** The real article without its audio boxes and cut (from the end) to below the word limit. */
export function withinLimits(html: string, url: string): string {
  const dom = new JSDOM(html, { url });
  const document = dom.window.document;
  const root = wikipediaAdapter.getContentRoot(document);
  if (root === null) throw new Error(`no article in ${url}`);
  for (const media of Array.from(root.querySelectorAll("audio, video, iframe, .mw-tmh-player"))) {
    (media.closest(".side-box, figure, .listen, .haudio, [typeof='mw:File']") ?? media).remove();
  }
  const words = (): number => {
    const result = wikipediaAdapter.extract(document);
    if (result.kind !== "ready") throw new Error(`${url}: not ready: ${result.reason}`);
    if (skipReasonFor({ ...result.content, contentText: "x" }) !== null) throw new Error(`${url}: still has media`);
    return wordCount(result.content.contentText);
  };
  const target = WORD_COUNT_LIMIT - 500;
  let total = words();
  while (total > target) {
    // Estimate per element, then check with the adapter itself.
    while (total > target && root.lastElementChild !== null) {
      const last = root.lastElementChild;
      total -= wordCount(normalizedTextOf(last, new WikipediaTextFilter()));
      last.remove();
    }
    total = words();
  }
  return dom.serialize();
}

const lesswrong = loadPage("view-post-lesswrong-observed-html-1.json");
const einstein = loadPage("wikipedia-albert-einstein-page-html-1.json");
const climate = loadPage("wikipedia-climate-change-page-html-1.json");

function lazy(make: () => string): { readonly html: string } {
  let html: string | undefined;
  return {
    get html() {
      html ??= make();
      return html;
    },
  };
}

function served(url: string, make: () => string): ServedPage {
  const body = lazy(make);
  return {
    url,
    get html() {
      return body.html;
    },
  };
}

export const PAGES = {
  einstein: served(einstein.sourceUrl ?? "", () => withinLimits(einstein.html, einstein.sourceUrl ?? "")),
  /** The unmodified saved article (audio, 15,000 words): skipped. */
  einsteinAsSaved: { url: (einstein.sourceUrl ?? "").replace("://en.wikipedia", "://en.m.wikipedia"), html: einstein.html },
  climate: served(climate.sourceUrl ?? "", () => withinLimits(climate.html, climate.sourceUrl ?? "")),
  /**
   * The trimmed Einstein article OpenErrata's own extension registered
   * (…trimmed.reference-extension-register.json), at an address of its own
   * (the page's config names Albert_Einstein, as at the article URL).
   */
  einsteinReference: {
    url: "https://en.wikipedia.org/wiki/Albert_Einstein_(reference_client_copy)",
    html: readSharedFixture("wikipedia-albert-einstein-trimmed.html"),
  },
  lesswrong: {
    url: lesswrong.postUrl ?? "",
    html: lesswrongShell(lesswrong.html, lesswrong.postUrl ?? "", "Did Claude 3 Opus align itself via gradient hacking?"),
  },
  x: { url: "https://x.com/ada_l/status/1790000000000000202", html: fixture("x-status.html") },
  /** The thread's parent post: the same document, reached by an in-page navigation. */
  xParent: { url: "https://x.com/charles_b/status/1790000000000000201", html: fixture("x-status.html") },
  xVideo: { url: "https://x.com/ada_l/status/1790000000000000209", html: fixture("x-status-video.html") },
  substack: { url: "https://telegraphhistory.substack.com/p/the-cable-that-spoke-for-three-weeks", html: fixture("substack-post.html") },
  /** Bluesky's Following feed (light theme), the thread page of its first post (dark), Threads' feed (dark) and a post page (light). */
  blueskyFeed: { url: "https://bsky.app/", html: readLocalFixture("social/bluesky-feed.html") },
  blueskyThread: {
    url: "https://bsky.app/profile/marenholt.bsky.social/post/b4h4tghc6ol7k",
    html: readLocalFixture("social/bluesky-thread.html"),
  },
  threadsFeed: { url: "https://www.threads.com/", html: readLocalFixture("social/threads-feed.html") },
  threadsPost: { url: "https://www.threads.com/@kofi.mensah/post/DM7t8CdtApy", html: readLocalFixture("social/threads-post.html") },
} satisfies Record<string, ServedPage>;

/** The class each site puts on <html> for a theme (its own switch changes it in place). */
export const SITE_THEMES = {
  bluesky: { light: "theme--light", dark: "theme--dark" },
  threads: { light: "__fb-light-mode", dark: "__fb-dark-mode" },
} as const;

export type PageName = keyof typeof PAGES;

/** The page served at a URL (query and fragment ignored), or null. */
export function pageFor(url: string): ServedPage | null {
  const bare = url.replace(/[?#].*$/, "");
  return Object.values(PAGES).find((p) => p.url === bare) ?? null;
}

/** A 1x1 grey PNG for every image the pages ask for. */
export const PIXEL_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGM4ceYCAATEAmVPplKZAAAAAElFTkSuQmCC",
  "base64",
);
