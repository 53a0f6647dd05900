// Anchoring cost on a long page: a synthetic 100,000-character article
// (paragraphs, inline markup, headings) and a dozen claims of every tier.
// Run with `npm run bench`; the "anchor 12 claims" row is the figure that
// matters (text map + matching + ranges, what one re-anchoring pass costs).

import { JSDOM } from "jsdom";
import { bench, describe } from "vitest";
import { anchorClaims } from "../../src/content/annotate/annotator";
import { findClaim } from "../../src/content/annotate/match";
import { buildTextMap } from "../../src/content/annotate/text-map";
import type { Claim } from "../../src/lib/api-types";

const WORDS =
  "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three".split(
    " ",
  );

function seededWords(seed: number, count: number): string[] {
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(WORDS[x % WORDS.length] ?? "the");
  }
  return out;
}

function buildPage(): { doc: Document; root: Element; claims: Claim[] } {
  const paragraphs: string[] = [];
  const sentences: string[] = [];
  let length = 0;
  let seed = 7;
  while (length < 100_000) {
    const words = seededWords(seed++, 60);
    const sentence = `${words.slice(0, 20).join(" ")}. ${words.slice(20, 40).join(" ")}. ${words.slice(40).join(" ")}.`;
    sentences.push(sentence);
    const html = `<p>${words.slice(0, 10).join(" ")} <em>${words.slice(10, 14).join(" ")}</em> ${words.slice(14, 20).join(" ")}. ${words.slice(20, 40).join(" ")}. <a href="#x">${words.slice(40, 45).join(" ")}</a> ${words.slice(45).join(" ")}.</p>`;
    paragraphs.push(paragraphs.length % 12 === 0 ? `<h2>Section ${paragraphs.length}</h2>${html}` : html);
    length += sentence.length + 1;
  }
  const doc = new JSDOM(`<!doctype html><body><article id="post">${paragraphs.join("")}</article></body>`).window.document;
  const root = doc.getElementById("post");
  if (root === null) throw new Error("no root");
  const source = (id: string, text: string, context = text): Claim => ({
    id,
    text,
    context,
    summary: "s",
    reasoning: "r",
    sources: [{ url: "https://example.org/", title: "t", snippet: "" }],
  });
  const pick = (i: number): string => sentences[Math.floor((sentences.length * i) / 12)] ?? "";
  const claims: Claim[] = [];
  for (let i = 0; i < 6; i += 1) claims.push(source(`exact-${i}`, pick(i).slice(0, 140)));
  for (let i = 6; i < 9; i += 1) {
    const t = pick(i).slice(0, 140);
    // Three characters dropped and one changed: what a model's slightly-off quote looks like.
    claims.push(source(`fuzzy-${i}`, `${t.slice(0, 50)}${t.slice(53, 90)}#${t.slice(91)}`));
  }
  claims.push(source("repeated", "the", pick(9).slice(0, 60)));
  for (let i = 0; i < 2; i += 1) claims.push(source(`missing-${i}`, `Zebras invented the ${i}th steam engine in Antarctica during a quiet afternoon.`));
  return { doc, root, claims };
}

const { root, claims } = buildPage();
const map = buildTextMap(root);
const once = anchorClaims(root, claims);
console.log(
  `bench page: ${map.text.length} characters of post text; ${claims.length} claims: ` +
    once.anchored.map((a) => `${a.claim.id}=${a.tier}`).join(", ") +
    `; not anchored: ${once.unanchored.map((c) => c.id).join(", ")}`,
);

describe("anchoring a 100,000-character page", () => {
  bench("build text map", () => {
    buildTextMap(root);
  });
  bench("match 12 claims (text only)", () => {
    for (const claim of claims) findClaim(map.text, claim);
  });
  bench("anchor 12 claims (map + match + ranges)", () => {
    anchorClaims(root, claims);
  });
});
