// End to end in Chromium on the saved Bluesky and Threads pages (served at
// their real URLs): one Fact-check button per post, also after infinite
// scroll and re-renders; a click shows the progress card at once, follows
// the analysis (each search with its top results), then shows the verdict
// card: pill, confidence, summary, "Claims (N)", caveats, source chips with
// tier badges, in the site's theme, light and dark; the popup's "Verdict for
// this post" on the four other platforms; the popup's one-line post URL.
//
// The API is the contract stub (scripted jobs, exact texts), or with
// ERRATA_E2E_API_URL a real Errata stack whose fake provider plays the
// verdict sections of test/e2e/fixtures/fake-script.json: the card is then
// compared with the job the API itself returns and with the script.

import { writeFileSync } from "node:fs";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_NAMES } from "../../src/ui/verdict-view";
import type { VerdictJob } from "../../src/lib/api-types";
import { HOSTILE, WALL_CLAIMS } from "../verdict-jobs";
import { ChromiumExtension, popupState } from "./chromium-extension";
import { type ApiUnderTest, artifact, startApi, until } from "./harness";
import { PAGES, SITE_THEMES, type ServedPage } from "./pages";
import { IS_REAL, SCRIPT, fakeLog } from "./real-stack";

const BLUESKY_POSTS = '[data-testid^="feedItem-by-"], [data-testid^="postThreadItem-by-"]';
const THREADS_POSTS = '[data-pressable-container="true"]';
type Site = "bluesky" | "threads";

let api: ApiUnderTest;
let ext: ChromiumExtension;
const timings: Record<string, number> = {};

/** The verdict section of the script's rule (real stack). */
function scriptedVerdict(rule: string): { claims: Array<{ text: string }>; summary: string; caveats?: string[] } {
  const found = (SCRIPT.rules as unknown as Array<{ name: string; verdict?: { claims: Array<{ text: string }>; summary: string; caveats?: string[] } }>).find(
    (r) => r.name === rule,
  );
  if (found?.verdict === undefined) throw new Error(`the fake provider's script has no verdict for ${rule}`);
  return found.verdict;
}

/** verdict.get from the API itself, as the extension calls it. */
async function jobFromApi(analysisId: string): Promise<VerdictJob> {
  const input = encodeURIComponent(JSON.stringify({ analysisId }));
  const res = await fetch(`${api.url}/trpc/verdict.get?input=${input}`, { headers: { "x-openerrata-extension-version": "0.4.0" } });
  const body = (await res.json()) as { result: { data: VerdictJob } };
  return body.result.data;
}

/** Per post on the page (outermost post containers): how many Fact-check buttons it holds; and all buttons. */
async function buttonCounts(page: Page, site: Site): Promise<{ perPost: number[]; total: number }> {
  return page.evaluate(
    ([selector, isThreads]) => {
      const all = Array.from(document.querySelectorAll(selector));
      const outer = all.filter((p) => !all.some((q) => q !== p && q.contains(p)));
      const posts = isThreads ? outer.filter((p) => p.querySelector('a[href^="/@"]') !== null) : outer;
      return { perPost: posts.map((p) => p.querySelectorAll("errata-fact-check").length), total: document.querySelectorAll("errata-fact-check").length };
    },
    [site === "bluesky" ? BLUESKY_POSTS : THREADS_POSTS, site === "threads"] as const,
  );
}

/** Waits until every post holds exactly one button (and there are n posts). */
async function expectOneButtonEach(page: Page, site: Site, n: number): Promise<void> {
  const counts = await until(`${n} posts with one button each`, async () => {
    const c = await buttonCounts(page, site);
    return c.perPost.length === n && c.perPost.every((x) => x === 1) && c.total === n ? c : null;
  }, 15_000);
  expect(counts.perPost).toEqual(new Array(n).fill(1));
}

/**
 * Infinite scroll as the sites do it: the page is scrolled to its end with
 * the wheel, and new posts (copies of the last ones under fresh ids, none
 * of our elements in them) are appended; some posts are re-rendered
 * (replaced by fresh copies of themselves).
 */
