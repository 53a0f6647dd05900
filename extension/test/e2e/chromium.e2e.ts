// End to end in Debian's Chromium (headless, new mode, which runs
// extensions) driven by playwright-core: the unpacked Chrome build in a
// persistent context, the saved pages served at their real URLs through
// request routing, and the contract-faithful stub as the API (the real-stack
// suite is real-stack.e2e.ts).

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLIMATE, EINSTEIN, LESSWRONG, X_POST } from "./claims";
import { ChromiumExtension, highlightTexts, pointOnClaim, popupState, waitForHighlights } from "./chromium-extension";
import { computeVersionIdentity } from "../../src/lib/hash";
import { loadReferenceRegister } from "../fixtures";
import { type ApiUnderTest, EXTENSION_DIR, artifact, clean, startApi, until } from "./harness";
import { PAGES } from "./pages";

let api: ApiUnderTest;
let ext: ChromiumExtension;
const timings: Record<string, number> = {};
const REAL = process.env["ERRATA_E2E_API_URL"] !== undefined && process.env["ERRATA_E2E_API_URL"] !== "";

function baseSettings(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiBaseUrl: api.url, apiKey: api.apiKey, openaiApiKey: "", autoInvestigate: false, showHighlights: true, ...extra };
}

beforeAll(async () => {
  api = await startApi();
  for (const served of Object.values(PAGES)) void served.html; // derive the trimmed articles up front
  const started = Date.now();
  ext = await ChromiumExtension.launch("errata-e2e-chromium-");
  timings["browserStartMs"] = Date.now() - started;
  await ext.setSettings(baseSettings());
});

afterAll(async () => {
  writeFileSync(artifact("chromium-timings.json"), `${JSON.stringify(timings, null, 2)}\n`);
  await ext?.close();
  await api?.close();
});

