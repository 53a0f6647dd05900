// DOM for tests: jsdom instances created explicitly inside the default node
// environment. (Vitest's jsdom environment swaps in another realm's typed
// arrays, which Node's SubtleCrypto refuses.)

import { JSDOM } from "jsdom";

export function domFor(html: string, url = "https://example.com/"): Document {
  return new JSDOM(html, { url }).window.document;
}

let blank: Document | undefined;

/** A shared empty document for parsing fragments. */
export function blankDocument(): Document {
  blank ??= domFor("<!doctype html><html><body></body></html>");
  return blank;
}