async function scrollLoadAndRerender(page: Page, site: Site, round: number): Promise<void> {
  for (let i = 0; i < 6; i += 1) await page.mouse.wheel(0, 1_500);
  await page.evaluate(
    ([isThreads, r]) => {
      const fresh = (el: Element): Element => {
        const copy = el.cloneNode(true) as Element;
        copy.querySelectorAll("errata-fact-check, errata-verdict").forEach((e) => e.remove());
        copy.removeAttribute("data-errata-post");
        copy.querySelectorAll("[data-errata-post]").forEach((e) => e.removeAttribute("data-errata-post"));
        return copy;
      };
      const list = isThreads ? document.querySelector(".x-feed") : document.querySelector('[data-testid="feed-items"]');
      if (list === null) throw new Error("no feed list");
      const cells = Array.from(list.children).slice(-3);
      cells.forEach((cell, i) => {
        const copy = fresh(cell);
        const id = isThreads ? `Dscroll${r}${i}abc` : `${"2345"[r % 4]}${"abc"[i]}scrollaaaaa`.slice(0, 13);
        copy.querySelectorAll("a[href*='/post/']").forEach((a) => a.setAttribute("href", (a.getAttribute("href") ?? "").replace(/\/post\/[^/]+/, `/post/${id}`)));
        list.append(copy);
      });
      // A re-render of the second post: React replaces its element.
      const second = list.children[1];
      if (second !== undefined) second.replaceWith(fresh(second));
    },
    [site === "threads", round] as const,
  );
}

function post(page: Page, site: Site, index: number): Locator {
  const selector = site === "bluesky" ? BLUESKY_POSTS : `${THREADS_POSTS}:not(${THREADS_POSTS} ${THREADS_POSTS})`;
  return page.locator(selector).nth(index);
}

async function cardState(card: Locator): Promise<string> {
  return (await card.getAttribute("data-state")) ?? "";
}

/** Sets the site's own theme marker (its theme switch) and waits for the card to follow. */
async function switchTheme(page: Page, site: Site, theme: "light" | "dark", card: Locator): Promise<void> {
  await page.evaluate((cls) => {
    document.documentElement.className = cls;
  }, SITE_THEMES[site][theme]);
  await until(`the card in the ${theme} theme`, async () => (await card.getAttribute("data-theme")) === theme, 10_000);
}

/** Clicks the post's Fact-check button: the card must be there at once, and then follow the analysis to its end. */
async function factCheck(page: Page, site: Site, index: number, name: string): Promise<{ card: Locator; states: string[]; searches: boolean }> {
  const target = post(page, site, index);
  await target.scrollIntoViewIfNeeded();
  const clicked = Date.now();
  await target.locator("errata-fact-check button").click();
  const card = target.locator("errata-verdict");
  await card.waitFor({ state: "visible", timeout: 5_000 });
  timings[`${name}ClickToCardMs`] = Date.now() - clicked;
  const states: string[] = [await cardState(card)];
  let searches = false;
  await until(`${name}: the verdict`, async () => {
    const s = await cardState(card);
    if (states.at(-1) !== s) states.push(s);
    if (s === "running" && !searches && (await card.locator(".ev-query").count()) > 0) {
      searches = true; // a search and its results shown while the analysis runs
      await page.screenshot({ path: artifact(`chromium-${name}-progress.png`) });
    }
    return ["complete", "failed", "error"].includes(s);
  }, 90_000, 100);
  timings[`${name}ClickToVerdictMs`] = Date.now() - clicked;
  return { card, states, searches };
}

