// End to end in Debian's Firefox ESR driven by puppeteer-core over WebDriver
// BiDi: the Firefox build installed as a temporary add-on, a saved page
// served at its real URL through request interception, and the claims of the
// API drawn through the CSS Custom Highlight API. The API is the contract
// stub, or (ERRATA_E2E_API_URL, set by npm run e2e for its real-stack run) a
// real Errata stack whose provider plays test/e2e/fixtures/fake-script.json.

import { type Browser, type Page, launch } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GECKO_ID } from "../../scripts/manifest.mjs";
import { EINSTEIN } from "./claims";
import { type ApiUnderTest, FIREFOX_BUILD, FIREFOX_PATH, artifact, clean, requireFile, startApi, until } from "./harness";
import { PAGES, PIXEL_PNG, pageFor } from "./pages";
import { SCRIPT, approved, headline, investigations, rule } from "./real-stack";
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
});
