// The unpacked Chrome build in Debian's Chromium (headless new mode, which
// runs extensions and their service workers) under playwright-core, with
// the saved pages served at their real URLs: shared by the stub suite
// (chromium.e2e.ts) and the real-stack suite (real-stack.e2e.ts).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, type Page, type Worker, chromium } from "playwright-core";
import { CHROME_BUILD, CHROMIUM_PATH, requireFile, until } from "./harness";
import { PIXEL_PNG, type ServedPage, pageFor } from "./pages";

export class ChromiumExtension {
  private constructor(
    readonly context: BrowserContext,
    /** The extension's id: the host of its chrome-extension:// URLs. */
    readonly id: string,
    private readonly profile: string,
  ) {}

  /** Starts Chromium on a fresh profile (its directory named after profilePrefix) with the extension loaded. */
  static async launch(profilePrefix: string): Promise<ChromiumExtension> {
    requireFile(CHROMIUM_PATH, "Chromium");
    requireFile(join(CHROME_BUILD, "manifest.json"), "the Chrome build");
    const profile = mkdtempSync(join(tmpdir(), profilePrefix));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true, // Chromium's new headless mode: extensions and their service workers run
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
    return new ChromiumExtension(context, new URL(sw.url()).host, profile);
  }

  /** The extension's service worker (started again by Chromium when it was stopped). */
  async worker(): Promise<Worker> {
    return until("the extension's service worker", async () =>
      this.context.serviceWorkers().find((w) => w.url().startsWith(`chrome-extension://${this.id}/`)),
    );
  }

  /** Replaces the extension's settings in its local storage. */
  async setSettings(settings: Record<string, unknown>): Promise<void> {
    const sw = await this.worker();
    await sw.evaluate(async (s) => {
      await chrome.storage.local.set({ settings: s });
    }, settings);
  }

  /** The id of the tab showing url, as the extension sees it. */
  async tabIdOf(url: string): Promise<number> {
    const sw = await this.worker();
    return until(`the tab of ${url}`, () =>
      sw.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? null, url),
    );
  }

  /** Opens a saved page in a new tab. */
  async openPost(served: ServedPage): Promise<{ page: Page; tabId: number }> {
    const page = await this.context.newPage();
    await page.goto(served.url, { waitUntil: "domcontentloaded" });
    return { page, tabId: await this.tabIdOf(served.url) };
  }

  /** Opens the popup for a tab, at the popup's real size. */
  async openPopup(tabId: number): Promise<Page> {
    const popup = await this.context.newPage();
    await popup.setViewportSize({ width: 380, height: 640 });
    await popup.goto(`chrome-extension://${this.id}/popup/index.html?tabId=${tabId}`);
    return popup;
  }

  async close(): Promise<void> {
    await this.context.close();
    rmSync(this.profile, { recursive: true, force: true });
  }
}

/** Waits until the popup shows one of states and returns it. */
export async function popupState(popup: Page, states: string[], timeoutMs = 30_000): Promise<string> {
  await popup.waitForFunction(
    (wanted) => wanted.includes(document.getElementById("state")?.dataset["state"] ?? ""),
    states,
    { timeout: timeoutMs },
  );
  return (await popup.locator("#state").getAttribute("data-state")) ?? "";
}

/** The text of every range registered under a highlight name, read from the page's own world. */
export async function highlightTexts(page: Page, name = "errata-claim"): Promise<string[]> {
  return page.evaluate((n) => {
    const highlight = CSS.highlights.get(n);
    return highlight === undefined ? [] : [...highlight].map((r) => (r as Range).toString());
  }, name);
}

/** Waits for at least count ranges under a highlight name and returns their texts. */
export async function waitForHighlights(page: Page, count: number, name = "errata-claim", timeoutMs = 30_000): Promise<string[]> {
  await page.waitForFunction(
    ([n, c]) => (CSS.highlights.get(n as string)?.size ?? 0) >= (c as number),
    [name, count] as const,
    { timeout: timeoutMs },
  );
  return highlightTexts(page, name);
}

/** Scrolls the range with this text into view and returns a point on its first line. */
export async function pointOnClaim(page: Page, text: string, name = "errata-claim"): Promise<{ x: number; y: number }> {
  const point = await page.evaluate(
    ([n, t]) => {
      const normalize = (s: string) => s.replace(/\[[^\]]{1,40}\]/g, "").replace(/\s+/g, " ").trim();
      const range = [...(CSS.highlights.get(n as string) ?? [])].find((r) => normalize((r as Range).toString()) === t) as Range | undefined;
      if (range === undefined) return null;
      range.startContainer.parentElement?.scrollIntoView({ block: "center" });
      const rect = [...range.getClientRects()].find((r) => r.width > 4);
      return rect === undefined ? null : { x: rect.left + Math.min(rect.width / 2, 24), y: rect.top + rect.height / 2 };
    },
    [name, text] as const,
  );
  if (point === null) throw new Error(`no highlighted range with text ${text}`);
  return point;
}