// The stub's scripted scenarios (npm run e2e never runs this file against a
// real API; real-stack.e2e.ts does that).
if (!REAL) describe("Chromium, against the contract stub", () => {
  it("Wikipedia: a completed investigation is highlighted in place, explained on hover and click, listed in the popup", async () => {
    const { page, tabId } = await ext.openPost(PAGES.einstein);
    const texts = (await waitForHighlights(page, 3)).map(clean);
    expect(texts).toEqual(
      expect.arrayContaining([
        EINSTEIN.exact.text,
        EINSTEIN.repeated.text,
        "Albert Einstein was born in Ulm, in the Kingdom of Württemberg in the German Empire, on 14 March 1879.",
      ]),
    );
    expect(texts).toHaveLength(3);
    // The repeated phrase is the occurrence its context names.
    expect(
      await page.evaluate((t) => {
        const r = [...(CSS.highlights.get("errata-claim") ?? [])].find((x) => (x as Range).toString() === t) as Range | undefined;
        return r?.startContainer.parentElement?.closest("p")?.textContent ?? "";
      }, EINSTEIN.repeated.text),
    ).toContain("Royal Society");
    // The post's DOM is untouched: nothing of ours inside the article.
    expect(await page.locator("#mw-content-text errata-annotations, #mw-content-text mark").count()).toBe(0);

    const anchor = await page.evaluate(() =>
      performance.getEntriesByName("errata:anchor").map((e) => ({ ms: e.duration, detail: (e as PerformanceMeasure).detail as unknown })),
    );
    expect(anchor.length).toBeGreaterThan(0);
    timings["anchorEinsteinMs"] = Math.round((anchor[0]?.ms ?? 0) * 10) / 10;
    timings["anchorEinsteinTextLength"] = (anchor[0]?.detail as { textLength?: number } | undefined)?.textLength ?? 0;

    const point = await pointOnClaim(page, EINSTEIN.exact.text);
    await page.mouse.move(point.x, point.y);
    const tooltip = page.locator("errata-annotations .tooltip");
    await expect.poll(() => tooltip.isVisible()).toBe(true);
    expect(await tooltip.textContent()).toContain(EINSTEIN.exact.summary);
    await page.screenshot({ path: artifact("chromium-wikipedia-tooltip.png") });

    await page.mouse.click(point.x, point.y);
    const panel = page.locator("errata-annotations .panel");
    await expect.poll(() => panel.isVisible()).toBe(true);
    const panelText = (await panel.textContent()) ?? "";
    expect(panelText).toContain(EINSTEIN.exact.text);
    expect(panelText).toContain("canned test data");
    expect(panelText).toContain("<script>alert('raw HTML must stay text')</script>");
    expect(await panel.locator("strong").first().textContent()).toBe("canned test data");
    expect(await panel.locator("script").count()).toBe(0);
    expect(await panel.locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")))).toEqual([
      "https://en.wikipedia.org/wiki/Albert_Einstein",
      EINSTEIN.exact.sources[0]?.url,
    ]);
    await page.screenshot({ path: artifact("chromium-wikipedia-panel.png") });
    await page.keyboard.press("Escape");
    await expect.poll(() => panel.isVisible()).toBe(false);

    const popup = await ext.openPopup(tabId);
    expect(await popupState(popup, ["incorrect-claims"])).toBe("incorrect-claims");
    await popup.waitForFunction(() => document.querySelectorAll(".show-in-page").length === 3);
    expect(await popup.locator(".headline").textContent()).toBe("4 incorrect claims found");
    expect(await popup.locator(`li[data-claim-id="${EINSTEIN.missing.id}"]`).textContent()).toContain("Not found in the page text");
    await popup.screenshot({ path: artifact("chromium-popup-incorrect-claims.png"), fullPage: true });

    // "Show in page" scrolls to the claim and opens its panel.
    await popup.locator(`li[data-claim-id="${EINSTEIN.fuzzy.id}"] .show-in-page`).click();
    await expect.poll(async () => (await panel.isVisible()) && ((await panel.textContent()) ?? "").includes("Wurttemberg")).toBe(true);
    await popup.close();

    const badge = await (await ext.worker()).evaluate((id) => chrome.action.getBadgeText({ tabId: id }), tabId);
    expect(badge).toBe("4");
    await page.close();
  });

  it("LessWrong: Investigate Now, live claims while polling, recovery after the service worker is stopped, re-anchoring after a re-render", async () => {
    const stub = api.stub;
    if (stub === null) throw new Error("stub expected");
    const { page, tabId } = await ext.openPost(PAGES.lesswrong);
    let popup = await ext.openPopup(tabId);
    await popupState(popup, ["not-investigated"]);
    await popup.screenshot({ path: artifact("chromium-popup-not-investigated.png"), fullPage: true });
    await popup.locator("#investigate-now").click();
    await popupState(popup, ["investigating"]);
    // First poll (5 s): one confirmed and one pending claim, shown live.
    await popup.waitForFunction(() => (document.getElementById("state")?.textContent ?? "").includes("Being checked (1)"), undefined, { timeout: 15_000 });
    expect(await popup.locator("#state").textContent()).toContain("Confirmed so far (1)");
    await popup.screenshot({ path: artifact("chromium-popup-investigating.png"), fullPage: true });
    expect(await highlightTexts(page)).toEqual([]); // pending and confirmed claims are not drawn
    await popup.close(); // an open popup would wake the worker itself

    // Stop the service worker as Chrome does when it is idle.
    const before = await ext.worker();
    await before.evaluate(() => {
      (globalThis as Record<string, unknown>)["__e2eMarker"] = true;
    });
    const polls = stub.calls("getInvestigation").length;
    const cdp = await ext.context.newCDPSession(page);
    const { targetInfos } = await cdp.send("Target.getTargets");
    const target = targetInfos.find((t) => t.type === "service_worker" && t.url.startsWith(`chrome-extension://${ext.id}/`));
    expect(target).toBeDefined();
    await cdp.send("Target.closeTarget", { targetId: target?.targetId ?? "" });
    const stoppedAt = Date.now();

    // The poll alarm wakes a fresh worker, which resumes the persisted poll.
    const texts = (await waitForHighlights(page, 2, "errata-claim", 60_000)).map(clean);
    timings["serviceWorkerRecoveryMs"] = Date.now() - stoppedAt;
    expect(texts.sort()).toEqual([LESSWRONG.confirmed.text, LESSWRONG.second.text].sort());
    expect(stub.calls("getInvestigation").length).toBeGreaterThan(polls);
    expect(await (await ext.worker()).evaluate(() => (globalThis as Record<string, unknown>)["__e2eMarker"] ?? "fresh")).toBe("fresh");

    popup = await ext.openPopup(tabId);
    await popupState(popup, ["incorrect-claims"]);
    expect(await popup.locator(".headline").textContent()).toBe("2 incorrect claims found");
    await pointOnClaim(page, LESSWRONG.confirmed.text); // scrolls the claims into view
    await page.screenshot({ path: artifact("chromium-lesswrong-highlights.png") });

    // React-style re-render: the post's nodes are replaced; the annotations follow.
    await page.evaluate(() => {
      const content = document.getElementById("postContent");
      if (content !== null) content.innerHTML = content.innerHTML;
    });
    await page.waitForFunction(() => {
      const h = CSS.highlights.get("errata-claim");
      return h !== undefined && h.size === 2 && [...h].every((r) => (r as Range).startContainer.isConnected && !(r as Range).collapsed);
    });
    expect((await highlightTexts(page)).map(clean).sort()).toEqual([LESSWRONG.confirmed.text, LESSWRONG.second.text].sort());
    await popup.close();
    await page.close();
  });

  it("X: auto-investigate with the user's key on a dark page; the key goes on investigateNow only; in-page navigation", async () => {
    const stub = api.stub;
    if (stub === null) throw new Error("stub expected");
    await ext.setSettings(baseSettings({ apiKey: "", openaiApiKey: api.openaiKey, autoInvestigate: true }));
    const { page, tabId } = await ext.openPost(PAGES.x);
    const texts = await waitForHighlights(page, 1, "errata-claim-dark", 20_000);
    expect(texts.map(clean)).toEqual([X_POST.cable.text]);
    expect(await highlightTexts(page, "errata-claim")).toEqual([]);

    const investigate = stub.calls("investigateNow").filter((r) => r.headers["openaiKey"] === api.openaiKey);
    expect(investigate).toHaveLength(1);
    expect(stub.requests.filter((r) => r.headers["openaiKey"] !== undefined).every((r) => r.procedure === "investigateNow")).toBe(true);
    expect(stub.violations).toEqual([]);

    const point = await pointOnClaim(page, X_POST.cable.text, "errata-claim-dark");
    await page.mouse.move(point.x, point.y);
    const tooltip = page.locator("errata-annotations .tooltip");
    await expect.poll(() => tooltip.isVisible()).toBe(true);
    expect(await tooltip.getAttribute("class")).toContain("theme-dark");
    await page.screenshot({ path: artifact("chromium-x-dark-tooltip.png") });

    const popup = await ext.openPopup(tabId);
    await popupState(popup, ["incorrect-claims"]);

    // In-page navigation to the parent post: annotations go, the new post is read (the stub fails it).
    await page.evaluate(() => history.pushState({}, "", "/charles_b/status/1790000000000000201"));
    await popupState(popup, ["error"]);
    expect(await popup.locator("#state").textContent()).toContain("Could not check this post");
    expect(await highlightTexts(page, "errata-claim-dark")).toEqual([]);
    await popup.screenshot({ path: artifact("chromium-popup-error.png"), fullPage: true });
    await ext.setSettings(baseSettings());
    await popup.close();
    await page.close();
  });

  it("Wikipedia: a failed investigation, then Retry", async () => {
    const { page, tabId } = await ext.openPost(PAGES.climate);
    const popup = await ext.openPopup(tabId);
    await popupState(popup, ["not-investigated"]);
    await popup.locator("#investigate-now").click();
    await popupState(popup, ["failed"]);
    await popup.screenshot({ path: artifact("chromium-popup-failed.png"), fullPage: true });
    await popup.locator("#retry").click();
    await popupState(popup, ["investigating", "incorrect-claims"]);
    await popupState(popup, ["incorrect-claims"], 20_000);
    expect((await waitForHighlights(page, 1)).map(clean)).toEqual([CLIMATE.deserts.text]);
    await popup.close();
    await page.close();
  });

  it("Wikipedia: the body sent for the trimmed Einstein article is the one OpenErrata's extension sends", async () => {
    const stub = api.stub;
    if (stub === null) throw new Error("stub expected");
    const reference = loadReferenceRegister("wikipedia-albert-einstein-trimmed.reference-extension-register.json");
    const { page } = await ext.openPost(PAGES.einsteinReference);
    const sent = await until("the registration of the reference page", async () =>
      stub.calls("registerObservedVersion").find((c) => (c.input as { url?: string }).url === PAGES.einsteinReference.url),
    );
    // Only the address differs: the same text, images, captions and pruned HTML, serialized by Chromium.
    expect({ ...(sent.input as object), url: reference.pageUrl }).toEqual(reference.requestBody);
    const body = sent.input as typeof reference.requestBody;
    const id = await computeVersionIdentity(body.observedContentText, body.observedImageOccurrences);
    expect(id.versionHash).toBe(reference.expectedVersionHash);
    expect(id.versionHash).toBe("d513a0e949ec4f4210e8bbfeaecc03472a0178c4485a495be5d0871eba9b1877");
    await page.close();
  });

  it("Substack: clean; X with video: skipped without calling the API; upgrade required", async () => {
    const stub = api.stub;
    if (stub === null) throw new Error("stub expected");
    const substack = await ext.openPost(PAGES.substack);
    const popup = await ext.openPopup(substack.tabId);
    await popupState(popup, ["clean"]);
    expect(await popup.locator(".headline").textContent()).toBe("No issues found.");
    await popup.screenshot({ path: artifact("chromium-popup-clean.png"), fullPage: true });
    expect(await highlightTexts(substack.page)).toEqual([]);

    const registered = stub.calls("registerObservedVersion").length;
    const video = await ext.openPost(PAGES.xVideo);
    const videoPopup = await ext.openPopup(video.tabId);
    await popupState(videoPopup, ["skipped"]);
    expect(await videoPopup.locator("#state").textContent()).toContain("posts with video or audio are not checked");
    await videoPopup.screenshot({ path: artifact("chromium-popup-skipped.png"), fullPage: true });
    expect(stub.calls("registerObservedVersion").length).toBe(registered);
    // The real Wikipedia article as saved carries audio players: skipped too.
    const saved = await ext.openPost(PAGES.einsteinAsSaved);
    const savedPopup = await ext.openPopup(saved.tabId);
    await popupState(savedPopup, ["skipped"]);
    expect(await savedPopup.locator("#state").textContent()).toContain("posts with video or audio are not checked");
    expect(stub.calls("registerObservedVersion").length).toBe(registered);
    for (const p of [savedPopup, saved.page]) await p.close();

    stub.minimumVersion = "99.0.0";
    try {
      await substack.page.reload();
      await popup.reload();
      await popupState(popup, ["upgrade-required"]);
      expect(await popup.locator("#state").textContent()).toContain("it needs 99.0.0 or later");
      await popup.screenshot({ path: artifact("chromium-popup-upgrade-required.png"), fullPage: true });
    } finally {
      stub.minimumVersion = "0.2.0";
    }
    expect(stub.violations).toEqual([]);
    for (const p of [popup, videoPopup, substack.page, video.page]) await p.close();
  });
});

