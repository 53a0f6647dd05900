import { describe, expect, it } from "vitest";
import { mediaWikiTimestampToIso, readMwConfig } from "../src/content/adapters/mw-config";
import { wikipediaAdapter } from "../src/content/adapters/wikipedia";
import { parseWikipediaUrl } from "../src/lib/wikipedia-url";
import { domFor } from "./dom";
import { loadGolden } from "./fixtures";

function wikiPage(config: string, content = '<div class="mw-parser-output"><p>Text of the article.</p></div>'): string {
  return `<!doctype html><html><head><script>document.documentElement.className="client-js";RLCONF=${config};RLSTATE={};</script></head>
<body><h1 id="firstHeading"><span class="mw-page-title-main">Ada Lovelace</span></h1><div id="mw-content-text">${content}</div></body></html>`;
}

const CONFIG = `{"wgNamespaceNumber":0,"wgPageName":"Ada_Lovelace","wgTitle":"Ada Lovelace","wgRevisionId":1234567,"wgArticleId":974,"wgAction":"view","wgIsArticle":!0,"wgRevisionTimestamp":"20250102030405"}`;

describe("Wikipedia URLs (same reading as the server)", () => {
  it("matches golden.json's urlIdentity for the saved pages", () => {
    for (const g of loadGolden().filter((x) => x.platform === "WIKIPEDIA")) {
      const title = g.sourceUrl?.split("/wiki/")[1] ?? "";
      expect(parseWikipediaUrl(g.sourceUrl ?? "")).toEqual({ language: "en", title, pageId: null });
    }
  });

  it("reads index.php, curid, mobile hosts and percent-escapes; refuses other namespaces and hosts", () => {
    expect(parseWikipediaUrl("https://de.m.wikipedia.org/wiki/Marie_Curie")).toEqual({
      language: "de",
      title: "Marie_Curie",
      pageId: null,
    });
    expect(parseWikipediaUrl("https://en.wikipedia.org/w/index.php?title=Ada%20Lovelace&oldid=1")).toEqual({
      language: "en",
      title: "Ada_Lovelace",
      pageId: null,
    });
    expect(parseWikipediaUrl("https://en.wikipedia.org/w/index.php?curid=974")).toEqual({
      language: "en",
      title: null,
      pageId: "974",
    });
    expect(parseWikipediaUrl("https://fr.wikipedia.org/wiki/Caf%C3%A9")?.title).toBe("Café");
    expect(parseWikipediaUrl("https://en.wikipedia.org/wiki/Talk:Ada_Lovelace")).toBeNull();
    expect(parseWikipediaUrl("https://en.wikipedia.org/wiki/Special:Random")).toBeNull();
    expect(parseWikipediaUrl("https://en.wikipedia.org/wiki/%E0%A4%A")).toBeNull();
    expect(parseWikipediaUrl("https://en.wikipedia.org.evil.example/wiki/X")).toBeNull();
    expect(parseWikipediaUrl("https://wikipedia.org/wiki/X")).toBeNull();
  });
});

describe("MediaWiki config", () => {
  it("is read from the inline RLCONF script (minified booleans included)", () => {
    const config = readMwConfig(domFor(wikiPage(CONFIG), "https://en.wikipedia.org/wiki/Ada_Lovelace"));
    expect(config).toMatchObject({ wgArticleId: 974, wgRevisionId: 1234567, wgNamespaceNumber: 0, wgIsArticle: true });
    expect(mediaWikiTimestampToIso(config["wgRevisionTimestamp"])).toBe("2025-01-02T03:04:05.000Z");
  });

  it("prefers an mw.config reachable from the page's window", () => {
    const document = domFor(wikiPage(CONFIG), "https://en.wikipedia.org/wiki/Ada_Lovelace");
    const values: Record<string, unknown> = { wgArticleId: 975 };
    (document.defaultView as unknown as { mw: unknown }).mw = { config: { get: (k: string) => values[k] } };
    expect(readMwConfig(document)).toMatchObject({ wgArticleId: 975, wgRevisionId: 1234567 });
  });
});

