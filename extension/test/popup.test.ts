// Every popup state, rendered into a jsdom document.

import { describe, expect, it } from "vitest";
import type { Claim } from "../src/lib/api-types";
import type { StatusState, TabState } from "../src/lib/tab-state";
import { MAX_URL_CHARS, renderState, shortenUrl, stateName, type PopupContext } from "../src/popup/render";
import { domFor } from "./dom";
import { HOSTILE, failedJob, hostileJob, wallJob } from "./verdict-jobs";

const claim = (id: string, text: string): Claim => ({
  id,
  text,
  context: text,
  summary: `Summary of ${id}.`,
  reasoning: "Because **sources** say so: [link](https://example.org/) and <script>x</script>.",
  sources: [{ url: "https://example.org/s", title: "Source", snippet: "snippet" }],
});

const base: StatusState = {
  kind: "status",
  platform: "LESSWRONG",
  url: "https://www.lesswrong.com/posts/abc/slug",
  title: "A post",
  externalId: "abc",
  postVersionId: "pv",
  versionHash: "ab".repeat(32),
  provenance: "SERVER_VERIFIED",
  status: { investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null },
};

function render(state: TabState, overrides: Partial<PopupContext> = {}) {
  const doc = domFor("<main></main>");
  const calls: string[] = [];
  const ctx: PopupContext = {
    doc,
    hasCredentials: true,
    onInvestigate: () => calls.push("investigate"),
    onRecheck: () => calls.push("recheck"),
    onFocusClaim: (id) => calls.push(`focus:${id}`),
    onOpenSettings: () => calls.push("settings"),
    onVerdict: () => calls.push("verdict"),
    ...overrides,
  };
  const main = doc.querySelector("main");
  main?.replaceChildren(...renderState(ctx, state));
  return { main: main as HTMLElement, text: (main?.textContent ?? "").replace(/\s+/g, " "), calls, name: stateName(state) };
}