describe("Chromium anchoring speed", () => {
  it("anchors a dozen claims on a 100,000-character article in a real page (speed reported against a raw text walk)", async () => {
    const bundle = await build({
      entryPoints: [join(EXTENSION_DIR, "test", "e2e", "bench-entry.ts")],
      bundle: true,
      write: false,
      format: "iife",
      target: "chrome121",
      logLevel: "silent",
    });
    const page = await ext.context.newPage();
    await page.goto(PAGES.einsteinAsSaved.url, { waitUntil: "domcontentloaded" });
    await page.addScriptTag({ content: bundle.outputFiles[0]?.text ?? "" });
    const claims = [
      EINSTEIN.exact,
      EINSTEIN.repeated,
      EINSTEIN.fuzzy,
      EINSTEIN.missing,
      ...Array.from({ length: 8 }, (_, i) => ({
        ...EINSTEIN.missing,
        id: `absent-${i}`,
        text: `An invented sentence number ${i} about the theory of relativity that the article never contains.`,
      })),
    ];
    const result = await page.evaluate((c) => globalThis.__errataBench(c, 7), claims);
    expect(result.textLength).toBeGreaterThan(100_000);
    expect(result.anchored).toBe(3);
    expect(result.msPerPass).toHaveLength(7);
    expect(result.baselineMsPerPass).toHaveLength(7);
    // Speed is reported, never asserted: the median pass next to a raw text
    // walk with indexOf over the same root in the same run, and their ratio
    // (a long task is 50 ms; test-artifacts/chromium-timings.json keeps them).
    const medianOf = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    const median = medianOf(result.msPerPass);
    const baseline = medianOf(result.baselineMsPerPass);
    timings["anchor100kTextLength"] = result.textLength;
    timings["anchor100kClaims"] = claims.length;
    timings["anchor100kMedianMs"] = Math.round(median * 10) / 10;
    timings["anchor100kMaxMs"] = Math.round(Math.max(...result.msPerPass) * 10) / 10;
    timings["anchor100kBaselineMedianMs"] = Math.round(baseline * 10) / 10;
    timings["anchor100kRatioToBaseline"] = baseline > 0 ? Math.round((median / baseline) * 10) / 10 : 0;
    console.log(
      `in-browser anchoring: ${result.textLength} characters, ${claims.length} claims, median ${median.toFixed(1)} ms per pass ` +
        `(raw text walk + indexOf ${baseline.toFixed(1)} ms, ratio ${(baseline > 0 ? median / baseline : 0).toFixed(1)})`,
    );
    await page.close();
  });
});

