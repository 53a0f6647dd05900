// DOM (or HTML) to canonical text, the client half of the contract's "HTML to
// text" rule: text nodes are appended as decoded; entering and leaving each
// block separator element adds one space; script, style and noscript
// contribute nothing; every other element adds nothing of its own. The
// server does the same over its own parse (events/content/html.go), so the
// text of a DOM subtree equals the server's text of that subtree's HTML.

import { normalizeContent } from "./normalize";
import type { ImageOccurrence } from "./hash";
import { MAX_IMAGE_OCCURRENCES } from "./hash";
import { WikipediaTextFilter } from "./wikipedia-filter";

export const CONTENT_BLOCK_SEPARATOR_TAGS: ReadonlySet<string> = new Set([
  "p",
  "li",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "figcaption",
  "blockquote",
  "tr",
  "td",
  "th",
  "div",
]);

export const NON_CONTENT_TAGS: ReadonlySet<string> = new Set(["script", "style", "noscript"]);

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

/**
 * Decides, in document order, whether a node (with its subtree) is left out
 * of the text. It may keep state between calls: the Wikipedia filter skips
 * whole sections after an excluded heading.
 */
export interface TextFilter {
  skip(node: Node): boolean;
}

/** The lower-case tag name that the separator and exclusion sets are keyed by. */
export function tagNameOf(element: Element): string {
  return element.localName.toLowerCase();
}

const CLOSE_SEPARATOR = Symbol("close-separator");

interface WalkHooks {
  /**
   * Called for each element that is entered (neither non-content nor
   * filtered out) with the raw text gathered before it.
   */
  onElement?(element: Element, rawBefore: string): void;
  /** Called for each text node whose data is appended. */
  onText?(text: Text): void;
  /** Called for each separator space (entering or leaving a block element). */
  onSeparator?(): void;
}

/**
 * Concatenates the raw (not yet normalized) text of nodes, in document order.
 * Iterative rather than recursive so that deeply nested markup cannot
 * overflow the stack.
 */
function walkText(nodes: readonly Node[], filter: TextFilter | undefined, hooks: WalkHooks): string {
  let raw = "";
  // A frame is either a node to enter or the marker that closes a separator element.
  const stack: Array<Node | typeof CLOSE_SEPARATOR> = [];
  for (let i = nodes.length - 1; i >= 0; i -= 1) {
    const node = nodes[i];
    if (node !== undefined) stack.push(node);
  }
  while (stack.length > 0) {
    const frame = stack.pop();
    if (frame === undefined) break;
    if (frame === CLOSE_SEPARATOR) {
      raw += " ";
      hooks.onSeparator?.();
      continue;
    }
    if (frame.nodeType === TEXT_NODE) {
      if (filter?.skip(frame) === true) continue;
      raw += (frame as Text).data;
      hooks.onText?.(frame as Text);
      continue;
    }
    if (frame.nodeType !== ELEMENT_NODE) continue; // comments, processing instructions
    const element = frame as Element;
    const name = tagNameOf(element);
    if (NON_CONTENT_TAGS.has(name)) continue;
    if (filter?.skip(element) === true) continue;
    hooks.onElement?.(element, raw);
    if (CONTENT_BLOCK_SEPARATOR_TAGS.has(name)) {
      raw += " ";
      hooks.onSeparator?.();
      stack.push(CLOSE_SEPARATOR);
    }
    // <template> contents live in a separate fragment, never in childNodes,
    // exactly as the server's parser treats them.
    const children = element.childNodes;
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const child = children[i];
      if (child !== undefined) stack.push(child);
    }
  }
  return raw;
}


/** A separator space in the sequence of text pieces. */
export const SEPARATOR = null;

/**
 * The text pieces of a subtree in document order, under exactly the rules
 * that make its canonical text: text nodes, and SEPARATOR (null) for each
 * block boundary. Annotations map claim text back to DOM positions with it.
 */
export function textPieces(root: Node, filter?: TextFilter): Array<Text | null> {
  const pieces: Array<Text | null> = [];
  walkText([root], filter, {
    onText: (text) => pieces.push(text),
    onSeparator: () => pieces.push(SEPARATOR),
  });
  return pieces;
}

/** Raw text of nodes before normalization (exported for tests and annotators). */
export function extractRawText(nodes: readonly Node[], filter?: TextFilter): string {
  return walkText(nodes, filter, {});
}

/** Normalized text of a DOM subtree (the root element itself included). */
export function normalizedTextOf(root: Node, filter?: TextFilter): string {
  return normalizeContent(extractRawText([root], filter));
}

export type HtmlTextPlatform = "LESSWRONG" | "SUBSTACK" | "WIKIPEDIA";

/**
 * Normalized text of an HTML fragment, parsed in a <template> context as the
 * server parses it. Needs a Document to parse with (content scripts, extension
 * pages and jsdom have one; the service worker does not).
 */
