// Fact-check buttons and verdict cards on the saved Bluesky and Threads
// pages: exactly one button per post after re-renders and infinite scroll,
// the card shown at once on a click, following the analysis every second
// (manual clock) to the verdict, hostile strings kept as text, the site's
// theme, and the card surviving its post being re-rendered.

import { describe, expect, it } from "vitest";
import { blueskyAdapter } from "../src/content/adapters/bluesky";
import type { FeedAdapter } from "../src/content/adapters/feed-model";
import { threadsAdapter } from "../src/content/adapters/threads";
import { FeedSession, POST_MARK, type FeedTransport, type StartAnswer } from "../src/content/feed-session";
import { BUTTON_TAG, CARD_TAG } from "../src/content/verdict/card";
import type { VerdictJob } from "../src/lib/api-types";
import type { PlatformContent } from "../src/lib/platform";
import type { Timers } from "../src/lib/timers";
import type { VerdictRead } from "../src/lib/verdict-poller";
import { domFor } from "./dom";
import { readLocalFixture } from "./fixtures";
import { HOSTILE, WALL_CLAIMS, failedJob, hostileJob, wallJob } from "./verdict-jobs";

const BSKY_FEED = "https://bsky.app/";
const BSKY_THREAD = "https://bsky.app/profile/marenholt.bsky.social/post/b4h4tghc6ol7k";
const THREADS_FEED = "https://www.threads.com/";

/** Manual timers: due ones run when the clock is advanced. */
class Clock implements Timers {
  now = 1_000_000;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  set(fn: () => void, ms: number): unknown {
    this.seq += 1;
    this.pending.set(this.seq, { at: this.now + ms, fn });
    return this.seq;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  get scheduled(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.now).sort((a, b) => a - b);
  }
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      const next = [...this.pending.entries()].filter(([, p]) => p.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (next === undefined) break;
      this.pending.delete(next[0]);
      this.now = next[1].at;
      next[1].fn();
      await settle();
    }
    this.now = until;
    await settle();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await new Promise((r) => setImmediate(r));
}

/** A transport that answers start with an id and each read with the next job (the last repeats). */
class FakeTransport implements FeedTransport {
  readonly starts: PlatformContent[] = [];
  readonly reads: string[] = [];
  constructor(
    private readonly jobs: VerdictJob[],
    private readonly startAnswer: StartAnswer = { ok: true, analysisId: "0b9d4f0e-6a43-5c1e-9d1a-3f7a2b6c8e11" },
  ) {}
  async start(content: PlatformContent): Promise<StartAnswer> {
    this.starts.push(content);
    return this.startAnswer;
  }
  async read(analysisId: string): Promise<VerdictRead> {
    this.reads.push(analysisId);
    const job = this.jobs.length > 1 ? this.jobs.shift() : this.jobs[0];
    if (job === undefined) return { ok: false, error: "no job", permanent: true };
    return { ok: true, job };
  }
}

function setup(adapter: FeedAdapter, fixture: string, url: string, transport: FeedTransport = new FakeTransport([wallJob(5)])) {
  const document = domFor(readLocalFixture(fixture), url);
  const clock = new Clock();
  const queued: Array<() => void> = [];
  const session = new FeedSession(adapter, document, { transport, timers: clock, now: () => clock.now, schedule: (fn) => queued.push(fn) });
  /** Lets the MutationObserver deliver, then runs the scans it asked for; returns how many ran. */
  const flush = async (): Promise<number> => {
    await settle();
    let ran = 0;
    while (queued.length > 0) {
      queued.shift()?.();
      ran += 1;
      await settle();
    }
    return ran;
  };
  return { document, session, clock, flush };
}

/** Buttons per post, and all buttons on the page. */
function buttonCounts(adapter: FeedAdapter, document: Document): { perPost: number[]; total: number } {
  return {
    perPost: adapter.findPosts(document).map((p) => p.querySelectorAll(BUTTON_TAG).length),
    total: document.querySelectorAll(BUTTON_TAG).length,
  };
}

function expectOneButtonEach(adapter: FeedAdapter, document: Document, posts: number): void {
  const { perPost, total } = buttonCounts(adapter, document);
  expect(perPost).toEqual(new Array(posts).fill(1));
  expect(total).toBe(posts);
  for (const host of Array.from(document.querySelectorAll(BUTTON_TAG))) expect(host.shadowRoot?.querySelector("button")?.textContent).toBe("Fact-check");
}

