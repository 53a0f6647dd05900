// Adapters for sites whose pages show many posts at once (Bluesky, Threads):
// feeds, threads and post pages. Each post gets its own Fact-check button,
// which asks for a verdict analysis of that post (issue 15); there is no
// single "post of the page" and no inline investigation.

import type { FeedPlatform } from "../../lib/platform";
import type { AdapterExtractionResult } from "./model";

export type Theme = "light" | "dark";

/** A post's identity as its container shows it, read without extracting the text. */
export interface FeedPostIdentity {
  /** The id registerObservedVersion takes (Bluesky: the AT URI; Threads: the post code). */
  externalId: string;
  /** The post's canonical page. */
  url: string;
}

export interface FeedAdapter {
  platformKey: FeedPlatform;
  /** Any page of the site (the content script runs on all of them). */
  matches(url: string): boolean;
  /** The post containers of the page, outermost only (a quoted post is part of its quoting post), in document order. */
  findPosts(document: Document): Element[];
  /** The post's identity, or null while its container does not show one. */
  identify(post: Element, document: Document): FeedPostIdentity | null;
  /** The post's text and metadata, as registerObservedVersion takes them. */
  extract(post: Element, document: Document): AdapterExtractionResult;
  /** The row of the post's own actions (reply, repost, like), where the button goes; null when there is none. */
  actionRow(post: Element): Element | null;
  /** The theme the site says it shows (its own marker on <html>), or null when it names none. */
  siteTheme(document: Document): Theme | null;
}

/** Keeps only the outermost of the given elements (a post inside another post is the other's quote). */
export function outermost(elements: readonly Element[]): Element[] {
  const set = new Set(elements);
  return elements.filter((element) => {
    for (let parent = element.parentElement; parent !== null; parent = parent.parentElement) {
      if (set.has(parent)) return false;
    }
    return true;
  });
}

/** Whether node lies inside post without passing through another element that excluded names (checked below post only). */
export function ownedBy(node: Element, post: Element, excluded: (element: Element) => boolean): boolean {
  for (let e: Element | null = node; e !== null; e = e.parentElement) {
    if (e === post) return true;
    if (excluded(e)) return false;
  }
  return false;
}