export function htmlToNormalizedText(html: string, platform: HtmlTextPlatform, doc: Document): string {
  const template = doc.createElement("template");
  template.innerHTML = html;
  const filter = platform === "WIKIPEDIA" ? new WikipediaTextFilter() : undefined;
  return normalizeContent(extractRawText(Array.from(template.content.childNodes), filter));
}

export interface ExtractedContent {
  /** Normalized text. */
  contentText: string;
  /** Every image in page order, duplicates included. */
  imageOccurrences: ImageOccurrence[];
  /** Distinct image URLs in order of first appearance. */
  imageUrls: string[];
}

export interface ExtractContentOptions {
  filter?: TextFilter;
  /** Base for resolving relative image URLs (normally document.baseURI). */
  baseUrl: string;
  /** Whether an <img> counts as a post image (emoji, avatars and icons do not). */
  isContentImage?: (image: Element) => boolean;
  /** Elements left out of captions, as if removed from the page (see imageCaption). */
  captionExcludes?: (element: Element) => boolean;
}

/** The absolute http(s) URL of an image's src, or null for missing, data: and malformed ones. */
export function resolveImageUrl(raw: string | null, baseUrl: string): string | null {
  const trimmed = raw?.trim() ?? "";
  if (trimmed.length === 0 || /^data:/i.test(trimmed)) return null;
  try {
    const url = new URL(trimmed, baseUrl);
    return url.protocol === "http:" || url.protocol === "https:" ? url.toString() : null;
  } catch {
    return null;
  }
}

/**
 * The textContent of an element as it reads once every descendant that
 * `excluded` names has been removed (without one, plain textContent).
 */
function textWithout(element: Element, excluded: ((element: Element) => boolean) | undefined): string {
  if (excluded === undefined) return element.textContent ?? "";
  let text = "";
  const stack: Node[] = [element];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === undefined) break;
    if (node.nodeType === TEXT_NODE) {
      text += (node as Text).data;
      continue;
    }
    if (node.nodeType !== ELEMENT_NODE || (node !== element && excluded(node as Element))) continue;
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const child = children[i];
      if (child !== undefined) stack.push(child);
    }
  }
  return text;
}

/** Whether element, or an ancestor of it below scope, is excluded. */
function excludedWithin(element: Element, scope: Element, excluded: (element: Element) => boolean): boolean {
  for (let e: Element | null = element; e !== null && e !== scope; e = e.parentElement) {
    if (excluded(e)) return true;
  }
  return false;
}

/**
 * An image's caption: its figure's figcaption, else its alt text, else its
 * title. With `excluded`, the caption is read as if the elements it names
 * were removed from the page first (Wikipedia's citation markers, styles):
 * the first figcaption that is not itself removed, without the removed
 * descendants.
 */
export function imageCaption(image: Element, excluded?: (element: Element) => boolean): string | undefined {
  const figure = image.closest("figure");
  const figcaption =
    figure === null
      ? undefined
      : Array.from(figure.querySelectorAll("figcaption")).find(
          (f) => excluded === undefined || !excludedWithin(f, figure, excluded),
        );
  const candidates = [
    figcaption === undefined ? undefined : textWithout(figcaption, excluded),
    image.getAttribute("alt"),
    image.getAttribute("title"),
  ];
  for (const candidate of candidates) {
    const caption = normalizeContent(candidate ?? "");
    if (caption.length > 0) return caption;
  }
  return undefined;
}

/**
 * Text and images of a content root in one document-order walk. Each image's
 * normalizedTextOffset is the length of the normalized text that precedes it,
 * clamped so offsets never decrease and never pass the end of the text (the
 * server's validity rules). At most 256 occurrences are kept.
 */
export function extractContent(root: Node, options: ExtractContentOptions): ExtractedContent {
  const found: Array<{ rawBefore: string; sourceUrl: string; captionText: string | undefined }> = [];
  const raw = walkText([root], options.filter, {
    onElement(element, rawBefore) {
      if (tagNameOf(element) !== "img" || found.length >= MAX_IMAGE_OCCURRENCES) return;
      if (options.isContentImage !== undefined && !options.isContentImage(element)) return;
      const sourceUrl = resolveImageUrl(element.getAttribute("src"), options.baseUrl);
      if (sourceUrl === null) return;
      found.push({ rawBefore, sourceUrl, captionText: imageCaption(element, options.captionExcludes) });
    },
  });
  const contentText = normalizeContent(raw);
  let previousOffset = 0;
  const imageOccurrences = found.map((image, originalIndex): ImageOccurrence => {
    const measured = normalizeContent(image.rawBefore).length;
    const offset = Math.min(Math.max(measured, previousOffset), contentText.length);
    previousOffset = offset;
    const occurrence: ImageOccurrence = { originalIndex, normalizedTextOffset: offset, sourceUrl: image.sourceUrl };
    if (image.captionText !== undefined) occurrence.captionText = image.captionText;
    return occurrence;
  });
  const imageUrls = [...new Set(imageOccurrences.map((o) => o.sourceUrl))];
  return { contentText, imageOccurrences, imageUrls };
}