describe("Chromium options page", () => {
  it("tests the connection with GET /health and validateSettings", async () => {
    const options = await ext.context.newPage();
    await options.goto(`chrome-extension://${ext.id}/options/index.html`);
    expect(await options.locator("#apiBaseUrl").inputValue()).toBe(api.url);
    await options.locator("#openaiApiKey").fill(REAL ? api.openaiKey : "sk-e2e-user-key");
    await options.locator("#test").click();
    await options.waitForFunction(() => ["ok", "failed"].includes(document.getElementById("test-results")?.dataset["status"] ?? ""));
    const results = (await options.locator("#test-results").textContent()) ?? "";
    expect(results).toContain("Server: reachable and healthy.");
    expect(await options.locator("#test-results").getAttribute("data-status")).toBe("ok");
    if (!REAL) {
      expect(results).toContain("Instance API key: accepted.");
      expect(results).toContain("OpenAI key: accepted by OpenAI.");
      const probe = api.stub?.calls("validateSettings").at(-1);
      expect(probe?.headers["openaiKey"]).toBe("sk-e2e-user-key");
      expect(api.stub?.calls("health").length).toBeGreaterThan(0);
    }
    await options.screenshot({ path: artifact("chromium-options.png"), fullPage: true });
    await options.close();
  });
});

// Against a real Errata stack (a scripted provider, exact outcomes): real-stack.e2e.ts.
