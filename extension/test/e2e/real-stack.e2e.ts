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

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, type Page, type Worker, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROME_BUILD, CHROMIUM_PATH, artifact, clean, requireFile, until } from "./harness";
import { PAGES, PIXEL_PNG, type ServedPage, pageFor } from "./pages";
import { IS_REAL, REAL_API_URL, SCRIPT, type ScriptRule, approved, headline, investigations, rejected, rule, verdicts } from "./real-stack";

let context: BrowserContext;
let profile: string;
let extensionId = "";
const timings: Record<string, number> = {};

async function worker(): Promise<Worker> {
  return until("the extension's service worker", async () =>
    context.serviceWorkers().find((w) => w.url().startsWith(`chrome-extension://${extensionId}/`)),
  );
}

async function setSettings(extra: Record<string, unknown> = {}): Promise<void> {
  const settings = { apiBaseUrl: REAL_API_URL, apiKey: "", openaiApiKey: SCRIPT.apiKey, autoInvestigate: false, showHighlights: true, ...extra };
  const sw = await worker();
  await sw.evaluate(async (s) => {
    await chrome.storage.local.set({ settings: s });
  }, settings);
}

async function openPost(served: ServedPage): Promise<{ page: Page; tabId: number }> {
  const page = await context.newPage();
  await page.goto(served.url, { waitUntil: "domcontentloaded" });
  const sw = await worker();
  const tabId = await until(`the tab of ${served.url}`, () =>
    sw.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? null, served.url),
  );
  return { page, tabId };
}

async function openPopup(tabId: number): Promise<Page> {
  const popup = await context.newPage();
  await popup.setViewportSize({ width: 380, height: 640 });
  await popup.goto(`chrome-extension://${extensionId}/popup/index.html?tabId=${tabId}`);
  return popup;
}

async function popupState(popup: Page, states: string[], timeoutMs = 30_000): Promise<string> {
  await popup.waitForFunction(
    (wanted) => wanted.includes(document.getElementById("state")?.dataset["state"] ?? ""),
    states,
    { timeout: timeoutMs },
  );
  return (await popup.locator("#state").getAttribute("data-state")) ?? "";
}

async function highlightTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => [...(CSS.highlights.get("errata-claim") ?? [])].map((r) => (r as Range).toString()));
}

async function waitForHighlights(page: Page, count: number, timeoutMs = 30_000): Promise<string[]> {
  await page.waitForFunction((c) => (CSS.highlights.get("errata-claim")?.size ?? 0) >= c, count, { timeout: timeoutMs });
  return highlightTexts(page);
}

async function pointOnClaim(page: Page, text: string): Promise<{ x: number; y: number }> {
  const point = await page.evaluate((t) => {
    const normalize = (s: string) => s.replace(/\[[^\]]{1,40}\]/g, "").replace(/\s+/g, " ").trim();
    const range = [...(CSS.highlights.get("errata-claim") ?? [])].find((r) => normalize((r as Range).toString()) === t) as Range | undefined;
    if (range === undefined) return null;
    range.startContainer.parentElement?.scrollIntoView({ block: "center" });
    const rect = [...range.getClientRects()].find((r) => r.width > 4);
    return rect === undefined ? null : { x: rect.left + Math.min(rect.width / 2, 24), y: rect.top + rect.height / 2 };
  }, text);
  if (point === null) throw new Error(`no highlighted range with text ${text}`);
  return point;
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
  const { page, tabId } = await openPost(served);
  const popup = await openPopup(tabId);
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
  requireFile(CHROMIUM_PATH, "Chromium");
  requireFile(join(CHROME_BUILD, "manifest.json"), "the Chrome build");
  void PAGES.einstein.html;
  profile = mkdtempSync(join(tmpdir(), "errata-e2e-real-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [`--disable-extensions-except=${CHROME_BUILD}`, `--load-extension=${CHROME_BUILD}`, "--no-sandbox", "--no-first-run"],
  });
  // The saved pages at their real URLs; images get a pixel; nothing else leaves the machine.
  await context.route(/^https?:\/\/(?!127\.0\.0\.1|localhost)/, async (route) => {
    const served = pageFor(route.request().url());
    if (served !== null && route.request().resourceType() === "document") {
      await route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: served.html });
    } else if (route.request().resourceType() === "image") {
      await route.fulfill({ status: 200, contentType: "image/png", body: PIXEL_PNG });
    } else {
      await route.abort();
    }
  });
  const sw = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  extensionId = new URL(sw.url()).host;
  await setSettings();
});

afterAll(async () => {
  if (!IS_REAL) return;
  writeFileSync(artifact("real-chromium-timings.json"), `${JSON.stringify(timings, null, 2)}\n`);
  await context?.close();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
});

// Registered only against a real stack (npm run e2e starts one); the stub run covers the rest.
(IS_REAL ? describe : describe.skip)("Chromium, against a real Errata stack with a scripted provider", () => {
  it("options: the connection test reaches the real API, and the API's key check asks the fake provider", async () => {
    const options = await context.newPage();
    await options.goto(`chrome-extension://${extensionId}/options/index.html`);
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
    const again = await openPopup(tabId);
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
