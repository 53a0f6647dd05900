// Bundled by the Chromium end-to-end test and run inside a real page: the
// anchoring pass (text map, matching, ranges) over the unmodified saved
// Einstein article, about 100,000 characters of post text.

import { wikipediaAdapter } from "../../src/content/adapters/wikipedia";
import { anchorClaims, textFilterFor } from "../../src/content/annotate/annotator";
import type { Claim } from "../../src/lib/api-types";

declare global {
  var __errataBench: (
    claims: Claim[],
    rounds: number,
  ) => { textLength: number; anchored: number; msPerPass: number[]; baselineMsPerPass: number[] };
}

globalThis.__errataBench = (claims, rounds) => {
  const root = wikipediaAdapter.getContentRoot(document);
  if (root === null) throw new Error("no article");
  const times: number[] = [];
  const baseline: number[] = [];
  let textLength = 0;
  let anchored = 0;
  for (let i = 0; i < rounds; i += 1) {
    // The raw baseline, in the same page and round: one walk over the
    // same root's text nodes and a plain indexOf of each claim.
    let started = performance.now();
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const parts: string[] = [];
    for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) parts.push(n.nodeValue ?? "");
    const text = parts.join("");
    let found = 0;
    for (const c of claims) if (text.indexOf(c.text) >= 0) found += 1;
    if (found < 0) throw new Error("unreachable"); // keeps the search from being optimised away
    baseline.push(performance.now() - started);
    started = performance.now();
    const result = anchorClaims(root, claims, textFilterFor(wikipediaAdapter));
    times.push(performance.now() - started);
    textLength = result.textLength;
    anchored = result.anchored.length;
  }
  return { textLength, anchored, msPerPass: times, baselineMsPerPass: baseline };
};
