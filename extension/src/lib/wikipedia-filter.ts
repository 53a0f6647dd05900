// Wikipedia pruning: appendix sections and non-article elements are left out
// of the text. The rules are the server's (events/content/wikipedia.go),
// applied to the live DOM instead of a parse tree, so the rendered article
// and the Parse API HTML of the same revision give the same text.

import { normalizeContent } from "./normalize";
import type { TextFilter } from "./dom-text";

const ELEMENT_NODE = 1;

/**
 * Appendix sections (compared normalized and lower-cased). "See also" is
 * deliberately not among them: it describes related topics.
 */
const EXCLUDED_SECTIONS: ReadonlySet<string> = new Set([
  "references",
  "notes",
  "further reading",
  "external links",
  "bibliography",
  "sources",
  "citations",
]);

/** Class tokens of elements that are never article prose (matched case-insensitively). */
const EXCLUDED_CLASSES: ReadonlySet<string> = new Set([
  "mw-editsection",
  "catlinks",
  "printfooter",
  "references",
  "mw-references-wrap",
  "reflist",
  "noprint",
  "navbox",
  "vertical-navbox",
  "mw-collapsible-toggle",
  "mw-tmh-player",
]);

const NON_CONTENT = new Set(["script", "style", "noscript"]);

/** The class attribute split on whitespace (the JavaScript \s set, like the server). */
function classTokens(element: Element): string[] {
  return (element.getAttribute("class") ?? "").split(/\s+/).filter((t) => t.length > 0);
}

function hasClassToken(tokens: readonly string[], wanted: string): boolean {
  return tokens.some((t) => t.toLowerCase() === wanted);
}

/** 2..6 for h2..h6, else 0 (an h1 is the page title, never a section boundary). */
function headingLevel(element: Element): number {
  const match = /^[hH]([2-6])$/.exec(element.localName);
  return match?.[1] === undefined ? 0 : Number(match[1]);
}

/**
 * A section heading is a bare h2..h6, or MediaWiki's newer
 * <div class="mw-heading"> wrapper, whose first heading child gives the level
 * and the title (the wrapper also holds the [edit] link, not part of the title).
 */
function sectionHeading(element: Element, tokens: readonly string[]): { level: number; title: Element } | null {
  const level = headingLevel(element);
  if (level > 0) return { level, title: element };
  if (element.localName.toLowerCase() !== "div" || !hasClassToken(tokens, "mw-heading")) return null;
  for (const child of Array.from(element.children)) {
    const childLevel = headingLevel(child);
    if (childLevel > 0) return { level: childLevel, title: child };
  }
  return null;
}

/** Whether a heading's raw text names an excluded section (normalized and lower-cased twice, as the server does). */
export function isExcludedWikipediaSection(rawTitle: string): boolean {
  const title = normalizeContent(rawTitle).toLowerCase();
  return EXCLUDED_SECTIONS.has(normalizeContent(title).toLowerCase());
}

function isExcludedElement(element: Element, tokens: readonly string[]): boolean {
  const name = element.localName.toLowerCase();
  if (NON_CONTENT.has(name)) return true;
  if (name === "sup" && hasClassToken(tokens, "reference")) return true; // citation markers such as [1]
  return tokens.some((t) => EXCLUDED_CLASSES.has(t.toLowerCase()));
}

/**
 * Whether an element is never article prose, whatever section it is in:
 * script, style and noscript, citation markers (sup.reference) and the
 * non-article classes (navboxes, edit links, reference lists, ...).
 */
export function isExcludedWikipediaElement(element: Element): boolean {
  return isExcludedElement(element, classTokens(element));
}

/**
 * Stateful document-order filter: once an excluded section heading is seen,
 * everything is skipped until a heading of the same or a higher level (a
 * smaller number) starts the next section. Use a fresh instance per walk.
 */
export class WikipediaTextFilter implements TextFilter {
  private skipLevel = 0;

  skip(node: Node): boolean {
    if (node.nodeType !== ELEMENT_NODE) return this.skipLevel > 0;
    const element = node as Element;
    const tokens = classTokens(element);
    const heading = sectionHeading(element, tokens);
    if (heading !== null) {
      if (this.skipLevel > 0 && heading.level <= this.skipLevel) this.skipLevel = 0;
      if (isExcludedWikipediaSection(heading.title.textContent ?? "")) {
        this.skipLevel = heading.level;
        return true;
      }
    }
    return this.skipLevel > 0 || isExcludedElement(element, tokens);
  }
}

/** The section heading an element of a section's sibling run starts, if any (see sectionHeading). */
function sectionHeadingOf(element: Element): { level: number; title: Element } | null {
  return sectionHeading(element, classTokens(element));
}

/**
 * A copy of the article as the reference client prunes it before it reads
 * captions and serializes htmlContent: every excluded element (see
 * isExcludedWikipediaElement) is removed, then every excluded section: its
 * heading (or the mw-heading wrapper around it) and the element siblings
 * that follow, up to the next heading of the same or a higher level. Only
 * elements go; the whitespace and comments between them stay. The page's
 * own DOM is never touched (the copy is detached: its images are the
 * page's, already loaded, and MediaWiki's players preload nothing).
 */
export function pruneWikipediaArticle(root: Element): Element {
  const copy = root.cloneNode(true) as Element;

  // Excluded elements, top-most first: a removed subtree is not visited.
  const stack: Element[] = Array.from(copy.children).reverse();
  while (stack.length > 0) {
    const element = stack.pop();
    if (element === undefined) break;
    if (isExcludedWikipediaElement(element)) {
      element.remove();
      continue;
    }
    const children = element.children;
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const child = children[i];
      if (child !== undefined) stack.push(child);
    }
  }

  // Excluded sections, in document order; a heading removed with an earlier section is skipped.
  for (const heading of Array.from(copy.querySelectorAll("h2, h3, h4, h5, h6"))) {
    if (!copy.contains(heading)) continue;
    const level = headingLevel(heading);
    if (!isExcludedWikipediaSection(heading.textContent ?? "")) continue;
    const parent = heading.parentElement;
    const wrapper = parent !== null && parent !== copy ? sectionHeadingOf(parent) : null;
    let cursor: Element | null = wrapper !== null && wrapper.title === heading ? (parent as Element) : heading;
    while (cursor !== null) {
      const next: Element | null = cursor.nextElementSibling;
      cursor.remove();
      const nextHeading = next === null ? null : sectionHeadingOf(next);
      if (nextHeading !== null && nextHeading.level <= level) break;
      cursor = next;
    }
  }
  return copy;
}
