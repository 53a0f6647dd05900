// End to end in Debian's Firefox ESR driven by puppeteer-core over WebDriver
// BiDi: the Firefox build installed as a temporary add-on, a saved page
// served at its real URL through request interception, and the claims of the
// API drawn through the CSS Custom Highlight API. The API is the contract
// stub, or (ERRATA_E2E_API_URL, set by npm run e2e for its real-stack run) a
// real Errata stack whose provider plays test/e2e/fixtures/fake-script.json.
//
// "Dispute this claim" (issue 18) in Firefox: against the stub, a retracted
// appeal (highlight removed), the server's 400 and 429 shown as text, an
// upheld one; against the real stack, the appeals stage decides on the
// climate article's two scripted claims (see appeals.e2e.ts), or, when the
// Chromium suite retracted one already, Firefox finds it gone and disputes
// the other.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type ElementHandle, type Page, launch } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GECKO_ID } from "../../scripts/manifest.mjs";
import { EINSTEIN } from "./claims";
import { type ApiUnderTest, FIREFOX_BUILD, FIREFOX_PATH, artifact, clean, requireFile, startApi, until } from "./harness";
import { PAGES, PIXEL_PNG, pageFor } from "./pages";
import { SCRIPT, approved, fakeLog, headline, investigations, rule } from "./real-stack";
import { APPEAL_RETRACTED_REASON, APPEAL_RETRACT_MARKER, APPEAL_UPHELD_REASON } from "./stub-server";
import { HEADER_EXTENSION_VERSION } from "../../src/background/api-client";
import { LABEL_NAMES } from "../../src/ui/verdict-view";
import { wallJob } from "../verdict-jobs";

// A fixed internal UUID, so the test can open the add-on's own pages.
const ADDON_UUID = "5d3f1c2a-7b8e-4c6d-9a0b-e27a7a0e2e2e";
const REAL = process.env["ERRATA_E2E_API_URL"] !== undefined && process.env["ERRATA_E2E_API_URL"] !== "";

let api: ApiUnderTest;
let browser: Browser;

/**
 * Opens one of the add-on's own pages. Firefox loads them in the extension
 * process, and the navigation events do not reach the driver, so the page is
 * polled for its URL instead of awaiting the navigation.
 */
async function openAddonPage(page: Page, path: string): Promise<void> {
  const url = `moz-extension://${ADDON_UUID}/${path}`;
  page.goto(url, { timeout: 60_000 }).catch(() => undefined);
  await until(`${path} to load`, () =>
    page.evaluate((u) => location.href === u && document.readyState === "complete", url).catch(() => false),
  );
}

/** A request whose page went away meanwhile can no longer be answered; that is fine. */
function ignoreGone(): void {}

async function routed(page: Page): Promise<void> {
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = request.url();
    if (/^https?:\/\/(127\.0\.0\.1|localhost)[:/]/.test(url) || url.startsWith("moz-extension:") || url.startsWith("about:")) {
      request.continue().catch(ignoreGone);
      return;
    }
    // (Request types are not reported over BiDi: decide by URL.)
    const served = pageFor(url);
    if (served !== null) {
      request.respond({ status: 200, contentType: "text/html; charset=utf-8", body: served.html }).catch(ignoreGone);
    } else if (/\.(png|jpe?g|gif|svg|webp)(\?|$)|^https:\/\/(upload\.wikimedia\.org|pbs\.twimg\.com)\//i.test(url)) {
      request.respond({ status: 200, contentType: "image/png", body: PIXEL_PNG }).catch(ignoreGone);
    } else {
      request.abort().catch(ignoreGone);
    }
  });
}

/** What the open claim panel's dispute section shows (the annotation layer's shadow root is open). */
interface DisputeView {
  panelOpen: boolean;
  claimId: string;
  state: string;
  decision: string;
  errors: string;
  form: boolean;
  /** The element focused inside the annotation layer: its type attribute, else its text. */
  focused: string;
}

