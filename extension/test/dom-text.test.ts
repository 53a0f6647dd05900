import { describe, expect, it } from "vitest";
import { extractContent, htmlToNormalizedText, normalizedTextOf } from "../src/lib/dom-text";
import { WikipediaTextFilter } from "../src/lib/wikipedia-filter";
import { blankDocument, domFor } from "./dom";
import { loadHashVectors } from "./fixtures";

function body(html: string, url = "https://example.com/post/1"): HTMLElement {
  return domFor(`<!doctype html><html><body>${html}</body></html>`, url).body;
}

describe("live DOM walk = server's fragment parse", () => {
  // Adapters walk the page's DOM; the server parses HTML. Both must give the
  // reference text for every HTML vector.
  for (const [i, v] of loadHashVectors().html.entries()) {
    it(`vector #${i} (${v.platform})`, () => {
      const root = body(v.input);
      const filter = v.platform === "WIKIPEDIA" ? new WikipediaTextFilter() : undefined;
      expect(normalizedTextOf(root, filter)).toBe(v.normalizedText);
    });
  }

  it("ignores template contents, comments and non-content elements", () => {
    const html = "<p>a</p><template><p>hidden</p></template><!-- c --><noscript>n</noscript><style>s</style><p>b</p>";
    expect(normalizedTextOf(body(html))).toBe("a b");
    expect(htmlToNormalizedText(html, "LESSWRONG", blankDocument())).toBe("a b");
  });

  it("survives nesting deeper than a recursive walk could", () => {
    // Built bottom-up and detached: jsdom itself recurses through ancestors on insertion.
    const document = blankDocument();
    let node: Node = document.createTextNode("deep");
    for (let i = 0; i < 50_000; i += 1) {
      const parent = document.createElement(i % 2 === 0 ? "span" : "div");
      parent.append(node);
      node = parent;
    }
    expect(normalizedTextOf(node)).toBe("deep");
  });
});

describe("image occurrences", () => {
  it("keeps duplicates, lists each URL once, measures offsets in the normalized text", () => {
    const root = body(`<div>AA<img src="/one.png">BB<img src="/one.png"> CC</div>`);
    const out = extractContent(root, { baseUrl: "https://example.com/post/1" });
    expect(out.contentText).toBe("AABB CC");
    expect(out.imageUrls).toEqual(["https://example.com/one.png"]);
    expect(out.imageOccurrences).toEqual([
      { originalIndex: 0, normalizedTextOffset: 2, sourceUrl: "https://example.com/one.png" },
      { originalIndex: 1, normalizedTextOffset: 4, sourceUrl: "https://example.com/one.png" },
    ]);
  });

  it("counts UTF-16 code units and clamps offsets to the text", () => {
    const root = body(`<p>😀 “x”</p><img src="https://cdn.example/a.png"><p>   </p><img src="https://cdn.example/b.png">`);
    const out = extractContent(root, { baseUrl: "https://example.com/" });
    expect(out.contentText).toBe('😀 "x"');
    expect(out.imageOccurrences.map((o) => o.normalizedTextOffset)).toEqual([6, 6]);
  });

  it("takes the caption from figcaption, then alt, then title", () => {
    const root = body(
      `A<img src="/a.png" alt="alt-a" title="title-a"><figure><img src="/b.png" alt="alt-b"><figcaption>  fig-b  </figcaption></figure><img src="/c.png" title="title-c"><img src="/d.png" alt="  ">Z`,
    );
    const out = extractContent(root, { baseUrl: "https://example.com/" });
    expect(out.imageOccurrences.map((o) => o.captionText)).toEqual(["alt-a", "fig-b", "title-c", undefined]);
    expect(out.imageOccurrences[3]).not.toHaveProperty("captionText");
  });

  it("drops data:, malformed and non-http sources and images the caller rules out", () => {
    const root = body(
      `<img src="data:image/png;base64,AAAA"><img src="http://[::1"><img src="ftp://example.com/a.png"><img><img class="emoji" src="/e.svg"><img src="/ok.png">`,
    );
    const out = extractContent(root, {
      baseUrl: "https://example.com/",
      isContentImage: (img) => !img.classList.contains("emoji"),
    });
    expect(out.imageUrls).toEqual(["https://example.com/ok.png"]);
    expect(out.imageOccurrences).toEqual([
      { originalIndex: 0, normalizedTextOffset: 0, sourceUrl: "https://example.com/ok.png" },
    ]);
  });

  it("does not count images inside filtered-out Wikipedia parts", () => {
    const root = body(
      `<div class="mw-parser-output"><p>Lead<img src="https://upload.wikimedia.org/a.png"></p><div class="navbox"><img src="https://upload.wikimedia.org/nav.png"></div><h2>References</h2><p><img src="https://upload.wikimedia.org/ref.png">r</p></div>`,
    );
    const out = extractContent(root, { baseUrl: "https://en.wikipedia.org/wiki/X", filter: new WikipediaTextFilter() });
    expect(out.contentText).toBe("Lead");
    expect(out.imageUrls).toEqual(["https://upload.wikimedia.org/a.png"]);
  });
});

describe("Wikipedia section pruning", () => {
  const text = (html: string) => htmlToNormalizedText(html, "WIKIPEDIA", blankDocument());

  it("skips an excluded section up to the next heading of the same or a higher level", () => {
    expect(
      text(
        "<p>Intro</p><h2>Notes</h2><p>n1</p><h3>Sub</h3><p>n2</p><h2>History</h2><p>h</p><h3>External links</h3><p>x</p><h2>Legacy</h2><p>l</p>",
      ),
    ).toBe("Intro History h Legacy l");
  });

  it("matches titles case-insensitively after normalization, and keeps See also", () => {
    expect(text("<h2>  FURTHER\u00a0reading </h2><p>f</p><h2>See also</h2><p>s</p>")).toBe("See also s");
  });

  it("does not treat h1 as a section boundary, nor headings inside excluded elements", () => {
    expect(text("<h2>Sources</h2><p>s</p><h1>Title</h1><p>still skipped</p>")).toBe("");
    expect(text('<p>a</p><div class="navbox"><h2>Body</h2></div><h2>Citations</h2><p>c</p>')).toBe("a");
  });

  it("drops citation markers and edit links but keeps other superscripts", () => {
    expect(
      text('<p>E = mc<sup>2</sup><sup class="reference">[1]</sup></p><span class="mw-editsection">[edit]</span>'),
    ).toBe("E = mc2");
  });
});
