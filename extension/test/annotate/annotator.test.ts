// The annotator in a jsdom page: claims drawn through a (fake) CSS Custom
// Highlight API without touching the post, re-anchored after the post is
// re-rendered, tooltip on hover and panel on click inside the shadow root.

import { JSDOM } from "jsdom";
import { describe, expect, it } from "vitest";
import { lesswrongAdapter } from "../../src/content/adapters/lesswrong";
import { Annotator } from "../../src/content/annotate/annotator";
import type { Claim } from "../../src/lib/api-types";
import { lesswrongPostPage } from "./pages";

const URL = "https://www.lesswrong.com/posts/abc123/a-post";
const BODY = "<p>The first paragraph says that <b>light travels</b> at 300 km per second in a vacuum.</p><p>Another paragraph.</p>";

const claims: Claim[] = [
  {
    id: "a",
    text: "light travels at 300 km per second in a vacuum",
    context: "The first paragraph says that light travels at 300 km per second in a vacuum.",
    summary: "Light travels at about 300,000 km per second.",
    reasoning: "The speed of light is **299,792,458 m/s**; see [NIST](https://physics.nist.gov/).",
    sources: [{ url: "https://physics.nist.gov/cgi-bin/cuu/Value?c", title: "NIST: speed of light", snippet: "299 792 458 m s-1" }],
  },
  {
    id: "b",
    text: "This sentence does not appear anywhere in the post at all.",
    context: "nowhere",
    summary: "s",
    reasoning: "r",
    sources: [{ url: "https://example.org/", title: "t", snippet: "" }],
  },
];

class FakeHighlight {
  priority = 0;
  readonly ranges: Range[];
  constructor(...ranges: Range[]) {
    this.ranges = ranges;
  }
}