function disputeView(page: Page): Promise<DisputeView> {
  return page.evaluate(() => {
    const root = document.querySelector("errata-annotations")?.shadowRoot;
    const panel = root?.querySelector<HTMLElement>(".panel");
    const section = panel?.querySelector<HTMLElement>("section.dispute");
    const active = root?.activeElement;
    return {
      panelOpen: panel !== null && panel !== undefined && !panel.hidden,
      claimId: section?.dataset["claimId"] ?? "",
      state: section?.querySelector(".state")?.textContent ?? "",
      decision: section?.querySelector(".decision")?.textContent ?? "",
      errors: section?.querySelector(".errors")?.textContent ?? "",
      form: section?.querySelector("form") !== null && section?.querySelector("form") !== undefined,
      focused: active === null || active === undefined ? "" : (active.getAttribute("type") ?? active.textContent ?? ""),
    };
  });
}

/** An element of the open panel's dispute section, to click or type into. */
async function inDispute(page: Page, selector: string): Promise<ElementHandle<Element>> {
  const handle = await page.evaluateHandle(
    (sel) => document.querySelector("errata-annotations")?.shadowRoot?.querySelector(`.panel section.dispute ${sel}`) ?? null,
    selector,
  );
  const element = handle.asElement();
  if (element === null) throw new Error(`no ${selector} in the dispute section`);
  return element as ElementHandle<Element>;
}

function highlightTexts(page: Page): Promise<string[]> {
  return page.evaluate(() => [...(CSS.highlights.get("errata-claim") ?? [])].map((r) => (r as Range).toString()));
}

/** Clicks the highlighted claim on its plain words (a click on a link inside it follows the link) and waits for its panel. */
async function openClaimCard(page: Page, text: string): Promise<DisputeView> {
  const point = await page.evaluate((t) => {
    const norm = (x: string): string => x.replace(/\[[^\]]{1,40}\]/g, "").replace(/\s+/g, " ").trim();
    const range = [...(CSS.highlights.get("errata-claim") ?? [])].find((r) => norm((r as Range).toString()) === t) as Range | undefined;
    if (range === undefined) return null;
    range.startContainer.parentElement?.scrollIntoView({ block: "center" });
    // The claim's own part of each text node (a node may run on before or after it), plain words first.
    const parts: { range: Range; inLink: boolean }[] = [];
    const nodes: Node[] = [];
    const common = range.commonAncestorContainer;
    if (common.nodeType === Node.TEXT_NODE) nodes.push(common);
    const walker = document.createTreeWalker(common, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) nodes.push(node);
    for (const node of nodes) {
      if (!range.intersectsNode(node)) continue;
      const part = document.createRange();
      part.selectNodeContents(node);
      if (node === range.startContainer) part.setStart(node, range.startOffset);
      if (node === range.endContainer) part.setEnd(node, range.endOffset);
      if (part.toString().trim().length >= 3) parts.push({ range: part, inLink: node.parentElement?.closest("a") !== null });
    }
    for (const { range: part } of [...parts.filter((p) => !p.inLink), ...parts.filter((p) => p.inLink)]) {
      const rect = [...part.getClientRects()].find((r) => r.width > 8 && r.top >= 0 && r.bottom <= innerHeight);
      if (rect !== undefined) return { x: rect.left + Math.min(rect.width / 2, 12), y: rect.top + rect.height / 2 };
    }
    return null;
  }, text);
  if (point === null) throw new Error(`no plain text of the highlighted claim ${text}`);
  await page.mouse.click(point.x, point.y);
  return until(`the panel of ${text}`, async () => {
    const view = await disputeView(page);
    return view.panelOpen && view.claimId !== "" ? view : null;
  });
}