/** New posts as a feed loads them: copies of the last n cells with fresh record keys (no element of ours in them). */
function loadMoreBluesky(document: Document, n: number, round: number): void {
  const list = document.querySelector('[data-testid="feed-items"]');
  const cells = Array.from(list?.children ?? []).slice(-n);
  cells.forEach((cell, i) => {
    const copy = cell.cloneNode(true) as Element;
    copy.querySelectorAll(`${BUTTON_TAG}, ${CARD_TAG}`).forEach((e) => e.remove());
    copy.querySelectorAll("[data-errata-post]").forEach((e) => e.removeAttribute(POST_MARK));
    const rkey = `${"2345"[round % 4]}${"abcdefghijkl"[i]}aaaaaaaaaaa`;
    copy.querySelectorAll("a[href*='/post/']").forEach((a) => a.setAttribute("href", (a.getAttribute("href") ?? "").replace(/\/post\/[^/]+/, `/post/${rkey}`)));
    list?.append(copy);
  });
}

/** React re-creating a post's element from its virtual DOM: the same markup, none of our elements. */
function rerender(post: Element): Element {
  const fresh = post.cloneNode(true) as Element;
  fresh.querySelectorAll(`${BUTTON_TAG}, ${CARD_TAG}`).forEach((e) => e.remove());
  fresh.removeAttribute(POST_MARK);
  post.replaceWith(fresh);
  return fresh;
}

function cardOf(post: Element): { host: HTMLElement; root: ShadowRoot; text: string } {
  const host = post.querySelector<HTMLElement>(CARD_TAG);
  const root = host?.shadowRoot;
  if (host === null || root === null || root === undefined) throw new Error("no card");
  return { host, root, text: (root.textContent ?? "").replace(/\s+/g, " ") };
}

describe("Fact-check buttons", () => {
  it("Bluesky feed: one button per post, in its action row; scans are idempotent", async () => {
    const { document, session, flush } = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED);
    session.start();
    expectOneButtonEach(blueskyAdapter, document, 12);
    for (const post of blueskyAdapter.findPosts(document)) {
      expect(blueskyAdapter.actionRow(post)?.querySelector(BUTTON_TAG)).not.toBeNull();
    }
    session.scan();
    session.scan();
    expectOneButtonEach(blueskyAdapter, document, 12);
    // Our own insertions never ask for another scan.
    expect(await flush()).toBe(0);
    expect(blueskyAdapter.findPosts(document).map((p) => p.getAttribute(POST_MARK))[0]).toBe(
      "at://did:plc:ue4wzb3ysxq6g74ouj7ic7ha/app.bsky.feed.post/b4h4tghc6ol7k",
    );
  });

  it("Bluesky feed: infinite scroll and re-renders, seen through the MutationObserver, never leave a post with none or two", async () => {
    const { document, session, flush } = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED);
    session.start();
    for (let round = 0; round < 3; round += 1) {
      loadMoreBluesky(document, 4, round);
      expect(await flush()).toBe(1); // one debounced scan for the batch
      expectOneButtonEach(blueskyAdapter, document, 12 + 4 * (round + 1));
    }
    // Re-renders: fresh elements (no button), and a re-serialized row (copies of our element without their shadow root).
    const posts = blueskyAdapter.findPosts(document);
    rerender(posts[0] as Element);
    rerender(posts[5] as Element);
    const row = blueskyAdapter.actionRow(posts[3] as Element);
    if (row === null) throw new Error("no row");
    row.innerHTML = row.innerHTML; // eslint-disable-line no-self-assign
    row.append(document.createElement(BUTTON_TAG)); // and a stray second one
    await flush();
    expectOneButtonEach(blueskyAdapter, document, 24);
  });

  it("Bluesky thread page and Threads pages: one button per post", () => {
    for (const [adapter, fixture, url, posts] of [
      [blueskyAdapter, "social/bluesky-thread.html", BSKY_THREAD, 6],
      [threadsAdapter, "social/threads-feed.html", THREADS_FEED, 9],
      [threadsAdapter, "social/threads-post.html", "https://www.threads.com/@kofi.mensah/post/DM7t8CdtApy", 5],
    ] as const) {
      const { document, session } = setup(adapter, fixture, url);
      session.start();
      session.scan();
      expectOneButtonEach(adapter, document, posts);
      // The quoted post inside a Threads post gets no button of its own.
      expect(document.querySelectorAll(`[data-pressable-container] [data-pressable-container] ${BUTTON_TAG}`)).toHaveLength(0);
    }
  });

  it("Threads: re-rendered and newly loaded posts get exactly one button", async () => {
    const { document, session, flush } = setup(threadsAdapter, "social/threads-feed.html", THREADS_FEED);
    session.start();
    const feed = document.querySelector(".x-feed");
    const items = Array.from(feed?.children ?? []);
    items.slice(0, 3).forEach((item, i) => {
      const copy = item.cloneNode(true) as Element;
      copy.querySelectorAll(BUTTON_TAG).forEach((e) => e.remove());
      copy.querySelectorAll("a[href*='/post/']").forEach((a) => a.setAttribute("href", (a.getAttribute("href") ?? "").replace(/\/post\/[^/]+/, `/post/Dnew${i}xxxxxx`)));
      feed?.append(copy);
    });
    rerender(threadsAdapter.findPosts(document)[1] as Element);
    await flush();
    expectOneButtonEach(threadsAdapter, document, 12);
  });
});

