// Which Wikipedia page a URL names, read the same way the server reads it
// (events/content/wikipedia_identity.go): language from the host
// ({lang}.wikipedia.org or {lang}.m.wikipedia.org), the page from /wiki/{title},
// /w/index.php?title=, or ?curid= / ?pageid= (a page id wins).

export interface WikipediaUrlIdentity {
  language: string;
  /** Underscored page name, or null when the URL names the page only by id. */
  title: string | null;
  pageId: string | null;
}

const HOST = /^([a-z0-9-]+)(?:\.m)?\.wikipedia\.org$/;
const INDEX_PATH = /^\/w\/index\.php(?:[/?#]|$)/i;

/** English prefixes of namespaces that are not articles. */
const NON_ARTICLE_NAMESPACES: ReadonlySet<string> = new Set([
  "talk",
  "user",
  "user talk",
  "wikipedia",
  "wikipedia talk",
  "file",
  "file talk",
  "mediawiki",
  "mediawiki talk",
  "template",
  "template talk",
  "help",
  "help talk",
  "category",
  "category talk",
  "portal",
  "portal talk",
  "book",
  "book talk",
  "draft",
  "draft talk",
  "education program",
  "education program talk",
  "timedtext",
  "timedtext talk",
  "module",
  "module talk",
  "special",
  "media",
]);

/** Underscores to spaces, whitespace collapsed and trimmed, spaces back to underscores; null when empty. */
export function normalizeWikipediaTitle(raw: string): string | null {
  const words = raw
    .replace(/_/g, " ")
    .split(/\s+/)
    .filter((w) => w.length > 0);
  return words.length === 0 ? null : words.join("_");
}

function pageIdFrom(raw: string | null): string | null {
  const id = raw?.trim() ?? "";
  return /^[0-9]+$/.test(id) ? id : null;
}

function isArticleTitle(title: string): boolean {
  const colon = title.indexOf(":");
  if (colon < 0) return true;
  const prefix = title.slice(0, colon).replace(/_/g, " ").trim().toLowerCase();
  return !NON_ARTICLE_NAMESPACES.has(prefix);
}

/** The page a Wikipedia article URL names, or null for other hosts, non-article namespaces and URLs naming no page. */
export function parseWikipediaUrl(raw: string): WikipediaUrlIdentity | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const host = HOST.exec(url.hostname.toLowerCase());
  const language = host?.[1];
  if (language === undefined) return null;

  const pageId =
    pageIdFrom(url.searchParams.get("curid")) ??
    (url.searchParams.has("pageid") ? pageIdFrom(url.searchParams.get("pageid")) : null);

  let title: string | null = null;
  const path = url.pathname;
  if (path.toLowerCase().startsWith("/wiki/") && path.length > "/wiki/".length) {
    try {
      title = normalizeWikipediaTitle(decodeURIComponent(path.slice("/wiki/".length)));
    } catch {
      title = null; // malformed escape
    }
  } else if (INDEX_PATH.test(path) && url.searchParams.has("title")) {
    title = normalizeWikipediaTitle(url.searchParams.get("title") ?? "");
  }

  if (title !== null && !isArticleTitle(title)) return null;
  if (pageId === null && title === null) return null;
  return { language, title, pageId };
}