function page(bodyStyle = "", options: { highlightApi?: boolean } = {}) {
  const dom = new JSDOM(lesswrongPostPage(BODY, URL).replace("<body>", `<body style="${bodyStyle}">`), { url: URL, pretendToBeVisual: true });
  const win = dom.window as unknown as Window & { CSS: unknown; Highlight: unknown };
  const registry = new Map<string, FakeHighlight>();
  if (options.highlightApi !== false) {
    win.CSS = { highlights: registry };
    win.Highlight = FakeHighlight;
  }
  // jsdom has no layout: every range sits on one 100x20 line at (10, 50).
  (dom.window.Range.prototype as unknown as { getClientRects: () => DOMRect[] }).getClientRects = function () {
    return [{ left: 10, top: 50, right: 110, bottom: 70, width: 100, height: 20, x: 10, y: 50 } as DOMRect];
  };
  (dom.window.Range.prototype as unknown as { getBoundingClientRect: () => DOMRect }).getBoundingClientRect = function () {
    return { left: 10, top: 50, right: 110, bottom: 70, width: 100, height: 20, x: 10, y: 50 } as DOMRect;
  };
  const reports: Array<[string[], string[]]> = [];
  const annotator = new Annotator(lesswrongAdapter, dom.window.document, { report: (a, u) => reports.push([a, u]) });
  return { dom, doc: dom.window.document, registry, reports, annotator };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Annotator", () => {
  it("highlights anchored claims, reports the rest, and leaves the post's DOM alone", () => {
    const { doc, registry, reports, annotator } = page();
    const before = doc.getElementById("postContent")?.innerHTML;
    annotator.setClaims(claims, true);
    const highlight = registry.get("errata-claim");
    expect(highlight?.ranges.map((r) => r.toString())).toEqual(["light travels at 300 km per second in a vacuum"]);
    expect(reports).toEqual([[["a"], ["b"]]]);
    expect(doc.getElementById("postContent")?.innerHTML).toBe(before);

    annotator.setVisible(false);
    expect(registry.size).toBe(0);
    annotator.setVisible(true);
    expect(registry.has("errata-claim")).toBe(true);
    annotator.clear();
    expect(registry.size).toBe(0);
    expect(doc.querySelector("errata-annotations")).toBeNull();
  });

  it("a claim withdrawn after an appeal: its highlight goes, it is reported as withdrawn, and is never drawn again", () => {
    const told: Array<[string[], string[], string[]]> = [];
    const dom = new JSDOM(lesswrongPostPage(BODY, URL), { url: URL, pretendToBeVisual: true });
    const win = dom.window as unknown as Window & { CSS: unknown; Highlight: unknown };
    const highlights = new Map<string, FakeHighlight>();
    win.CSS = { highlights };
    win.Highlight = FakeHighlight;
    (dom.window.Range.prototype as unknown as { getClientRects: () => DOMRect[] }).getClientRects = () => [
      { left: 10, top: 50, right: 110, bottom: 70, width: 100, height: 20, x: 10, y: 50 } as DOMRect,
    ];
    const withdrawing = new Annotator(lesswrongAdapter, dom.window.document, { report: (a, u, w) => told.push([a, u, w]) });
    withdrawing.setClaims(claims, true);
    expect(told).toEqual([[["a"], ["b"], []]]);
    withdrawing.retract("a");
    expect(highlights.has("errata-claim")).toBe(false);
    expect(told.at(-1)).toEqual([[], ["b"], ["a"]]);
    // The background still sends it (its answer predates the decision): not drawn, still reported as withdrawn.
    withdrawing.setClaims(claims, true);
    expect(highlights.has("errata-claim")).toBe(false);
    expect(told.at(-1)).toEqual([[], ["b"], ["a"]]);
    withdrawing.clear();
  });

  it("anchors again after the post is re-rendered", async () => {
    const { doc, registry, reports, annotator } = page();
    annotator.setClaims(claims, true);
    const content = doc.getElementById("postContent");
    if (content === null) throw new Error("no post");
    content.innerHTML = BODY.replace("Another paragraph.", "Another paragraph, edited."); // React replaces the nodes
    await wait(400);
    const range = registry.get("errata-claim")?.ranges[0];
    expect(range?.startContainer.isConnected).toBe(true);
    expect(range?.toString()).toBe("light travels at 300 km per second in a vacuum");
    expect(reports).toHaveLength(1); // same outcome, not reported twice

    content.innerHTML = "<p>Entirely different text now.</p>";
    await wait(400);
    expect(registry.has("errata-claim")).toBe(false);
    expect(reports.at(-1)).toEqual([[], ["a", "b"]]);
    annotator.clear();
  });

  it("without the Highlight API, draws bars in its own overlay and leaves the post alone", () => {
    const { doc, reports, annotator } = page("", { highlightApi: false });
    const before = doc.getElementById("postContent")?.innerHTML;
    annotator.setClaims(claims, true);
    const bars = doc.querySelector("errata-annotations")?.shadowRoot?.querySelectorAll(".overlay .bar");
    expect(bars?.length).toBe(1);
    expect((bars?.[0] as HTMLElement | undefined)?.style.width).toBe("100px");
    expect(reports).toEqual([[["a"], ["b"]]]);
    expect(doc.getElementById("postContent")?.innerHTML).toBe(before);
    annotator.setVisible(false);
    expect(doc.querySelector("errata-annotations")?.shadowRoot?.querySelectorAll(".overlay .bar").length).toBe(0);
    annotator.clear();
    expect(doc.querySelector("errata-annotations")).toBeNull();
  });

  it("uses the dark underline on dark pages", () => {
    const { registry, annotator } = page("background-color: rgb(20, 20, 22)");
    annotator.setClaims(claims, true);
    expect(registry.has("errata-claim-dark")).toBe(true);
    expect(registry.has("errata-claim")).toBe(false);
    annotator.clear();
  });

  it("tooltip on hover, panel with reasoning and sources on click", async () => {
    const { dom, doc, registry, annotator } = page();
    annotator.setClaims(claims, true);
    const target = doc.querySelector("#postContent b") ?? doc.body;
    target.dispatchEvent(new dom.window.MouseEvent("pointermove", { clientX: 50, clientY: 60, bubbles: true }));
    await wait(250);
    const root = doc.querySelector("errata-annotations")?.shadowRoot;
    const tooltip = root?.querySelector<HTMLElement>(".tooltip");
    expect(tooltip?.hidden).toBe(false);
    expect(tooltip?.textContent).toContain("Light travels at about 300,000 km per second.");
    expect(registry.has("errata-claim-active")).toBe(true);

    target.dispatchEvent(new dom.window.MouseEvent("click", { clientX: 50, clientY: 60, bubbles: true, button: 0 }));
    const panel = root?.querySelector<HTMLElement>(".panel");
    expect(panel?.hidden).toBe(false);
    expect(panel?.textContent).toContain("299,792,458 m/s");
    expect(panel?.querySelector("strong")?.textContent).toBe("299,792,458 m/s");
    expect([...(panel?.querySelectorAll("a") ?? [])].map((a) => a.getAttribute("href"))).toEqual([
      "https://physics.nist.gov/",
      "https://physics.nist.gov/cgi-bin/cuu/Value?c",
    ]);

    doc.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(panel?.hidden).toBe(true);
    expect(annotator.focus("a")).toBe(true);
    expect(panel?.hidden).toBe(false);
    expect(annotator.focus("b")).toBe(false);
    annotator.clear();
  });
});
