// End to end in Chromium against a REAL Errata stack: `errata serve` and
// `errata worker` on the local Kafka, Postgres, Elasticsearch and ClickHouse,
// whose LLM provider is `errata fake-openai --script
// test/e2e/fixtures/fake-script.json` (scripts/e2e-stack.mjs starts it;
// npm run e2e runs this file with ERRATA_E2E_API_URL, ERRATA_E2E_OPENAI_KEY,
// ERRATA_E2E_FAKE_LOG set). The script flags verbatim sentences of the saved
// LessWrong post and Einstein article and rejects one of each in its
// validator, so every outcome is exact: which state the popup shows, how many
// claims, which texts are drawn, what the tooltip and the panel say, and how
// many investigations the provider was asked for.

import { writeFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChromiumExtension, highlightTexts, pointOnClaim, popupState, waitForHighlights } from "./chromium-extension";
import { artifact, clean } from "./harness";
import { PAGES, type ServedPage } from "./pages";
import { IS_REAL, REAL_API_URL, SCRIPT, type ScriptRule, approved, headline, investigations, rejected, rule, verdicts } from "./real-stack";

let ext: ChromiumExtension;
const timings: Record<string, number> = {};

async function setSettings(extra: Record<string, unknown> = {}): Promise<void> {
  await ext.setSettings({ apiBaseUrl: REAL_API_URL, apiKey: "", openaiApiKey: SCRIPT.apiKey, autoInvestigate: false, showHighlights: true, ...extra });
}

const sorted = (xs: string[]): string[] => [...xs].sort();

/**
 * Investigate Now on a fresh post: not investigated before, investigating
 * after the click, then exactly the script's approved claims; the provider
 * was asked once. Returns the open page and popup.
 */
async function investigateNow(served: ServedPage, r: ScriptRule | null, name: string): Promise<{ page: Page; tabId: number; popup: Page }> {
  const ruleName = r?.name ?? "";
  const before = investigations(ruleName).length;
  const { page, tabId } = await ext.openPost(served);
  const popup = await ext.openPopup(tabId);
  expect(await popupState(popup, ["not-investigated", "investigating", "incorrect-claims", "clean", "failed"])).toBe("not-investigated");
  expect(await popup.locator("#state").textContent()).toContain("Not yet investigated.");
  await popup.screenshot({ path: artifact(`real-chromium-${name}-popup-not-investigated.png`), fullPage: true });
  const clicked = Date.now();
  await popup.locator("#investigate-now").click();
  await popupState(popup, ["investigating"], 15_000);
  await popup.screenshot({ path: artifact(`real-chromium-${name}-popup-investigating.png`), fullPage: true });
  const wanted = r === null || approved(r).length === 0 ? "clean" : "incorrect-claims";
  expect(await popupState(popup, [wanted, "failed", wanted === "clean" ? "incorrect-claims" : "clean"], 90_000)).toBe(wanted);
  timings[`${name}InvestigateNowToResultMs`] = Date.now() - clicked;
  await popup.screenshot({ path: artifact(`real-chromium-${name}-popup-result.png`), fullPage: true });
  expect(investigations(ruleName).length).toBe(before + 1);
  if (r !== null) {
    // Stage 1 submitted every scripted claim; the validator answered each as scripted.
    const v = verdicts(r.name);
    expect(sorted(v.map((e) => e.text ?? ""))).toEqual(sorted(r.claims.map((c) => c.text)));
    expect(sorted(v.filter((e) => e.approved === false).map((e) => e.text ?? ""))).toEqual(sorted(rejected(r).map((c) => c.text)));
    expect(await popup.locator(".headline").textContent()).toBe(headline(approved(r).length));
    const popupText = (await popup.locator("#state").textContent()) ?? "";
    for (const c of approved(r)) expect(popupText).toContain(c.summary);
    for (const c of rejected(r)) {
      expect(popupText).not.toContain(c.text);
      expect(popupText).not.toContain(c.summary);
    }
  }
  return { page, tabId, popup };
}

beforeAll(async () => {
  if (!IS_REAL) return;
  void PAGES.einstein.html;
  ext = await ChromiumExtension.launch("errata-e2e-real-chromium-");
  await setSettings();
});

afterAll(async () => {
  if (!IS_REAL) return;
  writeFileSync(artifact("real-chromium-timings.json"), `${JSON.stringify(timings, null, 2)}\n`);
  await ext?.close();
});