describe("Wikipedia adapter on small pages", () => {
  const url = "https://en.wikipedia.org/wiki/Ada_Lovelace";

  it("reports identity and metadata", () => {
    const result = wikipediaAdapter.extract(domFor(wikiPage(CONFIG), url));
    if (result.kind !== "ready") throw new Error(`not ready: ${result.reason}`);
    expect(result.content).toMatchObject({
      platform: "WIKIPEDIA",
      externalId: "en:974",
      contentText: "Text of the article.",
      mediaState: "text_only",
      metadata: {
        language: "en",
        title: "Ada_Lovelace",
        pageId: "974",
        revisionId: "1234567",
        displayTitle: "Ada Lovelace",
        lastModifiedAt: "2025-01-02T03:04:05.000Z",
        htmlContent: "<p>Text of the article.</p>", // the article's content, as the reference client sends it
      },
    });
  });

  it("refuses other namespaces and actions, waits for content, needs ids", () => {
    const talk = CONFIG.replace('"wgNamespaceNumber":0', '"wgNamespaceNumber":1');
    expect(wikipediaAdapter.extract(domFor(wikiPage(talk), url))).toEqual({ kind: "not_ready", reason: "unsupported" });
    const edit = CONFIG.replace('"wgAction":"view"', '"wgAction":"edit"');
    expect(wikipediaAdapter.extract(domFor(wikiPage(edit), url))).toEqual({ kind: "not_ready", reason: "unsupported" });
    expect(wikipediaAdapter.extract(domFor(wikiPage(CONFIG, "<p>loading</p>"), url))).toEqual({
      kind: "not_ready",
      reason: "hydrating",
    });
    const noId = CONFIG.replace('"wgArticleId":974', '"wgArticleId":0');
    expect(wikipediaAdapter.extract(domFor(wikiPage(noId), url))).toEqual({ kind: "not_ready", reason: "missing_identity" });
  });
});

describe("Wikipedia adapter: captions and htmlContent read the pruned article", () => {
  const url = "https://en.wikipedia.org/wiki/Ada_Lovelace";
  const extract = (content: string) => {
    const result = wikipediaAdapter.extract(domFor(wikiPage(CONFIG, `<div class="mw-parser-output">${content}</div>`), url));
    if (result.kind !== "ready" || result.content.platform !== "WIKIPEDIA") throw new Error("not ready");
    return result.content;
  };

  it("leaves citation markers, styles and hidden notes out of captions", () => {
    const content = extract(
      '<p>Lead.</p><figure typeof="mw:File/Thumb"><a href="/wiki/File:A.jpg"><img src="//upload.wikimedia.org/a.jpg" alt="Alt text"></a>' +
        '<figcaption><style>.x{color:red}</style>Ada in 1840,<sup id="cite_ref-1" class="reference"><a href="#cite_note-1">[1]</a></sup> London' +
        '<sup class="reference"><a href="#cite_note-2">[note 2]</a></sup><span class="noprint"> (edit)</span> x<sup>2</sup></figcaption></figure>' +
        // A caption made of a marker only is empty once pruned: the alt text is the caption.
        '<figure><img src="//upload.wikimedia.org/b.jpg" alt="Second"><figcaption><sup class="reference">[3]</sup></figcaption></figure>' +
        // The first figcaption is a navbox's: the reference client pruned it, so the next one counts.
        '<figure><img src="//upload.wikimedia.org/c.jpg"><figcaption class="navbox">Nav</figcaption><figcaption>Third</figcaption></figure>',
    );
    expect(content.imageOccurrences.map((o) => o.captionText)).toEqual(["Ada in 1840, London x2", "Second", "Third"]);
    // The walk's text is unchanged: captions are text too, without the markers.
    expect(content.contentText).toBe("Lead. Ada in 1840, London x2 Third");
  });

  it("sends the article without styles, citation markers, navboxes, edit links and appendix sections", () => {
    const content = extract(
      '<style>.a{}</style><p>Lead.<sup class="reference">[1]</sup> E = mc<sup>2</sup></p>\n' +
        '<div class="mw-heading mw-heading2"><h2 id="Life">Life</h2><span class="mw-editsection">[edit]</span></div>\n' +
        '<p>Born.</p><div class="navbox">Nav</div>\n' +
        '<div class="mw-heading mw-heading2"><h2 id="Notes">Notes</h2><span class="mw-editsection">[edit]</span></div>\n' +
        '<p>Note one.</p>\n<div class="mw-heading mw-heading3"><h3>Sub</h3></div><p>Still notes.</p>\n' +
        '<div class="mw-heading mw-heading2"><h2 id="See_also">See also</h2></div>\n<ul><li>Babbage</li></ul>\n' +
        "<h2>References</h2><ol><li>Ref.</li></ol><!-- parser report -->\n",
    );
    expect(content.metadata.htmlContent).toBe(
      '<p>Lead. E = mc<sup>2</sup></p>\n<div class="mw-heading mw-heading2"><h2 id="Life">Life</h2></div>\n<p>Born.</p>\n' +
        '\n\n\n<div class="mw-heading mw-heading2"><h2 id="See_also">See also</h2></div>\n<ul><li>Babbage</li></ul>\n<!-- parser report -->\n',
    );
    expect(content.contentText).toBe("Lead. E = mc2 Life Born. See also Babbage");
  });

  it("leaves the page's own DOM as it was", () => {
    const document = domFor(
      wikiPage(CONFIG, '<div class="mw-parser-output"><p>A.<sup class="reference">[1]</sup></p><h2>Notes</h2><p>N.</p></div>'),
      url,
    );
    const before = document.body.innerHTML;
    const result = wikipediaAdapter.extract(document);
    expect(result.kind === "ready" && result.content.metadata).toMatchObject({ htmlContent: "<p>A.</p>" });
    expect(document.body.innerHTML).toBe(before);
  });
});
