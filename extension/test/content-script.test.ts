// The content script end to end inside a jsdom page with a fake
// chrome.runtime: waiting for hydration, skipping, rescanning after a
// client-side navigation.

import { JSDOM } from "jsdom";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ContentMessage } from "../src/lib/messages";
import { readLocalFixture } from "./fixtures";
import { wallJob } from "./verdict-jobs";

type Listener = (message: unknown) => boolean;

interface Harness {
  dom: JSDOM;
  sent: ContentMessage[];
  listeners: Listener[];
}

const GLOBALS = ["document", "location", "MutationObserver", "chrome"] as const;

async function loadContentScript(html: string, url: string, answer: (message: unknown) => unknown = () => undefined): Promise<Harness> {
  const dom = new JSDOM(html, { url });
  const sent: ContentMessage[] = [];
  const listeners: Listener[] = [];
  const g = globalThis as Record<string, unknown>;
  g["document"] = dom.window.document;
  g["location"] = dom.window.location;
  g["MutationObserver"] = dom.window.MutationObserver;
  g["chrome"] = {
    runtime: {
      sendMessage: async (message: ContentMessage) => {
        sent.push(message);
        return answer(message);
      },
      onMessage: { addListener: (fn: Listener) => listeners.push(fn) },
    },
  };
  g["__errataContentScript"] = undefined;
  vi.resetModules();
  await import("../src/content/main");
  return { dom, sent, listeners };
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

afterEach(() => {
  const g = globalThis as Record<string, unknown>;
  for (const name of GLOBALS) delete g[name];
});

const THREAD = readLocalFixture("x-status-thread.html");
const FOCAL = "https://x.com/ada_l/status/1790000000000000002";

describe("content script", () => {
  it("waits for the post to render, then reports it once", async () => {
    const article = /<article[^]*<\/article>/.exec(THREAD)?.[0] ?? "";
    const h = await loadContentScript('<html><body><div data-testid="primaryColumn"></div></body></html>', FOCAL);
    expect(h.sent).toEqual([]);
    h.dom.window.document.querySelector('[data-testid="primaryColumn"]')?.insertAdjacentHTML("beforeend", article);
    await until(() => h.sent.length > 0);
    await new Promise((r) => setTimeout(r, 400));
    expect(h.sent).toHaveLength(1);
    const [message] = h.sent;
    expect(message?.type).toBe("PAGE_CONTENT");
    if (message?.type === "PAGE_CONTENT") {
      expect(message.v).toBe(1);
      expect(message.content.externalId).toBe("1790000000000000002");
    }
  });

  it("reads the page again when the background says the URL changed", async () => {
    const h = await loadContentScript(THREAD, FOCAL);
    await until(() => h.sent.length === 1);
    h.dom.window.history.pushState({}, "", "/charles_b/status/1790000000000000001");
    for (const listener of h.listeners) listener({ v: 1, type: "RESCAN" });
    await until(() => h.sent.length === 2);
    const second = h.sent[1];
    expect(second?.type === "PAGE_CONTENT" && second.content.externalId).toBe("1790000000000000001");
  });

  it("skips protected posts without extracting them", async () => {
    const h = await loadContentScript(readLocalFixture("x-status-protected.html"), FOCAL);
    await until(() => h.sent.length === 1);
    expect(h.sent[0]).toEqual({ v: 1, type: "PAGE_SKIPPED", platform: "X", url: FOCAL, reason: "private_or_gated" });
  });

  it("skips posts with video and unsupported pages", async () => {
    const url = "https://x.com/i/web/status/1790000000000000009";
    const h = await loadContentScript(readLocalFixture("x-status-video.html"), url);
    await until(() => h.sent.length === 1);
    expect(h.sent[0]).toMatchObject({ type: "PAGE_SKIPPED", reason: "has_video" });

    const talk = `<html><head><script>RLCONF={"wgNamespaceNumber":1,"wgArticleId":5,"wgRevisionId":6};</script></head><body><div id="mw-content-text"><div class="mw-parser-output"><p>Talk</p></div></div></body></html>`;
    const w = await loadContentScript(talk, "https://en.wikipedia.org/wiki/Ada_Lovelace");
    await until(() => w.sent.length === 1);
    expect(w.sent[0]).toMatchObject({ type: "PAGE_SKIPPED", platform: "WIKIPEDIA", reason: "unsupported_content" });
  });

  it("does nothing on pages no adapter recognises", async () => {
    const h = await loadContentScript("<html><body><p>Home timeline</p></body></html>", "https://x.com/home");
    await new Promise((r) => setTimeout(r, 100));
    expect(h.sent).toEqual([]);
  });

  it("on Bluesky: a Fact-check button on every post, and a click asks the background for the verdict", async () => {
    const id = "0b9d4f0e-6a43-5c1e-9d1a-3f7a2b6c8e11";
    const h = await loadContentScript(readLocalFixture("social/bluesky-feed.html"), "https://bsky.app/", (message) => {
      const m = message as { type: string };
      if (m.type === "VERDICT_START") return { v: 1, ok: true, analysisId: id, status: "PENDING", postVersionId: "7d3c5b6e-1f0a-5b2c-9d8e-0a1b2c3d4e5f" };
      if (m.type === "VERDICT_GET") return { v: 1, ok: true, job: wallJob(5, id) };
      return undefined;
    });
    const document = h.dom.window.document;
    const posts = document.querySelectorAll('[data-testid^="feedItem-by-"]');
    expect(posts).toHaveLength(12);
    expect([...posts].map((p) => p.querySelectorAll("errata-fact-check").length)).toEqual(new Array(12).fill(1));
    expect(h.sent).toEqual([]); // no view path on Bluesky: nothing is sent until a click
    posts[0]?.querySelector("errata-fact-check")?.shadowRoot?.querySelector("button")?.click();
    await until(() => posts[0]?.querySelector("errata-verdict")?.getAttribute("data-state") === "complete");
    const [start, get] = h.sent as unknown as Array<Record<string, unknown>>;
    expect(start).toMatchObject({ v: 1, type: "VERDICT_START", content: { platform: "BLUESKY", externalId: "at://did:plc:ue4wzb3ysxq6g74ouj7ic7ha/app.bsky.feed.post/b4h4tghc6ol7k" } });
    expect(get).toEqual({ v: 1, type: "VERDICT_GET", analysisId: id });
    expect(posts[0]?.querySelector("errata-verdict")?.shadowRoot?.querySelector(".ev-pill")?.textContent).toBe("False");
  });
});