/** Opens the form ("Dispute this claim"); focus moves into it (the author checkbox). */
async function openDisputeForm(page: Page): Promise<void> {
  await (await inDispute(page, "button.dispute-open")).click();
  expect(await until("focus in the form", async () => ((await disputeView(page)).focused === "checkbox" ? true : null))).toBe(true);
}

async function fillDispute(page: Page, reason: string, urls: string): Promise<void> {
  await (await inDispute(page, "textarea.reason")).type(reason);
  await setDisputeUrls(page, urls);
}

/** Replaces the source URLs (typed, one per line). */
async function setDisputeUrls(page: Page, urls: string): Promise<void> {
  const urlBox = await inDispute(page, "textarea.urls");
  await urlBox.evaluate((e) => {
    (e as HTMLTextAreaElement).value = "";
  });
  if (urls !== "") await urlBox.type(urls);
}

async function sendDispute(page: Page): Promise<void> {
  await (await inDispute(page, "button[type=submit]")).click();
}

/** Waits until the dispute section's state (or error list) reads as expected. */
async function disputeShows(page: Page, key: "state" | "errors", want: string, timeoutMs = 30_000): Promise<DisputeView> {
  let last = "";
  try {
    return await until(`the dispute section's ${key} "${want}"`, async () => {
      const view = await disputeView(page);
      last = view[key];
      return last === want ? view : null;
    }, timeoutMs, 300);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; it shows "${last}"`);
  }
}

/** The built add-on's version (the API's version gate wants it). */
const FIREFOX_VERSION = (): string => (JSON.parse(readFileSync(join(FIREFOX_BUILD, "manifest.json"), "utf8")) as { version: string }).version;

/** appeal.get on the real API, as the add-on's client calls it. */
async function appealGet(appealId: string): Promise<{ status: string; role: string; decisionReason: string | null }> {
  const res = await fetch(`${api.url}/trpc/appeal.get?input=${encodeURIComponent(JSON.stringify({ appealId }))}`, {
    headers: { [HEADER_EXTENSION_VERSION]: FIREFOX_VERSION() },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { data: { status: string; role: string; decisionReason: string | null } } }).result.data;
}

/** The appeal the add-on remembers for a claim (its storage.local, read from one of its own pages). */
async function rememberedAppealId(claimId: string): Promise<string> {
  const page = await browser.newPage();
  try {
    await openAddonPage(page, "options/index.html");
    const id = await page.evaluate(async (key) => {
      const got = (await chrome.storage.local.get(key))[key] as { record?: { appealId?: string } } | undefined;
      return got?.record?.appealId ?? "";
    }, `appeal:${claimId}`);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    return id;
  } finally {
    await page.close();
  }
}

beforeAll(async () => {
  requireFile(FIREFOX_PATH, "Firefox ESR");
  requireFile(`${FIREFOX_BUILD}/manifest.json`, "the Firefox build");
  api = await startApi();
  void PAGES.einstein.html; // derive the trimmed article up front
  browser = await launch({
    browser: "firefox",
    executablePath: FIREFOX_PATH,
    headless: true,
    protocol: "webDriverBiDi",
    defaultViewport: { width: 1280, height: 900 },
    // Lets the remote agent open the add-on's own moz-extension:// pages (options, popup).
    args: ["--remote-allow-system-access"],
    extraPrefsFirefox: { "extensions.webextensions.uuids": JSON.stringify({ [GECKO_ID]: ADDON_UUID }) },
  });
  await browser.installExtension(FIREFOX_BUILD);

  // Point the add-on at the API through its own options page.
  const options = await browser.newPage();
  await openAddonPage(options, "options/index.html");
  await options.evaluate(
    (url, key, openaiKey) => {
      const set = (id: string, value: string) => {
        (document.getElementById(id) as HTMLInputElement).value = value;
      };
      set("apiBaseUrl", url);
      set("apiKey", key);
      set("openaiApiKey", openaiKey);
    },
    api.url,
    api.apiKey,
    // Against the real stack: the key its scripted provider accepts, for Investigate Now.
    REAL ? SCRIPT.apiKey : "",
  );
  await options.click("button[type=submit]");
  await options.waitForFunction(() => document.getElementById("saved")?.textContent === "Saved.");
  await options.close();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe(REAL ? "Firefox, against a real Errata stack with a scripted provider" : "Firefox, against the contract stub", () => {
  it("highlights the claims of a saved Wikipedia article and explains them on hover", async () => {
    const page = await browser.newPage();
    await routed(page);
    await page.goto(PAGES.einstein.url, { waitUntil: "domcontentloaded" });
    if (REAL) {
      // The real stack: the article is investigated (by this run or an earlier
      // test of it), the scripted provider's approved claims are drawn.
      const wiki = rule("wikipedia-einstein");
      const good = approved(wiki);
      const popup = await browser.newPage();
      await popup.setViewport({ width: 380, height: 640 });
      await openAddonPage(popup, `popup/index.html?url=${encodeURIComponent(PAGES.einstein.url)}`);
      const stateOf = () => popup.evaluate(() => document.getElementById("state")?.dataset["state"] ?? "");
      const first = await until("a post state in the popup", async () => {
        const s = await stateOf();
        return ["not-investigated", "investigating", "incorrect-claims", "clean", "failed"].includes(s) ? s : null;
      }, 60_000);
      if (first === "not-investigated") {
        const before = investigations(wiki.name).length;
        await popup.click("#investigate-now");
        await until("the provider to be asked", async () => investigations(wiki.name).length > before, 60_000);
      }
      expect(await until("the result", async () => {
        const s = await stateOf();
        return ["incorrect-claims", "clean", "failed"].includes(s) ? s : null;
      }, 90_000)).toBe("incorrect-claims");
      expect(await popup.evaluate(() => document.querySelector(".headline")?.textContent)).toBe(headline(good.length));
      await popup.screenshot({ path: artifact("firefox-real-popup.png") });
      await popup.close();

      await page.waitForFunction((n) => (CSS.highlights.get("errata-claim")?.size ?? 0) >= n, { timeout: 60_000 }, good.length);
      const texts = await page.evaluate(() => [...(CSS.highlights.get("errata-claim") ?? [])].map((r) => (r as Range).toString()));
      expect(texts.map(clean).sort()).toEqual(good.map((c) => c.text).sort());
      const claim = good[0];
      if (claim === undefined) throw new Error("the script approves no Einstein claim");
      const point = await page.evaluate((t) => {
        const range = [...(CSS.highlights.get("errata-claim") ?? [])].find((r) => (r as Range).toString().replace(/\s+/g, " ").trim() === t) as Range | undefined;
        range?.startContainer.parentElement?.scrollIntoView({ block: "center" });
        const rect = range === undefined ? undefined : [...range.getClientRects()].find((r) => r.width > 4);
        return rect === undefined ? null : { x: rect.left + Math.min(rect.width / 2, 24), y: rect.top + rect.height / 2 };
      }, claim.text);
      expect(point).not.toBeNull();
      await page.screenshot({ path: artifact("firefox-real-wikipedia-highlight.png") });
      await page.mouse.move(point?.x ?? 0, point?.y ?? 0);
      const summary = await until("the tooltip", () =>
        page.evaluate(() => {
          const tooltip = document.querySelector("errata-annotations")?.shadowRoot?.querySelector<HTMLElement>(".tooltip");
          return tooltip !== null && tooltip !== undefined && !tooltip.hidden ? tooltip.textContent : null;
        }),
      );
      expect(summary).toContain(claim.summary);
      await page.screenshot({ path: artifact("firefox-real-wikipedia-tooltip.png") });
      expect(investigations(wiki.name)).toHaveLength(1); // one investigation, whichever browser asked for it
      await page.close();
      return;
    }
    await page.waitForFunction(() => (CSS.highlights.get("errata-claim")?.size ?? 0) >= 3, { timeout: 60_000 });
    const texts = await page.evaluate(() => [...(CSS.highlights.get("errata-claim") ?? [])].map((r) => (r as Range).toString()));
    expect(texts.map(clean)).toEqual(expect.arrayContaining([EINSTEIN.exact.text, EINSTEIN.repeated.text]));

    const point = await page.evaluate((t) => {
      const range = [...(CSS.highlights.get("errata-claim") ?? [])].find((r) => (r as Range).toString().replace(/\s+/g, " ").trim() === t) as Range | undefined;
      range?.startContainer.parentElement?.scrollIntoView({ block: "center" });
      const rect = range === undefined ? undefined : [...range.getClientRects()].find((r) => r.width > 4);
      return rect === undefined ? null : { x: rect.left + Math.min(rect.width / 2, 24), y: rect.top + rect.height / 2 };
    }, EINSTEIN.exact.text);
    expect(point).not.toBeNull();
    await page.screenshot({ path: artifact("firefox-wikipedia-highlight.png") });
    await page.mouse.move(point?.x ?? 0, point?.y ?? 0);
    const summary = await until("the tooltip", () =>
      page.evaluate(() => {
        const tooltip = document.querySelector("errata-annotations")?.shadowRoot?.querySelector<HTMLElement>(".tooltip");
        return tooltip !== null && tooltip !== undefined && !tooltip.hidden ? tooltip.textContent : null;
      }),
    );
    expect(summary).toContain(EINSTEIN.exact.summary);
    await page.screenshot({ path: artifact("firefox-wikipedia-tooltip.png") });

    const popup = await browser.newPage();
    await popup.setViewport({ width: 380, height: 640 });
    await openAddonPage(popup, `popup/index.html?url=${encodeURIComponent(PAGES.einstein.url)}`);
    await popup.waitForFunction(() => document.getElementById("state")?.dataset["state"] === "incorrect-claims");
    expect(await popup.evaluate(() => document.querySelector(".headline")?.textContent)).toBe("4 incorrect claims found");
    await popup.screenshot({ path: artifact("firefox-popup-incorrect-claims.png") });
    expect(api.stub?.violations).toEqual([]);
    await popup.close();
    await page.close();
  });

  it("Bluesky: one Fact-check button per post; a click shows the card under the post, then the verdict", async () => {
    const page = await browser.newPage();
    await routed(page);
    await page.goto(PAGES.blueskyFeed.url, { waitUntil: "domcontentloaded" });
    const counts = () =>
      page.evaluate(() => {
        const posts = Array.from(document.querySelectorAll('[data-testid^="feedItem-by-"]'));
        return { perPost: posts.map((p) => p.querySelectorAll("errata-fact-check").length), total: document.querySelectorAll("errata-fact-check").length };
      });
    expect(await until("a button on every post", async () => {
      const c = await counts();
      return c.total === 12 && c.perPost.every((n) => n === 1) ? c : null;
    }, 30_000)).toEqual({ perPost: new Array(12).fill(1), total: 12 });
    // A real click on the first post's button (inside its shadow root).
    const point = await page.evaluate(() => {
      const button = document.querySelector('[data-testid="feedItem-by-marenholt.bsky.social"] errata-fact-check')?.shadowRoot?.querySelector("button");
      button?.scrollIntoView({ block: "center" });
      const r = button?.getBoundingClientRect();
      return r === undefined ? null : { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    });
    expect(point).not.toBeNull();
    await page.mouse.click(point?.x ?? 0, point?.y ?? 0);
    const state = () =>
      page.evaluate(() => document.querySelector('[data-testid="feedItem-by-marenholt.bsky.social"] errata-verdict')?.getAttribute("data-state") ?? "");
    expect(["starting", "pending", "running", "complete"]).toContain(await until("the card", async () => (await state()) || null, 10_000));
    expect(await until("the verdict", async () => {
      const s = await state();
      return ["complete", "failed", "error"].includes(s) ? s : null;
    }, 90_000)).toBe("complete");
    const shown = await page.evaluate(() => {
      const root = document.querySelector('[data-testid="feedItem-by-marenholt.bsky.social"] errata-verdict')?.shadowRoot;
      const section = root?.querySelector("section");
      return {
        pill: root?.querySelector(".ev-pill")?.textContent ?? "",
        confidence: root?.querySelector(".ev-confidence")?.textContent ?? "",
        claims: root?.querySelector("details.ev-claims summary")?.textContent ?? "",
        chips: root?.querySelectorAll(".ev-chip").length ?? 0,
        // The card's own styles apply inside its shadow root (rounded, bordered, light).
        radius: section === null || section === undefined ? "" : getComputedStyle(section).borderTopLeftRadius,
        background: section === null || section === undefined ? "" : getComputedStyle(section).backgroundColor,
      };
    });
    if (REAL) {
      expect(Object.values(LABEL_NAMES)).toContain(shown.pill);
      expect(shown.claims).toBe("Claims (2)");
    } else {
      const job = wallJob(5);
      expect(shown).toEqual({
        pill: "False",
        confidence: `${job.verdict?.confidence ?? 0}% confidence`,
        claims: "Claims (2)",
        chips: 3,
        radius: "12px",
        background: "rgb(255, 255, 255)",
      });
      expect(api.stub?.violations).toEqual([]);
    }
    expect(shown.radius).toBe("12px");
    await page.screenshot({ path: artifact(REAL ? "firefox-real-bluesky-card.png" : "firefox-bluesky-card.png") });
    await page.close();
  });
  it("Dispute this claim: under review, then withdrawn (highlight removed) or upheld; the server's refusals shown as text", async () => {
    if (REAL) {
      await disputeOnRealStack();
      return;
    }
    const stub = api.stub;
    if (stub === null) throw new Error("stub expected");
    stub.appealReadsBeforeDecision = 1; // one read answers OPEN, the next decides
    const page = await browser.newPage();
    await routed(page);
    await page.goto(PAGES.einstein.url, { waitUntil: "domcontentloaded" });
    await page.waitForFunction(() => (CSS.highlights.get("errata-claim")?.size ?? 0) >= 3, { timeout: 60_000 });
    const before = (await highlightTexts(page)).map(clean);
    expect(before).toEqual(expect.arrayContaining([EINSTEIN.exact.text, EINSTEIN.repeated.text]));

    // 1. A reader's appeal the stub retracts: under review, then withdrawn, and the highlight goes.
    expect((await openClaimCard(page, EINSTEIN.exact.text)).claimId).toBe(EINSTEIN.exact.id);
    await openDisputeForm(page);
    const retractReason = `Swiss records show 1896, not 1895 ${APPEAL_RETRACT_MARKER}`;
    await fillDispute(page, retractReason, "https://example.org/records\nhttps://example.org/archive");
    await page.screenshot({ path: artifact("firefox-appeal-form.png") });
    const filedBefore = stub.calls("appeal.file").length;
    await sendDispute(page);
    await disputeShows(page, "state", "Appeal received: under review");
    await page.screenshot({ path: artifact("firefox-appeal-under-review.png") });
    expect((await disputeShows(page, "state", "Withdrawn after review")).decision).toBe(APPEAL_RETRACTED_REASON);
    const after = await until("the withdrawn claim's highlight to go", async () => {
      const texts = (await highlightTexts(page)).map(clean);
      return texts.length === before.length - 1 ? texts : null;
    });
    expect(after).not.toContain(EINSTEIN.exact.text);
    await page.screenshot({ path: artifact("firefox-appeal-retracted.png") });
    expect(stub.calls("appeal.file").slice(filedBefore).map((c) => c.input)).toEqual([
      { claimId: EINSTEIN.exact.id, role: "READER", reason: retractReason, urls: ["https://example.org/records", "https://example.org/archive"] },
    ]);
    await page.keyboard.press("Escape");
    expect(await until("the panel to close", async () => !(await disputeView(page)).panelOpen)).toBe(true);

    // 2. The author's appeal: the stub's 400 (a name resolving to a private address) and its 429, as text; then upheld.
    expect((await openClaimCard(page, EINSTEIN.repeated.text)).claimId).toBe(EINSTEIN.repeated.id);
    await openDisputeForm(page);
    await (await inDispute(page, "input[type=checkbox]")).click();
    const upholdReason = "The prize year is stated correctly in the article.";
    await fillDispute(page, upholdReason, "https://docs.internal/page");
    await sendDispute(page);
    await disputeShows(page, "errors", "url 0: docs.internal resolves to a non-public address.");
    expect(await (await inDispute(page, "button[type=submit]")).evaluate((b) => (b as HTMLButtonElement).disabled)).toBe(false);
    await page.screenshot({ path: artifact("firefox-appeal-400.png") });

    await setDisputeUrls(page, "https://www.nobelprize.org/prizes/physics/1921/summary/");
    stub.appealFloodLimit = stub.calls("appeal.file").length;
    await sendDispute(page);
    await disputeShows(page, "errors", "too many appeals from this client; slow down. Try again in 30 seconds.");
    await page.screenshot({ path: artifact("firefox-appeal-429.png") });
    stub.appealFloodLimit = 20;

    await sendDispute(page);
    await disputeShows(page, "state", "Appeal received: under review");
    expect((await disputeShows(page, "state", "Reviewed: the correction stands")).decision).toBe(APPEAL_UPHELD_REASON);
    expect(stub.calls("appeal.file").at(-1)?.input).toEqual({
      claimId: EINSTEIN.repeated.id,
      role: "AUTHOR",
      reason: upholdReason,
      urls: ["https://www.nobelprize.org/prizes/physics/1921/summary/"],
    });
    expect((await highlightTexts(page)).map(clean).sort()).toEqual([...after].sort());
    await page.screenshot({ path: artifact("firefox-appeal-upheld.png") });
    expect(stub.violations).toEqual([]);
    await page.close();
  }, 240_000);
});

/**
 * The real appeals stage decides (appeals.e2e.ts has the script's side): the
 * climate article's first approved claim is retracted, the second upheld.
 * When the Chromium suite ran first on this stack it retracted the first
 * already: Firefox must not draw it, and disputes the second (a new reason,
 * so a new appeal).
 */
async function disputeOnRealStack(): Promise<void> {
  const climate = rule("wikipedia-climate");
  const [retracted, upheld] = approved(climate);
  if (retracted === undefined || upheld === undefined) throw new Error("the script approves two climate claims");
  const page = await browser.newPage();
  await routed(page);
  await page.goto(PAGES.climate.url, { waitUntil: "domcontentloaded" });

  const popup = await browser.newPage();
  await popup.setViewport({ width: 380, height: 640 });
  await openAddonPage(popup, `popup/index.html?url=${encodeURIComponent(PAGES.climate.url)}`);
  const stateOf = () => popup.evaluate(() => document.getElementById("state")?.dataset["state"] ?? "");
  const first = await until("a post state in the popup", async () => {
    const s = await stateOf();
    return ["not-investigated", "investigating", "incorrect-claims", "clean", "failed"].includes(s) ? s : null;
  }, 60_000);
  if (first === "not-investigated") {
    const asked = investigations(climate.name).length;
    await popup.click("#investigate-now");
    await until("the provider to be asked", async () => investigations(climate.name).length > asked, 60_000);
  }
  expect(await until("the result", async () => {
    const s = await stateOf();
    return ["incorrect-claims", "clean", "failed"].includes(s) ? s : null;
  }, 90_000)).toBe("incorrect-claims");
  const shownHeadline = await popup.evaluate(() => document.querySelector(".headline")?.textContent ?? "");
  await popup.close();
  // Two claims on a fresh stack; one after the Chromium suite's retraction (the server answers it no more).
  const fresh = shownHeadline === headline(2);
  if (!fresh) expect(shownHeadline).toBe(headline(1));
  await page.waitForFunction((n) => (CSS.highlights.get("errata-claim")?.size ?? 0) >= n, { timeout: 60_000 }, fresh ? 2 : 1);
  expect((await highlightTexts(page)).map(clean).sort()).toEqual((fresh ? [retracted.text, upheld.text] : [upheld.text]).sort());
  const reviews = (): string[] => fakeLog().flatMap((e) => (e.kind === "stance" && e.appeal !== undefined ? [e.appeal] : []));

  if (fresh) {
    // 1. The author's appeal, no URL: under review, then withdrawn by the real review; the highlight goes.
    const card = await openClaimCard(page, retracted.text);
    await openDisputeForm(page);
    await (await inDispute(page, "input[type=checkbox]")).click();
    await fillDispute(page, "I wrote this sentence and the survey it cites supports it; please review it again.", "");
    await sendDispute(page);
    await disputeShows(page, "state", "Appeal received: under review");
    await page.screenshot({ path: artifact("firefox-real-appeal-under-review.png") });
    const done = await disputeShows(page, "state", "Withdrawn after review", 90_000);
    const appealId = await rememberedAppealId(card.claimId);
    const decided = await appealGet(appealId);
    expect(decided).toMatchObject({ status: "RETRACTED", role: "AUTHOR" });
    expect(decided.decisionReason ?? "").toMatch(/^Retracted: /);
    expect(done.decision).toBe(decided.decisionReason);
    expect(await until("the withdrawn claim's highlight to go", async () => {
      const texts = (await highlightTexts(page)).map(clean);
      return texts.length === 1 ? texts : null;
    })).toEqual([upheld.text]);
    expect(reviews()).toContain(appealId);
    await page.screenshot({ path: artifact("firefox-real-appeal-retracted.png") });
    await page.keyboard.press("Escape");
    expect(await until("the panel to close", async () => !(await disputeView(page)).panelOpen)).toBe(true);
  }

  // 2. The real server's 400 for 127.0.0.1 in NAT64 form (only its address check knows), as text; then upheld.
  const card = await openClaimCard(page, upheld.text);
  await openDisputeForm(page);
  await fillDispute(page, "The figures come from a study whose authors corrected them in a later issue.", "http://[64:ff9b::127.0.0.1]/admin");
  await sendDispute(page);
  await disputeShows(page, "errors", "urls: url 0: its host is a private or reserved address.");
  expect(await (await inDispute(page, "button[type=submit]")).evaluate((b) => (b as HTMLButtonElement).disabled)).toBe(false);
  await page.screenshot({ path: artifact("firefox-real-appeal-400.png") });
  await setDisputeUrls(page, "");
  await sendDispute(page);
  await disputeShows(page, "state", "Appeal received: under review");
  const done = await disputeShows(page, "state", "Reviewed: the correction stands", 90_000);
  const appealId = await rememberedAppealId(card.claimId);
  const decided = await appealGet(appealId);
  expect(decided).toMatchObject({ status: "UPHELD", role: "READER" });
  expect(decided.decisionReason ?? "").toMatch(/^Upheld: /);
  expect(done.decision).toBe(decided.decisionReason);
  expect((await highlightTexts(page)).map(clean)).toEqual([upheld.text]);
  expect(reviews()).toContain(appealId);
  await page.screenshot({ path: artifact("firefox-real-appeal-upheld.png") });
  expect(investigations(climate.name)).toHaveLength(1);
  await page.close();
}
