// Claim matching tiers (spec 2.4.1) and anchoring on a saved page.

import { describe, expect, it } from "vitest";
import { wikipediaAdapter } from "../../src/content/adapters/wikipedia";
import { anchorClaims, textFilterFor } from "../../src/content/annotate/annotator";
import { alignInWindow, findClaim, fuzzyBound } from "../../src/content/annotate/match";
import type { Claim } from "../../src/lib/api-types";
import { normalizeContent } from "../../src/lib/normalize";
import { domFor } from "../dom";
import { loadPage } from "../fixtures";

const TEXT =
  "The bridge opened in 1932. It carried trams until 1958. Critics said the bridge opened in 1932 too late for the fair. " +
  "Later, engineers reported that the main span is 503 metres long and the arch rises 134 metres above the water.";

describe("findClaim", () => {
  it("exact: a unique occurrence", () => {
    const m = findClaim(TEXT, { text: "It carried trams until 1958.", context: "x" });
    expect(m).toMatchObject({ tier: "exact", distance: 0 });
    expect(TEXT.slice(m?.start, m?.end)).toBe("It carried trams until 1958.");
  });

  it("context: the occurrence whose surroundings match the context", () => {
    const second = findClaim(TEXT, {
      text: "bridge opened in 1932",
      context: "Critics said the bridge opened in 1932 too late for the fair.",
    });
    expect(second?.tier).toBe("context");
    expect(second?.start).toBe(TEXT.lastIndexOf("bridge opened in 1932"));
    const first = findClaim(TEXT, { text: "opened in 1932", context: "The bridge opened in 1932. It carried trams" });
    expect(first?.start).toBe(TEXT.indexOf("opened in 1932"));
  });

  it("context: works when the context paraphrases rather than quotes", () => {
    const m = findClaim(TEXT, { text: "opened in 1932", context: "critics complained it was too late for the fair" });
    expect(m?.start).toBe(TEXT.lastIndexOf("opened in 1932"));
  });

  it("normalizes the claim like the page (typographic quotes, dashes, spaces)", () => {
    const text = normalizeContent('He wrote "it rises 134 metres" - twice.');
    expect(findClaim(text, { text: "He wrote \u201cit rises 134\u00a0metres\u201d \u2014 twice.", context: "c" })?.tier).toBe("exact");
  });

  it("fuzzy: small differences (markdown left in, a typo, a dropped word) within the bound", () => {
    const claim = "the main span is 530 metres long and the arch rises 134 metres";
    const m = findClaim(TEXT, { text: claim, context: "engineers reported that" });
    expect(m?.tier).toBe("fuzzy");
    expect(TEXT.slice(m?.start, m?.end)).toBe("the main span is 503 metres long and the arch rises 134 metres");
    const markdown = findClaim(TEXT, { text: "the main span is **503 metres** long", context: "c" });
    expect(TEXT.slice(markdown?.start, markdown?.end)).toBe("the main span is 503 metres long");
    const dropped = findClaim(TEXT, { text: "engineers reported the main span is 503 metres long", context: "c" });
    expect(dropped?.tier).toBe("fuzzy");
  });

  it("no match: unrelated text, or too different, or too short to guess", () => {
    expect(findClaim(TEXT, { text: "The moon is made of green cheese, says everyone.", context: "c" })).toBeNull();
    expect(findClaim(TEXT, { text: "It carried buses after 1990 and until 2020.", context: "c" })).toBeNull();
    expect(findClaim(TEXT, { text: "trams 1959", context: "c" })).toBeNull();
    expect(findClaim(TEXT, { text: "   ", context: "c" })).toBeNull();
  });

  it("the edit-distance bound grows with the claim and is capped", () => {
    expect(fuzzyBound(12)).toBe(1);
    expect(fuzzyBound(100)).toBe(15);
    expect(fuzzyBound(10_000)).toBe(40);
  });

  it("alignment finds the best substring and its start", () => {
    expect(alignInWindow("xxabcdefyy", 0, 10, "abXdef", 2)).toEqual({ start: 2, end: 8, distance: 1 });
    expect(alignInWindow("xxabcdefyy", 0, 10, "zzzzzz", 2)).toBeNull();
  });
});

function claim(id: string, text: string, context = text): Claim {
  return { id, text, context, summary: `summary ${id}`, reasoning: "r", sources: [{ url: "https://example.org/", title: "t", snippet: "s" }] };
}

describe("anchoring on a saved Wikipedia article", () => {
  const page = loadPage("wikipedia-albert-einstein-page-html-1.json");
  const document = domFor(page.html, page.sourceUrl ?? "");
  const root = wikipediaAdapter.getContentRoot(document);
  if (root === null) throw new Error("no content root");

  it("places exact, fuzzy and repeated claims; lists what cannot be placed", () => {
    const claims = [
      claim("exact", "Einstein was born in Ulm, in the Kingdom of Württemberg in the German Empire, on 14 March 1879."),
      claim("fuzzy", "Einstein was born in Ulm in the Kingdom of Wurttemberg in the German Empire on 14 March 1897."),
      claim("missing", "Einstein won the Nobel Prize in Chemistry for his work on benzene rings."),
    ];
    const result = anchorClaims(root, claims, textFilterFor(wikipediaAdapter));
    expect(result.textLength).toBeGreaterThan(100_000);
    expect(result.anchored.map((a) => [a.claim.id, a.tier])).toEqual([
      ["exact", "exact"],
      ["fuzzy", "fuzzy"],
    ]);
    // The range spans the citation marker the text leaves out.
    expect(normalizeContent(result.anchored[0]?.range.toString() ?? "").replace("[16]", "")).toBe(claims[0]?.text);
    expect(result.unanchored.map((c) => c.id)).toEqual(["missing"]);
  });

  // Speed on this page is measured, not asserted: test/bench/anchor.bench.ts
  // (npm run bench) and the Chromium e2e's ratio to a raw text walk.
  it("leaves ten absent claims unanchored on a 100,000-character page", () => {
    const claims = Array.from({ length: 10 }, (_, i) =>
      claim(`c${i}`, `A claim number ${i} that is not on the page at all, about quantum chromodynamics and ${i * 7} cats.`),
    );
    const result = anchorClaims(root, claims, textFilterFor(wikipediaAdapter));
    expect(result.textLength).toBeGreaterThan(100_000);
    expect(result.anchored).toEqual([]);
    expect(result.unanchored.map((c) => c.id)).toEqual(claims.map((c) => c.id));
  });
});