/** The card shows exactly the job: pill, confidence, band, summary, claims with their assessments, caveats, chips. */
async function expectCardShows(card: Locator, job: VerdictJob): Promise<void> {
  const verdict = job.verdict;
  if (verdict === null) throw new Error("the job has no verdict");
  expect(await cardState(card)).toBe("complete");
  expect(await card.locator(".ev-pill").first().textContent()).toBe(LABEL_NAMES[verdict.label]);
  expect(await card.locator(".ev-pill").first().getAttribute("class")).toContain(`ev-label-${verdict.label}`);
  expect(await card.locator(".ev-confidence").textContent()).toBe(`${verdict.confidence}% confidence`);
  expect(await card.locator(".ev-band").textContent()).toBe(`Truth ${verdict.truthPercent}% · ${verdict.band}`);
  if (verdict.summary.length <= 1_200) expect(await card.locator(".ev-summary").textContent()).toBe(verdict.summary);
  const details = card.locator("details.ev-claims");
  expect(await details.locator("summary").textContent()).toBe(`Claims (${job.claims.length})`);
  expect(await details.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
  await details.locator("summary").click();
  expect(await details.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
  expect(await details.locator(".ev-claim .ev-claim-text").allTextContents()).toEqual(job.claims.map((c) => `“${c.text}”`));
  for (const [i, c] of job.claims.entries()) {
    const assessment = (await details.locator(".ev-claim .ev-assessment").nth(i).textContent()) ?? "";
    if (c.triage !== null && !c.triage.researched) expect(assessment).toContain(`Not researched: ${c.triage.reason}`);
    else if (c.verdict !== null) expect(assessment).toContain(`${LABEL_NAMES[c.verdict.label]} ${c.verdict.confidence}%`);
  }
  const caveats = verdict.caveats.filter((x) => x.trim() !== "");
  if (caveats.length > 0) expect(await card.locator(".ev-caveats").textContent()).toBe(`Caveats: ${caveats.join(" ")}`);
  const distinct = [...new Map(verdict.sources.map((s) => [s.url, s])).values()];
  expect(await card.locator(".ev-chip .ev-tier").allTextContents()).toEqual(distinct.map((s) => `T${s.tier}`));
}

beforeAll(async () => {
  api = await startApi();
  ext = await ChromiumExtension.launch("errata-e2e-social-");
  await ext.setSettings({ apiBaseUrl: api.url, apiKey: api.apiKey, openaiApiKey: IS_REAL ? SCRIPT.apiKey : "", autoInvestigate: false, showHighlights: true });
});

afterAll(async () => {
  writeFileSync(artifact(`${IS_REAL ? "real-" : ""}chromium-social-timings.json`), `${JSON.stringify(timings, null, 2)}\n`);
  await ext?.close();
  await api?.close();
});

async function open(served: ServedPage): Promise<Page> {
  const { page } = await ext.openPost(served);
  return page;
}

const prefix = IS_REAL ? "real-" : "";

describe(IS_REAL ? "Bluesky and Threads in Chromium, against a real Errata stack" : "Bluesky and Threads in Chromium, against the contract stub", () => {
  it("Bluesky feed: one Fact-check button per post, also after infinite scroll and re-renders", async () => {
    const page = await open(PAGES.blueskyFeed);
    await expectOneButtonEach(page, "bluesky", 12);
    for (let round = 0; round < 3; round += 1) {
      await scrollLoadAndRerender(page, "bluesky", round);
      await expectOneButtonEach(page, "bluesky", 12 + 3 * (round + 1));
    }
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: artifact(`${prefix}chromium-bluesky-buttons.png`) });
    // What a scan costs on a long feed (237 posts): recorded, not asserted.
    await page.evaluate(() => {
      performance.clearMeasures("errata:feed-scan");
      const list = document.querySelector('[data-testid="feed-items"]');
      const cells = Array.from(list?.children ?? []).slice(0, 12);
      for (let round = 0; round < 18; round += 1) {
        for (const [i, cell] of cells.entries()) {
          const copy = cell.cloneNode(true) as Element;
          copy.querySelectorAll("errata-fact-check, errata-verdict").forEach((e) => e.remove());
          copy.querySelectorAll("[data-errata-post]").forEach((e) => e.removeAttribute("data-errata-post"));
          const rkey = `${"234567abcdefghij"[round % 16] ?? "2"}${"abcdefghijkl"[i] ?? "a"}longfeedaaaa`.slice(0, 13);
          copy.querySelectorAll("a[href*='/post/']").forEach((a) => a.setAttribute("href", (a.getAttribute("href") ?? "").replace(/\/post\/[^/]+/, `/post/${rkey}`)));
          list?.append(copy);
        }
      }
    });
    const LONG = 21 + 18 * 12; // the feed as scrolled so far, and 216 more posts
    await expectOneButtonEach(page, "bluesky", LONG);
    const scansOf = (n: number) =>
      page.evaluate(
        (count) =>
          performance
            .getEntriesByName("errata:feed-scan")
            .map((e) => ({ ms: e.duration, posts: ((e as PerformanceMeasure).detail as { posts: number }).posts }))
            .filter((e) => e.posts === count),
        n,
      );
    const first = await until("the scan that gave the new posts their buttons", async () => ((await scansOf(LONG)).length > 0 ? scansOf(LONG) : null));
    // Ten more scans with nothing to add (the site's class changes each time: its theme observer asks for a scan).
    for (let i = 0; i < 10; i += 1) {
      const before = (await scansOf(LONG)).length;
      await page.evaluate(() => document.documentElement.classList.toggle("errata-idle-scan"));
      await until("an idle scan", async () => (await scansOf(LONG)).length > before);
    }
    const idle = (await scansOf(LONG)).slice(first.length).map((e) => e.ms).sort((a, b) => a - b);
    timings[`${prefix}feedScanPosts`] = LONG;
    timings[`${prefix}feedScanFirstMs`] = Math.round((first[0]?.ms ?? -1) * 10) / 10;
    timings[`${prefix}feedScanIdleMedianMs`] = Math.round((idle[Math.floor(idle.length / 2)] ?? -1) * 10) / 10;
    await expectOneButtonEach(page, "bluesky", LONG);
    await page.close();
  });

  it("Bluesky: a click shows the progress card at once, then the searches, then the verdict; light and dark", async () => {
    const page = await open(PAGES.blueskyFeed);
    await expectOneButtonEach(page, "bluesky", 12);
    const { card, states, searches } = await factCheck(page, "bluesky", 0, `${prefix}bluesky`);
    expect(["starting", "pending", "running"]).toContain(states[0]); // the card was there before the verdict
    expect(await card.evaluate((el) => el.parentElement?.getAttribute("data-testid"))).toBe("feedItem-by-marenholt.bsky.social");
    expect(await card.getAttribute("data-analysis-id")).toMatch(/^[0-9a-f-]{36}$/);
    if (IS_REAL) {
      const job = await latestJob(card);
      await expectCardShows(card, job);
      const scripted = scriptedVerdict("bluesky-wall");
      expect(job.verdict?.summary).toBe(scripted.summary);
      expect(job.claims.map((c) => c.text)).toEqual(scripted.claims.map((c) => c.text));
      expect(fakeLog().filter((e) => e.kind === ("extract" as string) && e.rule === "bluesky-wall")).toHaveLength(1);
    } else {
      // Progress as it happened: queued, claims, the searches with their results, then the verdict.
      expect(states.slice(-2)).toEqual(["running", "complete"]);
      expect(searches).toBe(true);
      const stub = api.stub;
      if (stub === null) throw new Error("stub expected");
      expect(stub.calls("registerObservedVersion").at(-1)?.input).toMatchObject({
        platform: "BLUESKY",
        externalId: "at://did:plc:ue4wzb3ysxq6g74ouj7ic7ha/app.bsky.feed.post/b4h4tghc6ol7k",
        metadata: { handle: "marenholt.bsky.social", displayName: "Maren Holt", likeCount: 1087 },
      });
      expect(stub.calls("verdict.request")).toHaveLength(1);
      expect(stub.calls("verdict.get").length).toBe(6);
      expect(stub.violations).toEqual([]);
      const { wallJob } = await import("../verdict-jobs");
      await expectCardShows(card, wallJob(5));
      expect(await card.locator(".ev-claim .ev-claim-text").first().textContent()).toBe(`“${WALL_CLAIMS[0]}”`);
    }
    await card.scrollIntoViewIfNeeded();
    expect(await card.getAttribute("data-theme")).toBe("light");
    await card.screenshot({ path: artifact(`${prefix}chromium-bluesky-card-light.png`) });
    await page.screenshot({ path: artifact(`${prefix}chromium-bluesky-page-light.png`) });
    await switchTheme(page, "bluesky", "dark", card);
    expect(await card.locator("section").evaluate((s) => getComputedStyle(s).backgroundColor)).toBe("rgb(22, 24, 28)");
    await card.screenshot({ path: artifact(`${prefix}chromium-bluesky-card-dark.png`) });
    await page.screenshot({ path: artifact(`${prefix}chromium-bluesky-page-dark.png`) });
    // Infinite scroll and a re-render of the checked post: still one button each, and the card stays under its post.
    await scrollLoadAndRerender(page, "bluesky", 7);
    await expectOneButtonEach(page, "bluesky", 15);
    await page.evaluate(() => {
      const first = document.querySelector('[data-testid="feedItem-by-marenholt.bsky.social"]');
      const copy = first?.cloneNode(true) as Element;
      copy.querySelectorAll("errata-fact-check, errata-verdict").forEach((e) => e.remove());
      first?.replaceWith(copy);
    });
    await until("the card back under the re-rendered post", async () =>
      (await post(page, "bluesky", 0).locator("errata-verdict").count()) === 1 ? true : null,
    );
    await expectOneButtonEach(page, "bluesky", 15);
    await page.close();
  });

  it("Bluesky thread page (dark): the focal post's card in the dark theme", async () => {
    const page = await open(PAGES.blueskyThread);
    await expectOneButtonEach(page, "bluesky", 6);
    const { card } = await factCheck(page, "bluesky", 1, `${prefix}bluesky-thread`);
    expect(await cardState(card)).toBe("complete");
    expect(await card.getAttribute("data-theme")).toBe("dark");
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: artifact(`${prefix}chromium-bluesky-thread-card-dark.png`) });
    await page.close();
  });

  it("Threads feed (dark) and post page (light): one button per post, the card in the site's theme", async () => {
    const page = await open(PAGES.threadsFeed);
    await expectOneButtonEach(page, "threads", 9);
    await scrollLoadAndRerender(page, "threads", 0);
    await expectOneButtonEach(page, "threads", 12);
    await page.evaluate(() => window.scrollTo(0, 0));
    const { card } = await factCheck(page, "threads", 0, `${prefix}threads`);
    if (IS_REAL) {
      const job = await latestJob(card);
      await expectCardShows(card, job);
      expect(job.verdict?.summary).toBe(scriptedVerdict("threads-lightning").summary);
    } else {
      const { lightningJob } = await import("../verdict-jobs");
      await expectCardShows(card, lightningJob(5));
      expect(api.stub?.calls("registerObservedVersion").at(-1)?.input).toMatchObject({
        platform: "THREADS",
        externalId: "DM7t8CdtApy",
        metadata: { username: "kofi.mensah", postedAt: "2026-11-25T14:12:00.000Z", likeCount: 1204 },
      });
    }
    expect(await card.getAttribute("data-theme")).toBe("dark");
    await card.scrollIntoViewIfNeeded();
    await card.screenshot({ path: artifact(`${prefix}chromium-threads-card-dark.png`) });
    await page.screenshot({ path: artifact(`${prefix}chromium-threads-page-dark.png`) });
    await switchTheme(page, "threads", "light", card);
    await card.screenshot({ path: artifact(`${prefix}chromium-threads-card-light.png`) });
    if (!IS_REAL) {
      // The stub fails the pineapple post's analysis: the card says so.
      await switchTheme(page, "threads", "dark", card);
      const failed = await factCheck(page, "threads", 6, "threads-failed");
      expect(await cardState(failed.card)).toBe("failed");
      expect(await failed.card.locator(".ev-error").textContent()).toBe("The fact-check failed: the provider refused the request");
    }
    await page.close();

    const postPage = await open(PAGES.threadsPost);
    await expectOneButtonEach(postPage, "threads", 5);
    const again = await factCheck(postPage, "threads", 0, `${prefix}threads-post`);
    expect(await cardState(again.card)).toBe("complete"); // the same post: the same analysis
    expect(await again.card.getAttribute("data-theme")).toBe("light");
    await postPage.screenshot({ path: artifact(`${prefix}chromium-threads-post-light.png`) });
    await postPage.close();
  });

  it("the opinion post: hostile strings from the API stay text (stub); the Opinion verdict (real stack)", async () => {
    const page = await open(PAGES.blueskyFeed);
    await expectOneButtonEach(page, "bluesky", 12);
    const { card } = await factCheck(page, "bluesky", 7, `${prefix}bluesky-opinion`);
    if (IS_REAL) {
      const job = await latestJob(card);
      await expectCardShows(card, job);
      expect(job.verdict?.label).toBe("Opinion");
      await card.screenshot({ path: artifact("real-chromium-bluesky-card-opinion.png") });
    } else {
      expect(await cardState(card)).toBe("complete");
      expect(await card.locator("img, script, iframe").count()).toBe(0);
      expect(await card.locator('a[href^="javascript"]').count()).toBe(0);
      expect(await card.locator(".ev-summary").textContent()).toContain(`${HOSTILE} summary`);
      expect(await page.title()).toBe("Home — Bluesky");
      await card.screenshot({ path: artifact("chromium-bluesky-card-hostile.png") });
    }
    await page.close();
  });

  it("the popup on another platform: a long post URL on one line; Verdict for this post", async () => {
    const lw = await ext.openPost(PAGES.lesswrong);
    const lwPopup = await ext.openPopup(lw.tabId);
    await popupState(lwPopup, ["not-investigated", "investigating", "incorrect-claims", "clean", "failed"], 60_000);
    const url = lwPopup.locator(".url-text");
    expect(await url.getAttribute("title")).toBe(PAGES.lesswrong.url);
    expect(await url.textContent()).toBe("lesswrong.com/posts/…ia-gradient-hacking");
    const line = await lwPopup.locator(".url").evaluate((el) => ({ height: el.getBoundingClientRect().height, lineHeight: parseFloat(getComputedStyle(el).lineHeight) || 17 }));
    expect(line.height).toBeLessThan(line.lineHeight * 1.5); // one line
    await lwPopup.screenshot({ path: artifact(`${prefix}chromium-popup-long-url.png`), fullPage: true });
    await lwPopup.close();
    await lw.page.close();

    const { page, tabId } = await ext.openPost(PAGES.x);
    const popup = await ext.openPopup(tabId);
    await popupState(popup, ["not-investigated", "investigating", "incorrect-claims", "clean", "failed"], 60_000);
    const section = popup.locator("#verdict");
    expect(await section.getAttribute("data-verdict")).toBe("none");
    await popup.locator("#verdict-for-post").click();
    // Progress at once: the section leaves "none" before any verdict.
    expect(["requesting", "starting", "pending", "running", "complete"]).toContain(
      await until("the popup's verdict progress", async () => {
        const v = (await section.getAttribute("data-verdict")) ?? "none";
        return v === "none" ? null : v;
      }, 10_000, 50),
    );
    await until("the popup's verdict", async () => ["complete", "failed", "error"].includes((await section.getAttribute("data-verdict")) ?? ""), 90_000, 100);
    await popup.screenshot({ path: artifact(`${prefix}chromium-popup-verdict.png`), fullPage: true });
    expect(await section.getAttribute("data-verdict")).toBe("complete");
    if (IS_REAL) {
      const id = await until("the analysis id", async () =>
        (await ext.worker()).evaluate(async (t) => {
          const state = (await chrome.storage.session.get(`tab:${t}`))[`tab:${t}`] as { verdict?: { analysisId?: string } } | undefined;
          return state?.verdict?.analysisId ?? null;
        }, tabId),
      );
      const job = await jobFromApi(id);
      expect(await section.locator(".ev-pill").first().textContent()).toBe(LABEL_NAMES[job.verdict?.label ?? "Unverifiable"]);
      expect(await section.locator(".ev-summary").textContent()).toBe(job.verdict?.summary);
    } else {
      expect(await section.locator(".ev-pill").first().textContent()).toBe("False");
      expect(await section.locator(".ev-confidence").textContent()).toBe("82% confidence");
      expect(api.stub?.calls("verdict.request").at(-1)?.input).toMatchObject({ platform: "X", externalId: "1790000000000000202" });
    }
    await popup.close();
    await page.close();
  });
});

/** The job the card followed, read from the API. */
async function latestJob(card: Locator): Promise<VerdictJob> {
  const id = await card.getAttribute("data-analysis-id");
  if (id === null) throw new Error("the card names no analysis");
  return jobFromApi(id);
}