describe("verdict card", () => {
  it("shows progress at once on a click, then each search and its top results, then the verdict", async () => {
    const transport = new FakeTransport([wallJob(0), wallJob(2), wallJob(3), wallJob(4), wallJob(5)]);
    const { document, session, clock } = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED, transport);
    session.start();
    const post = blueskyAdapter.findPosts(document)[0] as Element;
    const button = post.querySelector(BUTTON_TAG)?.shadowRoot?.querySelector("button");
    button?.click();
    // At once: the card, before the API answered anything.
    let card = cardOf(post);
    expect(card.host.dataset["state"]).toBe("starting");
    expect(card.text).toContain("Sending the post to Errata…");
    await settle();
    expect(transport.starts).toHaveLength(1);
    expect(transport.starts[0]?.externalId).toBe("at://did:plc:ue4wzb3ysxq6g74ouj7ic7ha/app.bsky.feed.post/b4h4tghc6ol7k");
    expect(clock.scheduled).toEqual([0]); // the first read at once
    await clock.advance(0);
    expect(cardOf(post).host.dataset["state"]).toBe("pending");
    expect(cardOf(post).text).toContain("Queued…");
    expect(button?.getAttribute("aria-busy")).toBe("true");

    await clock.advance(1_000);
    card = cardOf(post);
    expect(card.host.dataset["state"]).toBe("running");
    expect(card.text).toContain("Found 2 claims; sorting them…");
    expect(card.text).toContain(`“${WALL_CLAIMS[0]}”`);
    expect(card.text).toContain("Factual claim · researching");

    await clock.advance(1_000);
    card = cardOf(post);
    expect(card.text).toContain("Searching: 2 queries so far…");
    expect(card.text).toContain("Searched “Great Wall of China visible from the Moon naked eye”");
    expect([...card.root.querySelectorAll(".ev-result-title")].map((a) => a.textContent)).toEqual([
      "Great Wall of China - NASA",
      "Is China's Great Wall Visible from Space?",
      "Great Wall of China - Wikipedia",
    ]); // the top three
    expect(card.root.querySelector(".ev-result a, a.ev-result-title")?.getAttribute("href")).toBe("https://www.nasa.gov/image-article/great-wall-of-china/");
    expect(card.text).toContain("Searched “Great Wall construction dynasties before Ming” (search failed)");

    await clock.advance(1_000);
    expect(cardOf(post).text).toContain("Weighing the evidence…");

    await clock.advance(1_000);
    card = cardOf(post);
    expect(card.host.dataset["state"]).toBe("complete");
    expect(card.root.querySelector(".ev-pill")?.textContent).toBe("False");
    expect(card.root.querySelector(".ev-pill")?.className).toContain("ev-label-False");
    expect(card.root.querySelector(".ev-confidence")?.textContent).toBe("82% confidence");
    expect(card.root.querySelector(".ev-band")?.textContent).toBe("Truth 17% · MOSTLY-FALSE");
    expect(card.root.querySelector(".ev-summary")?.textContent).toBe(wallJob(5).verdict?.summary);
    const claims = card.root.querySelector<HTMLDetailsElement>("details.ev-claims");
    expect(claims?.open).toBe(false);
    expect(claims?.querySelector("summary")?.textContent).toBe("Claims (2)");
    expect(
      [...(claims?.querySelectorAll(".ev-claim") ?? [])].map((li) => [
        li.querySelector(".ev-claim-text")?.textContent,
        (li.querySelector(".ev-assessment")?.textContent ?? "").replace(/\s+/g, " ").trim(),
      ]),
    ).toEqual([
      [`“${WALL_CLAIMS[0]}”`, "False 88% NASA and astronauts say the wall cannot be seen from the Moon with the naked eye."],
      [`“${WALL_CLAIMS[1]}”`, "Unverifiable 40% The search failed; earlier dynasties built walls too, but no source was read."],
    ]);
    expect(card.root.querySelector(".ev-caveats")?.textContent).toBe(
      "Caveats: Only one of the two claims could be researched. Search results were in English only.",
    );
    const chips = [...card.root.querySelectorAll<HTMLAnchorElement>("a.ev-chip")];
    expect(chips.map((c) => [c.querySelector(".ev-chip-domain")?.textContent, c.querySelector(".ev-tier")?.textContent, c.getAttribute("href")])).toEqual([
      ["nasa.gov", "T1", "https://www.nasa.gov/image-article/great-wall-of-china/"],
      ["wikipedia.org", "T2", "https://en.wikipedia.org/wiki/Great_Wall_of_China"],
      ["someblog.example", "T4", "https://someblog.example/wall"],
    ]);
    expect(chips[0]?.querySelector(".ev-tier")?.getAttribute("title")).toBe("Tier 1: official or primary");
    expect(chips.every((c) => c.rel === "noopener noreferrer nofollow" && c.target === "_blank")).toBe(true);
    expect(clock.scheduled).toEqual([]); // settled: no more reads
    expect(transport.reads).toHaveLength(5);
    expect(button?.getAttribute("aria-busy")).toBe("false");

    // Close, click again: the same card, no new request.
    card.root.querySelector<HTMLButtonElement>(".ev-close")?.click();
    expect(card.host.hidden).toBe(true);
    button?.click();
    await settle();
    expect(card.host.hidden).toBe(false);
    expect(transport.starts).toHaveLength(1);
  });

  it("keeps its card when the post is re-rendered or scrolled away and back, and never moves between two copies", async () => {
    const transport = new FakeTransport([wallJob(5)]);
    const { document, session, clock, flush } = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED, transport);
    session.start();
    const post = blueskyAdapter.findPosts(document)[0] as Element;
    await session.check(post);
    await clock.advance(0);
    const card = cardOf(post).host;
    const fresh = rerender(post);
    await flush();
    expect(fresh.querySelector(CARD_TAG)).toBe(card);
    expect(cardOf(fresh).host.dataset["state"]).toBe("complete");
    // Scrolled away (removed) and back (a new element).
    const cell = fresh.parentElement;
    fresh.remove();
    await flush();
    const back = rerender(fresh);
    cell?.append(back);
    await flush();
    expect(back.querySelector(CARD_TAG)).toBe(card);
    // The same post twice on the page: the card stays put and scanning settles.
    const twin = back.cloneNode(true) as Element;
    twin.querySelectorAll(`${BUTTON_TAG}, ${CARD_TAG}`).forEach((e) => e.remove());
    document.querySelector('[data-testid="feed-items"]')?.append(twin);
    await flush();
    expect(back.querySelector(CARD_TAG)).toBe(card);
    expect(twin.querySelector(CARD_TAG)).toBeNull();
    expect(await flush()).toBe(0);
    expectOneButtonEach(blueskyAdapter, document, 13);
    expect(transport.starts).toHaveLength(1);
  });

  it("every string of the API stays text", async () => {
    const { document, session, clock } = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED, new FakeTransport([hostileJob()]));
    session.start();
    const post = blueskyAdapter.findPosts(document)[0] as Element;
    await session.check(post);
    await clock.advance(0);
    const { root, text } = cardOf(post);
    expect(root.querySelectorAll("img, script, iframe, [onerror]")).toHaveLength(0);
    expect(root.querySelectorAll('a[href^="javascript"]')).toHaveLength(0);
    expect(text).toContain(`${HOSTILE} summary`);
    expect(text).toContain(`${HOSTILE} caveat`);
    expect(text).toContain(`${HOSTILE} assessment`);
    expect(text).toContain(`Opinion Not researched: ${HOSTILE} reason`);
    expect(root.querySelector(".ev-summary")?.textContent?.length).toBeLessThanOrEqual(1_200);
    // A source without a safe URL is a chip without a link; one without a domain shows its URL's host.
    const chips = [...root.querySelectorAll(".ev-chip")];
    expect(chips.map((c) => [c.localName, c.querySelector(".ev-chip-domain")?.textContent])).toEqual([
      ["span", `${Array.from(HOSTILE).slice(0, 59).join("")}…`], // cut to 60 characters
      ["a", "data.example"],
    ]);
    expect(document.title).toBe("Home — Bluesky");
  });

  it("explains what went wrong, and Try again starts over", async () => {
    const transport = new FakeTransport([wallJob(5)], { ok: false, error: "the Errata server cannot be reached" });
    const { document, session } = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED, transport);
    session.start();
    const post = blueskyAdapter.findPosts(document)[0] as Element;
    await session.check(post);
    const { host, root, text } = cardOf(post);
    expect(host.dataset["state"]).toBe("error");
    expect(text).toContain("Could not fact-check this post: the Errata server cannot be reached.");
    root.querySelector<HTMLButtonElement>(".ev-retry")?.click();
    await settle();
    expect(transport.starts).toHaveLength(2);

    // A post whose identity the page does not show, and a post without text, are never sent.
    const anonymous = blueskyAdapter.findPosts(document).find((p) => blueskyAdapter.identify(p, document) === null) as Element;
    await session.check(anonymous);
    expect(cardOf(anonymous).text).toContain("Could not fact-check this post: the page does not show which post this is.");
    const imageOnly = blueskyAdapter.findPosts(document).find((p) => p.querySelector('[data-testid="postText"]') === null) as Element;
    await session.check(imageOnly);
    expect(cardOf(imageOnly).text).toContain("Could not fact-check this post: the post has no text to check.");
    expect(transport.starts).toHaveLength(2);
  });

  it("a failed analysis says so; polling gives up after repeated failures", async () => {
    const failing = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED, new FakeTransport([failedJob()]));
    failing.session.start();
    const post = blueskyAdapter.findPosts(failing.document)[0] as Element;
    await failing.session.check(post);
    await failing.clock.advance(0);
    expect(cardOf(post).host.dataset["state"]).toBe("failed");
    expect(cardOf(post).text).toContain("The fact-check failed: the provider refused the request");

    const flaky: FeedTransport = {
      start: async () => ({ ok: true, analysisId: "a" }),
      read: async () => ({ ok: false, error: "the Errata server cannot be reached", permanent: false }),
    };
    const lost = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED, flaky);
    lost.session.start();
    const p2 = blueskyAdapter.findPosts(lost.document)[0] as Element;
    await lost.session.check(p2);
    await lost.clock.advance(0);
    expect(lost.clock.scheduled).toEqual([2_000]); // backing off
    await lost.clock.advance(10 * 60_000);
    expect(cardOf(p2).text).toContain("Could not fact-check this post: the Errata server cannot be reached.");
    expect(lost.clock.scheduled).toEqual([]);
  });
});

describe("card theme", () => {
  it("follows the site's theme marker, also when the site switches", async () => {
    const light = setup(blueskyAdapter, "social/bluesky-feed.html", BSKY_FEED);
    light.session.start();
    const post = blueskyAdapter.findPosts(light.document)[0] as Element;
    await light.session.check(post);
    const box = () => cardOf(post).root.querySelector("section");
    expect(box()?.className).toContain("ev-theme-light");
    expect(post.querySelector(BUTTON_TAG)?.shadowRoot?.querySelector("button")?.className).toBe("light");
    light.document.documentElement.className = "theme--dim";
    await light.flush();
    expect(box()?.className).toContain("ev-theme-dark");
    expect(post.querySelector(BUTTON_TAG)?.shadowRoot?.querySelector("button")?.className).toBe("dark");

    const dark = setup(threadsAdapter, "social/threads-feed.html", THREADS_FEED);
    dark.session.start();
    const tpost = threadsAdapter.findPosts(dark.document)[0] as Element;
    await dark.session.check(tpost);
    expect(cardOf(tpost).host.dataset["theme"]).toBe("dark");
  });
});