// Registered only against a real stack (npm run e2e starts one); the stub run covers the rest.
(IS_REAL ? describe : describe.skip)("Chromium, against a real Errata stack with a scripted provider", () => {
  it("options: the connection test reaches the real API, and the API's key check asks the fake provider", async () => {
    const options = await ext.context.newPage();
    await options.goto(`chrome-extension://${ext.id}/options/index.html`);
    expect(await options.locator("#apiBaseUrl").inputValue()).toBe(REAL_API_URL);
    for (const [key, expected] of [
      [SCRIPT.apiKey, "OpenAI key: accepted by OpenAI."],
      ["sk-e2e-a-key-the-fake-refuses-000000", "OpenAI key (invalid): OpenAI rejected this API key."],
    ] as const) {
      await options.locator("#openaiApiKey").fill(key);
      await options.locator("#test").click();
      await options.waitForFunction(() => ["ok", "failed"].includes(document.getElementById("test-results")?.dataset["status"] ?? ""));
      const results = (await options.locator("#test-results").textContent()) ?? "";
      expect(results).toContain("Server: reachable and healthy.");
      expect(results).toContain(expected);
      if (key === SCRIPT.apiKey) await options.screenshot({ path: artifact("real-chromium-options.png"), fullPage: true });
    }
    await options.close();
    await setSettings(); // the test does not save, but keep the stored settings explicit
  });

  it("LessWrong: Investigate Now -> investigating -> exactly the approved claims, drawn, explained; the rejected claim never appears; a reload shows the cached result", async () => {
    const lw = rule("lesswrong");
    const good = approved(lw);
    const bad = rejected(lw);
    expect(bad.length).toBeGreaterThan(0);
    const { page, tabId, popup } = await investigateNow(PAGES.lesswrong, lw, "lesswrong");

    const texts = (await waitForHighlights(page, good.length)).map(clean);
    expect(sorted(texts)).toEqual(sorted(good.map((c) => c.text)));
    for (const c of bad) expect(texts).not.toContain(c.text);

    // Hover: the tooltip with the summary.
    const first = good[0];
    if (first === undefined) throw new Error("the script approves no LessWrong claim");
    const point = await pointOnClaim(page, first.text);
    await page.mouse.move(point.x, point.y);
    const tooltip = page.locator("errata-annotations .tooltip");
    await expect.poll(() => tooltip.isVisible()).toBe(true);
    expect(clean((await tooltip.textContent()) ?? "")).toContain(first.summary);
    await page.screenshot({ path: artifact("real-chromium-lesswrong-tooltip.png") });

    // Click: the panel with the quote, the summary, the reasoning (Markdown) and the sources.
    await page.mouse.click(point.x, point.y);
    const panel = page.locator("errata-annotations .panel");
    await expect.poll(() => panel.isVisible()).toBe(true);
    const panelText = (await panel.textContent()) ?? "";
    expect(panelText).toContain(first.text);
    expect(panelText).toContain(first.summary);
    expect(await panel.locator(".reasoning strong").first().textContent()).toBe("scripted test data");
    expect(clean((await panel.locator(".reasoning").textContent()) ?? "")).toContain("The fake provider submits it and its validator approves it.");
    expect(await panel.locator(".sources a").evaluateAll((as) => as.map((a) => [a.getAttribute("href"), a.textContent]))).toEqual(
      first.sources.map((s) => [s.url, s.title]),
    );
    expect(await panel.locator(".sources .snippet").allTextContents()).toEqual(first.sources.map((s) => s.snippet));
    await page.screenshot({ path: artifact("real-chromium-lesswrong-panel.png") });
    await page.keyboard.press("Escape");
    await popup.close();

    // Reload: the cached result at once, no new investigation.
    await page.reload({ waitUntil: "domcontentloaded" });
    const reloadedAt = Date.now();
    const again = await ext.openPopup(tabId);
    expect(await popupState(again, ["not-investigated", "investigating", "incorrect-claims", "clean", "failed"])).toBe("incorrect-claims");
    expect(await again.locator(".headline").textContent()).toBe(headline(good.length));
    expect(sorted((await waitForHighlights(page, good.length)).map(clean))).toEqual(sorted(good.map((c) => c.text)));
    timings["lesswrongReloadToHighlightsMs"] = Date.now() - reloadedAt;
    await page.waitForTimeout(1_000);
    expect(investigations(lw.name)).toHaveLength(1);
    await again.close();
    await page.close();
  });

  it("Wikipedia: Investigate Now on the Einstein article -> exactly the approved claims; the repeated phrase is placed by its context; the rejected claim never appears", async () => {
    const wiki = rule("wikipedia-einstein");
    const good = approved(wiki);
    const { page, popup } = await investigateNow(PAGES.einstein, wiki, "wikipedia");
    await popup.waitForFunction((n) => document.querySelectorAll(".show-in-page").length === n, good.length);
    const texts = (await waitForHighlights(page, good.length)).map(clean);
    expect(sorted(texts)).toEqual(sorted(good.map((c) => c.text)));
    for (const c of rejected(wiki)) expect(texts).not.toContain(c.text);
    expect(
      await page.evaluate(() => {
        const r = [...(CSS.highlights.get("errata-claim") ?? [])].find((x) => (x as Range).toString() === "1921 Nobel Prize in Physics") as Range | undefined;
        return r?.startContainer.parentElement?.closest("p")?.textContent ?? "";
      }),
    ).toContain("In 1922, he was awarded");
    const first = good[0];
    if (first === undefined) throw new Error("the script approves no Einstein claim");
    const point = await pointOnClaim(page, first.text);
    await page.mouse.move(point.x, point.y);
    const tooltip = page.locator("errata-annotations .tooltip");
    await expect.poll(() => tooltip.isVisible()).toBe(true);
    expect(clean((await tooltip.textContent()) ?? "")).toContain(first.summary);
    await page.screenshot({ path: artifact("real-chromium-wikipedia-tooltip.png") });
    await popup.close();
    await page.close();
  });

  it("Substack: a post the script does not match ends clean", async () => {
    const { page, popup } = await investigateNow(PAGES.substack, null, "substack");
    expect(await popup.locator(".headline").textContent()).toBe("No issues found.");
    expect(await highlightTexts(page)).toEqual([]);
    await popup.close();
    await page.close();
  });
});