describe("popup states", () => {
  it("not investigated: Investigate Now, disabled with a hint when no key is set", () => {
    const r = render(base);
    expect(r.name).toBe("not-investigated");
    expect(r.text).toContain("Not yet investigated.");
    const button = r.main.querySelector<HTMLButtonElement>("#investigate-now");
    expect(button?.disabled).toBe(false);
    button?.click();
    expect(r.calls).toEqual(["investigate"]);

    const noKey = render(base, { hasCredentials: false });
    expect(noKey.main.querySelector<HTMLButtonElement>("#investigate-now")?.disabled).toBe(true);
    expect(noKey.text).toContain("add your OpenAI key or an instance API key");
    const requesting = render({ ...base, requesting: true });
    expect(requesting.main.querySelector("#investigate-now")?.textContent).toBe("Requesting…");
    // Progress shows at once, before the server answered.
    expect(requesting.main.querySelector(".headline .spinner")).not.toBeNull();
    expect(requesting.main.querySelector(".headline")?.textContent).toBe("Requesting an investigation…");
    expect(render({ ...base, requestError: "the server is busy" }).text).toContain("Could not continue: the server is busy.");
  });

  it("investigating: queued or running, with live confirmed and pending claims", () => {
    const { id: _id, ...payload } = claim("p", "Pending claim text");
    const r = render({
      ...base,
      investigationId: "inv",
      status: {
        investigationState: "INVESTIGATING",
        status: "PROCESSING",
        provenance: "SERVER_VERIFIED",
        pendingClaims: [payload],
        confirmedClaims: [{ ...payload, text: "Confirmed claim text" }],
        priorInvestigationResult: { oldClaims: [claim("o", "old")], sourceInvestigationId: "inv-0" },
      },
    });
    expect(r.name).toBe("investigating");
    expect(r.text).toContain("Investigating…");
    expect(r.text).toContain("Confirmed so far (1):");
    expect(r.text).toContain("“Confirmed claim text”");
    expect(r.text).toContain("Being checked (1), not final:");
    expect(r.text).toContain("An earlier version of this post had 1 incorrect claim.");
  });

  it("N incorrect claims: show-in-page for anchored ones, a note for the others; Markdown stays safe", () => {
    const claims = [claim("a", "First wrong claim"), claim("b", "Second wrong claim")];
    const r = render({
      ...base,
      status: { investigationState: "INVESTIGATED", provenance: "SERVER_VERIFIED", claims },
      anchoring: { anchored: ["a"], unanchored: ["b"] },
    });
    expect(r.name).toBe("incorrect-claims");
    expect(r.text).toContain("2 incorrect claims found");
    const items = r.main.querySelectorAll("ol.claims > li");
    expect(items[0]?.querySelector<HTMLButtonElement>(".show-in-page")?.textContent).toBe("Show in page");
    items[0]?.querySelector<HTMLButtonElement>(".show-in-page")?.click();
    expect(r.calls).toEqual(["focus:a"]);
    expect(items[1]?.querySelector(".show-in-page")).toBeNull();
    expect(items[1]?.textContent).toContain("Not found in the page text");
    expect(r.text).toContain("1 of them could not be placed in the page");
    expect(r.main.querySelector("script")).toBeNull();
    expect(r.main.querySelector(".reasoning a")?.getAttribute("href")).toBe("https://example.org/");
  });

  it("a claim withdrawn after an appeal is listed as withdrawn, last, and not counted; never as not found", () => {
    const claims = [claim("a", "Withdrawn claim"), claim("b", "Standing claim"), claim("c", "Claim not on the page")];
    const r = render({
      ...base,
      status: { investigationState: "INVESTIGATED", provenance: "SERVER_VERIFIED", claims },
      // An older report may still name the withdrawn claim as not placed.
      anchoring: { anchored: ["b"], unanchored: ["a", "c"], withdrawn: ["a"] },
    });
    expect(r.name).toBe("incorrect-claims");
    expect(r.text).toContain("2 incorrect claims found");
    const items = [...r.main.querySelectorAll<HTMLElement>("ol.claims > li")];
    expect(items.map((li) => li.dataset["claimId"])).toEqual(["b", "c", "a"]);
    const withdrawn = items[2];
    expect(withdrawn?.classList.contains("withdrawn")).toBe(true);
    expect(withdrawn?.querySelector(".claim-note")?.textContent).toBe("Withdrawn after review; no longer highlighted.");
    expect(withdrawn?.textContent).not.toContain("Not found in the page text");
    expect(withdrawn?.querySelector(".show-in-page")).toBeNull();
    expect(items[1]?.textContent).toContain("Not found in the page text");
    expect(r.text).toContain("1 of them could not be placed in the page");

    const allGone = render({
      ...base,
      status: { investigationState: "INVESTIGATED", provenance: "SERVER_VERIFIED", claims: [claims[0] as Claim] },
      anchoring: { anchored: [], unanchored: [], withdrawn: ["a"] },
    });
    expect(allGone.name).toBe("clean");
    expect(allGone.text).toContain("No incorrect claims remain.");
    expect(allGone.text).toContain("Withdrawn after review; no longer highlighted.");
    expect(allGone.text).not.toContain("could not be placed");
  });

  it("clean, failed with retry, skipped, upgrade required, errors", () => {
    expect(render({ ...base, status: { investigationState: "INVESTIGATED", provenance: "SERVER_VERIFIED", claims: [] } }).text).toContain(
      "No issues found.",
    );
    const failed = render({ ...base, status: { investigationState: "FAILED", provenance: "SERVER_VERIFIED" } });
    expect(failed.name).toBe("failed");
    expect(failed.text).toContain("The investigation failed.");
    failed.main.querySelector<HTMLButtonElement>("#retry")?.click();
    expect(failed.calls).toEqual(["investigate"]);

    const skipped = render({ kind: "skipped", platform: "X", url: "https://x.com/a/status/1", reason: "has_video" });
    expect(skipped.name).toBe("skipped");
    expect(skipped.text).toContain("Skipped: posts with video or audio are not checked");

    const upgrade = render({ kind: "error", platform: "X", url: "u", message: "m", upgradeRequired: { minimumVersion: "9.0.0" } });
    expect(upgrade.name).toBe("upgrade-required");
    expect(upgrade.text).toContain("it needs 9.0.0 or later");

    const error = render({ kind: "error", platform: "X", url: "u", message: "the Errata server cannot be reached" });
    expect(error.name).toBe("error");
    expect(error.text).toContain("Could not check this post: the Errata server cannot be reached.");
    error.main.querySelector<HTMLButtonElement>("button")?.click();
    expect(error.calls).toEqual(["recheck"]);

    expect(render({ kind: "idle" }).text).toContain("No supported post on this page.");
    expect(render({ kind: "registering", platform: "X", url: "u", externalId: "1" }).text).toContain("Checking this post…");
  });
});

