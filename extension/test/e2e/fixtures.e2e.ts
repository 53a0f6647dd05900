// Runs first in the end-to-end suite, without a browser: the pages and the
// stub's canned claims agree with the adapters:
// every page is read as a post (or skipped, for the video one), and every
// claim the stub returns is placed on its page by the tier it is meant to test.

import { describe, expect, it } from "vitest";
import { selectAdapter } from "../../src/content/adapters";
import { anchorClaims, textFilterFor } from "../../src/content/annotate/annotator";
import { skipReasonFor } from "../../src/lib/skip";
import { domFor } from "../dom";
import { CLIMATE, EINSTEIN, LESSWRONG, X_POST } from "./claims";
import { PAGES, type ServedPage } from "./pages";

function read(page: ServedPage) {
  const document = domFor(page.html, page.url);
  const adapter = selectAdapter(page.url, document);
  if (adapter === null) throw new Error(`no adapter for ${page.url}`);
  const result = adapter.extract(document);
  if (result.kind !== "ready") throw new Error(`${page.url}: not ready: ${result.reason}`);
  const root = adapter.getContentRoot(document);
  if (root === null) throw new Error("no root");
  return { content: result.content, root, filter: textFilterFor(adapter) };
}

describe("end-to-end fixtures", () => {
  it("X and Substack pages are read as posts with the ids the stub scripts", () => {
    const x = read(PAGES.x);
    expect(x.content).toMatchObject({ platform: "X", externalId: "1790000000000000202", mediaState: "has_images" });
    expect(skipReasonFor(x.content)).toBeNull();
    expect(read(PAGES.xParent).content.externalId).toBe("1790000000000000201");
    const substack = read(PAGES.substack);
    expect(substack.content).toMatchObject({ platform: "SUBSTACK", externalId: "148000777" });
    expect(skipReasonFor(substack.content)).toBeNull();
    const video = read(PAGES.xVideo);
    expect(skipReasonFor(video.content)).toBe("has_video");
  });

  it("the real Wikipedia articles: skipped as saved, read once the audio boxes and the last sections are gone", () => {
    expect(skipReasonFor(read(PAGES.einsteinAsSaved).content)).toBe("has_video");
    for (const page of [PAGES.einstein, PAGES.climate]) {
      const { content } = read(page);
      expect(skipReasonFor(content)).toBeNull();
      expect(content.contentText.length).toBeGreaterThan(50_000);
    }
  });

  it("the stub's claims anchor on their pages with the intended tiers", () => {
    const tiers = (page: ServedPage, claims: Parameters<typeof anchorClaims>[1]) => {
      const { root, filter } = read(page);
      const result = anchorClaims(root, claims, filter);
      return [...result.anchored.map((a) => `${a.claim.id}:${a.tier}`), ...result.unanchored.map((c) => `${c.id}:none`)];
    };
    expect(tiers(PAGES.einstein, [EINSTEIN.exact, EINSTEIN.repeated, EINSTEIN.fuzzy, EINSTEIN.missing])).toEqual([
      "einstein-exact:exact",
      "einstein-context:context",
      "einstein-fuzzy:fuzzy",
      "einstein-missing:none",
    ]);
    expect(tiers(PAGES.lesswrong, [LESSWRONG.confirmed, LESSWRONG.second])).toEqual(["lw-fifty:exact", "lw-unique:exact"]);
    expect(tiers(PAGES.climate, [CLIMATE.deserts])).toEqual(["climate-deserts:exact"]);
    expect(tiers(PAGES.x, [X_POST.cable])).toEqual(["x-cable:exact"]);
  });

  it("the repeated claim lands on the occurrence its context names", () => {
    const { root, filter } = read(PAGES.einstein);
    const [anchored] = anchorClaims(root, [EINSTEIN.repeated], filter).anchored;
    const paragraph = anchored?.range.startContainer.parentElement?.closest("p");
    expect(paragraph?.textContent).toContain("Royal Society");
  });
});
