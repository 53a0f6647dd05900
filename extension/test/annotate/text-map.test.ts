// The annotation text map: its text must be the adapters' canonical text
// (claims quote that text), and every span of it must map back to a DOM range
// whose own text normalizes to the span.

import { describe, expect, it } from "vitest";
import { lesswrongAdapter } from "../../src/content/adapters/lesswrong";
import { substackAdapter } from "../../src/content/adapters/substack";
import { wikipediaAdapter } from "../../src/content/adapters/wikipedia";
import { xAdapter } from "../../src/content/adapters/x";
import type { PlatformAdapter } from "../../src/content/adapters/model";
import { textFilterFor } from "../../src/content/annotate/annotator";
import { buildTextMap, rangeFor } from "../../src/content/annotate/text-map";
import { textPieces } from "../../src/lib/dom-text";
import { normalizeContent } from "../../src/lib/normalize";
import { WikipediaTextFilter } from "../../src/lib/wikipedia-filter";
import { domFor } from "../dom";
import { loadGolden, loadPage, readLocalFixture } from "../fixtures";
import { lesswrongPostPage } from "./pages";

function mapOf(adapter: PlatformAdapter, html: string, url: string) {
  const document = domFor(html, url);
  const extracted = adapter.extract(document);
  if (extracted.kind !== "ready") throw new Error(`not ready: ${extracted.reason}`);
  const root = adapter.getContentRoot(document);
  if (root === null) throw new Error("no content root");
  return { document, content: extracted.content, map: buildTextMap(root, textFilterFor(adapter)) };
}

// One saved article (the adapter tests cover both; parsing each takes a while).
const article = loadGolden().find((x) => x.platform === "WIKIPEDIA")?.fixture ?? "";
let parsed: ReturnType<typeof mapOf> | undefined;
function wikipedia(): ReturnType<typeof mapOf> {
  const page = loadPage(article);
  parsed ??= mapOf(wikipediaAdapter, page.html, page.sourceUrl ?? "");
  return parsed;
}

describe("text map = the adapter's canonical text", () => {
  it(`Wikipedia ${article}`, () => {
    const { map, content } = wikipedia();
    expect(map.text.length).toBe(content.contentText.length);
    expect(map.text).toBe(content.contentText);
  });

  it("LessWrong saved post", () => {
    const golden = loadGolden().find((x) => x.platform === "LESSWRONG");
    const page = loadPage(golden?.fixture ?? "");
    const { map, content } = mapOf(lesswrongAdapter, lesswrongPostPage(page.html, page.postUrl ?? ""), page.postUrl ?? "");
    expect(map.text).toBe(content.contentText);
  });

  it("X and Substack pages", () => {
    const x = mapOf(xAdapter, readLocalFixture("x-status-thread.html"), "https://x.com/ada_l/status/1790000000000000002");
    expect(x.map.text).toBe(x.content.contentText);
    const s = mapOf(substackAdapter, readLocalFixture("substack-post.html"), "https://enginesweekly.substack.com/p/on-difference-engines");
    expect(s.map.text).toBe(s.content.contentText);
  });
});

describe("text map ranges", () => {
  it("map typographic folding, collapsed whitespace and block boundaries back to the DOM", () => {
    const document = domFor(
      "<div id=r><p>He said \u201chello\u201d\u00a0\u2014 then\u2026</p><p>wait  \u200bfor <b>it</b>.</p><p>Cafe\u0301 ok</p></div>",
    );
    const root = document.getElementById("r");
    if (root === null) throw new Error("no root");
    const map = buildTextMap(root);
    expect(map.text).toBe('He said "hello" - then... wait for it. Café ok');
    const check = (needle: string, expected: string) => {
      const start = map.text.indexOf(needle);
      const range = rangeFor(map, start, start + needle.length, document);
      expect(range?.toString()).toBe(expected);
    };
    check('"hello" - then...', "\u201chello\u201d\u00a0\u2014 then\u2026");
    check("then... wait", "then\u2026wait"); // the space is a block boundary, not text
    check("for it.", "for it.");
    check("Café", "Cafe\u0301");
  });

  it("every sampled span of a long page round-trips through its range", () => {
    const { map, document } = wikipedia();
    const root = wikipediaAdapter.getContentRoot(document);
    if (root === null) throw new Error("no root");
    const pieces = textPieces(root, new WikipediaTextFilter());
    for (let start = 0; start + 80 < map.text.length; start += 997) {
      const span = map.text.slice(start, start + 80).trim();
      const at = map.text.indexOf(span, start);
      const range = rangeFor(map, at, at + span.length, document);
      expect(range).not.toBeNull();
      // The range's text may include pruned bits (citation markers) between its ends; compare what survives.
      // The text pieces (the extraction's own walk) from the range's start to its end,
      // normalized, are exactly the span: the offsets point at the right characters.
      const first = pieces.indexOf(range?.startContainer as Text);
      const last = pieces.indexOf(range?.endContainer as Text);
      expect(first).toBeGreaterThanOrEqual(0);
      let raw = "";
      for (let k = first; k <= last; k += 1) {
        const piece = pieces[k];
        if (piece === null || piece === undefined) {
          raw += " ";
          continue;
        }
        const from = k === first ? (range?.startOffset ?? 0) : 0;
        const to = k === last ? (range?.endOffset ?? 0) : piece.data.length;
        raw += piece.data.slice(from, to);
      }
      expect(normalizeContent(raw)).toBe(span);
    }
  });
});