describe("popup polish", () => {
  it("shortens long post URLs in the middle, keeps the full URL in the title", () => {
    const long = "https://x.com/ada_lovelace_official/status/1790000000000000202?s=20&t=AbCdEfGhIjKlMnOp";
    expect(shortenUrl(long)).toBe("x.com/ada_lovelace_o…1790000000000000202");
    expect(Array.from(shortenUrl(long))).toHaveLength(MAX_URL_CHARS);
    expect(shortenUrl("https://x.com/ada_l/status/1790000000000000202")).toBe("x.com/ada_l/status/1790000000000000202");
    expect(shortenUrl("https://www.lesswrong.com/")).toBe("lesswrong.com");
    expect(shortenUrl("https://en.wikipedia.org/wiki/%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80", 20)).toBe("en.wikiped…%9F%98%80");
    expect(shortenUrl("not a url at all, just a very long string of text", 11)).toBe("not a… text");
    const r = render({ ...base, url: long });
    const url = r.main.querySelector(".url-text");
    expect(url?.textContent).toBe("x.com/ada_lovelace_o…1790000000000000202");
    expect(url?.getAttribute("title")).toBe(long);
    expect(r.main.querySelector(".url")?.textContent).toBe("LessWrong · x.com/ada_lovelace_o…1790000000000000202");
  });

  it("on Bluesky and Threads, points to the Fact-check buttons", () => {
    expect(render({ kind: "idle" }, { feedSite: "Bluesky" }).text).toContain("On Bluesky, use the Fact-check button under a post.");
  });
});

describe("popup: Verdict for this post", () => {
  const ID = "0b9d4f0e-6a43-5c1e-9d1a-3f7a2b6c8e11";
  const section = (r: ReturnType<typeof render>) => r.main.querySelector<HTMLElement>("#verdict");

  it("offers it on every post state, and follows the analysis to its verdict", () => {
    const none = render(base);
    expect(section(none)?.dataset["verdict"]).toBe("none");
    none.main.querySelector<HTMLButtonElement>("#verdict-for-post")?.click();
    expect(none.calls).toEqual(["verdict"]);
    const investigated = render({ ...base, status: { investigationState: "INVESTIGATED", provenance: "SERVER_VERIFIED", claims: [] } });
    expect(investigated.main.querySelector("#verdict-for-post")?.textContent).toBe("Verdict for this post");

    expect(section(render({ ...base, verdict: { requesting: true } }))?.dataset["verdict"]).toBe("requesting");
    const starting = render({ ...base, verdict: { analysisId: ID } });
    expect(section(starting)?.dataset["verdict"]).toBe("starting");
    expect(starting.text).toContain("Sending the post to Errata…");
    const running = render({ ...base, verdict: { analysisId: ID, job: wallJob(3) } });
    expect(section(running)?.dataset["verdict"]).toBe("running");
    expect(running.text).toContain("Searched “Great Wall of China visible from the Moon naked eye”");
    const done = render({ ...base, verdict: { analysisId: ID, job: wallJob(5) } });
    expect(section(done)?.dataset["verdict"]).toBe("complete");
    expect(section(done)?.querySelector(".ev-pill")?.textContent).toBe("False");
    expect(section(done)?.querySelector(".ev-confidence")?.textContent).toBe("82% confidence");
    expect(section(done)?.querySelector("details.ev-claims summary")?.textContent).toBe("Claims (2)");
    expect(section(done)?.querySelectorAll(".ev-chip")).toHaveLength(3);
  });

  it("failures, and hostile strings stay text", () => {
    const failed = render({ ...base, verdict: { analysisId: ID, job: failedJob() } });
    expect(section(failed)?.dataset["verdict"]).toBe("failed");
    expect(failed.text).toContain("The verdict analysis failed: the provider refused the request");
    const refused = render({ ...base, verdict: { error: "the server is busy; try again in a minute" } });
    expect(section(refused)?.dataset["verdict"]).toBe("error");
    expect(refused.text).toContain("Could not request a verdict: the server is busy; try again in a minute.");
    refused.main.querySelector<HTMLButtonElement>("#verdict-for-post")?.click();
    expect(refused.calls).toEqual(["verdict"]);
    const lost = render({ ...base, verdict: { analysisId: ID, job: wallJob(3) } }, { verdictError: "the Errata server cannot be reached" });
    expect(lost.text).toContain("Lost track of the verdict: the Errata server cannot be reached.");
    const hostile = render({ ...base, verdict: { analysisId: ID, job: hostileJob() } });
    expect(hostile.main.querySelectorAll("img, script")).toHaveLength(0);
    expect(hostile.text).toContain(`${HOSTILE} summary`);
  });
});
