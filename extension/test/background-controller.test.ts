// The background controller with an in-memory storage, fake timers and a
// real ApiClient over a fake fetch: Investigate Now, polling every 5 s,
// recovery after the service worker is stopped, auto-investigate, and where
// the user's OpenAI key is (and is not) sent.

import { describe, expect, it } from "vitest";
import { ApiClient } from "../src/background/api-client";
import { BackgroundController, POLL_ALARM, POLL_INTERVAL_MS, type Timers } from "../src/background/controller";
import { readVerdict, startVerdict } from "../src/background/verdicts";
import { MemoryStore } from "../src/background/storage";
import { TabStore } from "../src/background/tab-store";
import type { BackgroundMessage, ContentMessage } from "../src/lib/messages";
import type { PlatformContent } from "../src/lib/platform";
import { DEFAULT_SETTINGS, type Settings } from "../src/lib/settings";
import { badgeFor, type TabState } from "../src/lib/tab-state";
import { wallJob } from "./verdict-jobs";

const TAB = 7;
const HASH = "cd".repeat(32);
const CONTENT: PlatformContent = {
  platform: "X",
  externalId: "42",
  url: "https://x.com/ada_l/status/42",
  contentText: "Water boils at 90 degrees at sea level.",
  mediaState: "text_only",
  imageUrls: [],
  imageOccurrences: [],
  metadata: { authorHandle: "ada_l", authorDisplayName: null, text: "Water boils at 90 degrees at sea level.", mediaUrls: [] },
};
const PAGE: ContentMessage = { v: 1, type: "PAGE_CONTENT", content: CONTENT };
const CLAIM = {
  id: "claim-1",
  text: "Water boils at 90 degrees at sea level.",
  context: "Water boils at 90 degrees at sea level.",
  summary: "It boils at 100 °C at sea level.",
  reasoning: "Standard pressure boiling point is **100 °C**.",
  sources: [{ url: "https://example.org/boiling", title: "Boiling point", snippet: "100 °C" }],
};

type Answer = { status: number; body: unknown } | Error;
interface Request {
  procedure: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A scripted API: answers per procedure, in order; the last answer repeats. */
class FakeServer {
  readonly requests: Request[] = [];
  private readonly answers = new Map<string, Answer[]>();

  on(procedure: string, ...answers: Answer[]): this {
    this.answers.set(procedure, answers);
    return this;
  }

  readonly fetch = async (url: string, init: RequestInit): Promise<Response> => {
    const procedure = new URL(url).pathname.replace(/^\/trpc\/(?:post\.)?/, "");
    this.requests.push({
      procedure,
      method: init.method ?? "GET",
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
    });
    const queue = this.answers.get(procedure) ?? [];
    const answer = queue.length > 1 ? queue.shift() : queue[0];
    if (answer === undefined) throw new Error(`no answer scripted for ${procedure}`);
    if (answer instanceof Error) throw answer;
    return new Response(JSON.stringify(answer.body), { status: answer.status });
  };

  calls(procedure: string): Request[] {
    return this.requests.filter((r) => r.procedure === procedure);
  }
}

const ok = (data: unknown): Answer => ({ status: 200, body: { result: { data } } });
const registered = ok({ platform: "X", externalId: "42", versionHash: HASH, postVersionId: "pv-1", provenance: "CLIENT_FALLBACK" });
const notInvestigated = ok({ investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null });
const investigating = (pending: unknown[] = [], confirmed: unknown[] = []) =>
  ok({
    investigationState: "INVESTIGATING",
    status: "PROCESSING",
    provenance: "CLIENT_FALLBACK",
    pendingClaims: pending,
    confirmedClaims: confirmed,
    priorInvestigationResult: null,
  });
const investigated = ok({ investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [CLAIM], checkedAt: "2026-01-02T03:04:05Z" });
const pendingNow = ok({ investigationId: "inv-1", status: "PENDING", provenance: "CLIENT_FALLBACK" });
const error = (httpStatus: number, code: number, name: string, extra: Record<string, unknown> = {}, message = name): Answer => ({
  status: httpStatus,
  body: { error: { message, code, data: { code: name, httpStatus, path: "post.x", ...extra } } },
});

/** Manual timers: run the due ones by advancing the clock. */
class Clock implements Timers {
  now = 1_000_000;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  set(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  }

  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get scheduled(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.now).sort((a, b) => a - b);
  }

  /** Advances time, firing due timers in order, and lets their promises settle. */
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
  for (let i = 0; i < 30; i += 1) await new Promise((r) => setImmediate(r));
}

function harness(server: FakeServer, settings: Partial<Settings> = {}, shared?: { store: MemoryStore; clock: Clock }) {
  const store = shared?.store ?? new MemoryStore();
  const clock = shared?.clock ?? new Clock();
  const sent: BackgroundMessage[] = [];
  const badges: string[] = [];
  const alarms = new Set<string>();
  const config = { ...DEFAULT_SETTINGS, ...settings };
  const controller = new BackgroundController({
    api: async () =>
      new ApiClient({
        baseUrl: "http://127.0.0.1:8080",
        extensionVersion: "0.5.0",
        apiKey: config.apiKey,
        openaiApiKey: config.openaiApiKey,
        fetch: server.fetch,
      }),
    settings: async () => config,
    tabs: new TabStore(store),
    store,
    alarms: {
      start: async (name) => void alarms.add(name),
      stop: async (name) => void alarms.delete(name),
    },
    timers: clock,
    now: () => clock.now,
    showBadge: async (_tab, state) => void badges.push(badgeFor(state).text),
    sendToTab: async (_tab, message) => void sent.push(message),
  });
  return { controller, store, clock, sent, badges, alarms };
}

async function stateOf(h: ReturnType<typeof harness>): Promise<TabState> {
  return h.controller.getState(TAB);
}

describe("Investigate Now and polling", () => {
  it("requests, polls at once and then every 5 s with live claims, stops when done, and draws the claims", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on("investigateNow", pendingNow)
      .on("getInvestigation", investigating([{ ...CLAIM, id: undefined }].map(({ id: _id, ...c }) => c)), investigated);
    const h = harness(server, { apiKey: "instance-key", openaiApiKey: "sk-user" });
    await h.controller.onContentMessage(TAB, PAGE);
    expect(await stateOf(h)).toMatchObject({ kind: "status", title: "@ada_l", status: { investigationState: "NOT_INVESTIGATED" } });
    expect(server.calls("investigateNow")).toHaveLength(0); // auto-investigate is off

    await h.controller.investigate(TAB, { auto: false });
    expect(server.calls("investigateNow")[0]?.body).toEqual({ postVersionId: "pv-1" });
    expect(await stateOf(h)).toMatchObject({ investigationId: "inv-1", status: { investigationState: "INVESTIGATING", status: "PENDING" } });
    expect(h.alarms.has(POLL_ALARM)).toBe(true);
    expect(h.clock.scheduled).toEqual([0]); // the first status read at once: progress without a wait

    await h.clock.advance(0);
    expect(server.calls("getInvestigation")).toHaveLength(1);
    expect(server.calls("getInvestigation")[0]?.method).toBe("GET");
    const live = await stateOf(h);
    expect(live).toMatchObject({ status: { investigationState: "INVESTIGATING", pendingClaims: [{ text: CLAIM.text }] } });
    expect(h.sent.filter((m) => m.type === "SHOW_CLAIMS")).toEqual([]); // pending claims are never drawn

    await h.clock.advance(POLL_INTERVAL_MS);
    expect(server.calls("getInvestigation")).toHaveLength(2);
    expect(await stateOf(h)).toMatchObject({
      status: { investigationState: "INVESTIGATED", claims: [CLAIM] },
      checkedAt: "2026-01-02T03:04:05Z",
    });
    expect(h.sent.at(-1)).toEqual({ v: 1, type: "SHOW_CLAIMS", url: CONTENT.url, claims: [CLAIM], visible: true });
    expect(h.badges.at(-1)).toBe("1");
    expect(h.clock.scheduled).toEqual([]);
    expect(h.alarms.has(POLL_ALARM)).toBe(false);

    // The user's key goes on investigateNow only; the instance key on every post.* call.
    for (const request of server.requests) {
      expect(request.headers["x-openerrata-extension-version"]).toBe("0.5.0");
      expect(request.headers["x-api-key"]).toBe("instance-key");
      expect(request.headers["x-openai-api-key"]).toBe(request.procedure === "investigateNow" ? "sk-user" : undefined);
    }
  });

  it("resumes a persisted poll after the service worker was stopped", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on("investigateNow", pendingNow)
      .on("getInvestigation", investigated);
    const first = harness(server, { apiKey: "k" });
    await first.controller.onContentMessage(TAB, PAGE);
    await first.controller.investigate(TAB, { auto: false });
    expect(first.clock.scheduled).toEqual([0]);

    // The worker stops: its timers die with it; storage.session survives.
    const clock = new Clock();
    clock.now = first.clock.now + 45_000;
    const second = harness(server, { apiKey: "k" }, { store: first.store, clock });
    await second.controller.resumePolls(); // on start-up, or when the alarm wakes the worker
    expect(clock.scheduled).toEqual([0]); // overdue: poll at once
    await clock.advance(0);
    expect(server.calls("getInvestigation")).toHaveLength(1);
    expect(await second.controller.getState(TAB)).toMatchObject({ status: { investigationState: "INVESTIGATED" } });
    expect([...first.store.data.keys()].filter((k) => k.startsWith("poll:"))).toEqual([]);
  });

  it("auto-investigates with the user's key when opted in, and only then", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on("investigateNow", ok({ investigationId: "inv-9", status: "COMPLETE", provenance: "CLIENT_FALLBACK", claims: [CLAIM] }));
    const off = harness(server, { openaiApiKey: "sk-user", autoInvestigate: false });
    await off.controller.onContentMessage(TAB, PAGE);
    expect(server.calls("investigateNow")).toHaveLength(0);
    const noKey = harness(server, { autoInvestigate: true });
    await noKey.controller.onContentMessage(TAB, PAGE);
    expect(server.calls("investigateNow")).toHaveLength(0);

    const on = harness(server, { openaiApiKey: "sk-user", autoInvestigate: true });
    await on.controller.onContentMessage(TAB, PAGE);
    const calls = server.calls("investigateNow");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.headers["x-openai-api-key"]).toBe("sk-user");
    expect(await on.controller.getState(TAB)).toMatchObject({
      autoInvestigated: true,
      investigationId: "inv-9",
      status: { investigationState: "INVESTIGATED", claims: [CLAIM] },
    });
    expect(on.sent.at(-1)).toMatchObject({ type: "SHOW_CLAIMS", claims: [CLAIM] });
  });

  it("a failed investigation can be retried", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on(
        "investigateNow",
        ok({ investigationId: "inv-1", status: "FAILED", provenance: "CLIENT_FALLBACK" }),
        ok({ investigationId: "inv-1", status: "COMPLETE", provenance: "CLIENT_FALLBACK", claims: [] }),
      );
    const h = harness(server, { apiKey: "k" });
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.investigate(TAB, { auto: false });
    expect(await stateOf(h)).toMatchObject({ status: { investigationState: "FAILED" } });
    expect(h.badges.at(-1)).toBe("×");
    await h.controller.investigate(TAB, { auto: false });
    expect(await stateOf(h)).toMatchObject({ status: { investigationState: "INVESTIGATED", claims: [] } });
    expect(h.badges.at(-1)).toBe("✓");
  });

  it("says why Investigate Now was refused, and stops at UPGRADE_REQUIRED", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on("investigateNow", error(401, -32001, "UNAUTHORIZED"));
    const h = harness(server);
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.investigate(TAB, { auto: false });
    const refused = await stateOf(h);
    expect(refused).toMatchObject({ kind: "status", requestError: expect.stringContaining("API key") });
    expect(refused).not.toHaveProperty("requesting");

    server.on(
      "investigateNow",
      error(412, -32012, "PRECONDITION_FAILED", { openerrataCode: "UPGRADE_REQUIRED", minimumSupportedExtensionVersion: "9.0.0" }),
    );
    await h.controller.investigate(TAB, { auto: false });
    expect(await stateOf(h)).toMatchObject({ kind: "error", upgradeRequired: { minimumVersion: "9.0.0" } });
  });

  it("backs off on network failures and gives up after repeated ones, keeping what it knew", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on("investigateNow", pendingNow)
      .on("getInvestigation", new TypeError("fetch failed"));
    const h = harness(server, { apiKey: "k" });
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.investigate(TAB, { auto: false });
    await h.clock.advance(0);
    expect(h.clock.scheduled).toEqual([POLL_INTERVAL_MS]);
    await h.clock.advance(POLL_INTERVAL_MS);
    expect(h.clock.scheduled).toEqual([2 * POLL_INTERVAL_MS]);
    await h.clock.advance(10 * 60_000);
    const state = await stateOf(h);
    expect(state).toMatchObject({ status: { investigationState: "INVESTIGATING" }, requestError: expect.stringContaining("cannot be reached") });
    expect(h.clock.scheduled).toEqual([]);
    expect(h.alarms.has(POLL_ALARM)).toBe(false);
  });

  it("finds a running investigation's id again (cached per version) after a reload", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated, investigating())
      .on("investigateNow", pendingNow)
      .on("getInvestigation", investigating());
    const h = harness(server, { openaiApiKey: "sk" });
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.investigate(TAB, { auto: false });
    await h.controller.onNavigated(TAB); // reload
    expect(h.clock.scheduled).toEqual([]);
    await h.controller.onContentMessage(TAB, PAGE);
    expect(await stateOf(h)).toMatchObject({ investigationId: "inv-1", status: { investigationState: "INVESTIGATING" } });
    expect(server.calls("investigateNow")).toHaveLength(1); // no second request
    expect(h.clock.scheduled).toEqual([POLL_INTERVAL_MS]);
  });

  it("drops answers for a page the tab no longer shows", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on("investigateNow", pendingNow)
      .on("getInvestigation", investigated);
    const h = harness(server, { apiKey: "k" });
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.investigate(TAB, { auto: false });
    await h.controller.onContentMessage(TAB, { v: 1, type: "PAGE_SKIPPED", platform: "X", url: "https://x.com/b/status/9", reason: "has_video" });
    await h.clock.advance(60_000);
    expect(server.calls("getInvestigation")).toHaveLength(0);
    expect(await stateOf(h)).toMatchObject({ kind: "skipped" });
  });

  it("records which claims the page could anchor", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", ok({ investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [CLAIM] }));
    const h = harness(server);
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.onContentMessage(TAB, { v: 1, type: "CLAIMS_ANCHORED", url: CONTENT.url, anchored: [], unanchored: ["claim-1"] });
    expect(await stateOf(h)).toMatchObject({ anchoring: { anchored: [], unanchored: ["claim-1"] } });
    await h.controller.onContentMessage(TAB, { v: 1, type: "CLAIMS_ANCHORED", url: "https://elsewhere.example/", anchored: ["claim-1"], unanchored: [] });
    expect(await stateOf(h)).toMatchObject({ anchoring: { unanchored: ["claim-1"] } });
    // A claim withdrawn after an appeal is kept as such; what is not a list of ids is dropped.
    await h.controller.onContentMessage(TAB, { v: 1, type: "CLAIMS_ANCHORED", url: CONTENT.url, anchored: [], unanchored: [], withdrawn: ["claim-1"] });
    expect(await stateOf(h)).toMatchObject({ anchoring: { anchored: [], unanchored: [], withdrawn: ["claim-1"] } });
    const forged = { v: 1, type: "CLAIMS_ANCHORED", url: CONTENT.url, anchored: [], unanchored: [], withdrawn: [7, "x".repeat(129), "claim-1", null] };
    await h.controller.onContentMessage(TAB, forged as unknown as Parameters<typeof h.controller.onContentMessage>[1]);
    expect(await stateOf(h)).toMatchObject({ anchoring: { withdrawn: ["claim-1"] } });
    await h.controller.onContentMessage(TAB, { v: 1, type: "CLAIMS_ANCHORED", url: CONTENT.url, anchored: ["claim-1"], unanchored: [] });
    expect(await stateOf(h)).toMatchObject({ anchoring: { anchored: ["claim-1"], withdrawn: [] } });
  });
});

describe("verdicts", () => {
  const JOB_ID = "0b9d4f0e-6a43-5c1e-9d1a-3f7a2b6c8e11";
  const requested = ok({ analysisId: JOB_ID, status: "PENDING" });

  it("the popup's Verdict for this post: verdict.request for the tab's version, its job recorded, its id found again after a reload", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on("verdict.request", requested)
      .on("verdict.get", ok(wallJob(3, JOB_ID)), ok(wallJob(5, JOB_ID)));
    const h = harness(server, { apiKey: "instance-key", openaiApiKey: "sk-user" });
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.requestVerdict(TAB);
    const request = server.calls("verdict.request")[0];
    expect(request?.method).toBe("POST");
    expect(request?.body).toEqual({ platform: "X", externalId: "42", postVersionId: "pv-1" });
    // verdict.* carries the contract's headers, never the user's OpenAI key.
    expect(request?.headers["x-openerrata-extension-version"]).toBe("0.5.0");
    expect(request?.headers["x-api-key"]).toBe("instance-key");
    expect(request?.headers["x-openai-api-key"]).toBeUndefined();
    expect(request?.headers["x-openerrata-signature"]).toMatch(/^[0-9a-f]{64}$/);
    expect(await stateOf(h)).toMatchObject({ kind: "status", verdict: { analysisId: JOB_ID } });

    const api = new ApiClient({ baseUrl: "http://127.0.0.1:8080", extensionVersion: "0.5.0", fetch: server.fetch });
    await h.controller.recordVerdict(TAB, JOB_ID, await readVerdict(api, JOB_ID));
    expect(await stateOf(h)).toMatchObject({ verdict: { analysisId: JOB_ID, job: { status: "RUNNING" } } });
    const get = server.calls("verdict.get")[0];
    expect(get?.method).toBe("GET");
    expect(get?.headers["x-openerrata-signature"]).toBeUndefined();
    await h.controller.recordVerdict(TAB, "another-analysis", await readVerdict(api, JOB_ID));
    expect(await stateOf(h)).toMatchObject({ verdict: { job: { status: "RUNNING" } } }); // not the tab's analysis

    // A reload: the same version, the analysis found again without asking.
    await h.controller.onNavigated(TAB);
    await h.controller.onContentMessage(TAB, PAGE);
    expect(await stateOf(h)).toMatchObject({ verdict: { analysisId: JOB_ID } });
    expect(server.calls("verdict.request")).toHaveLength(1);
    expect(h.sent.filter((m) => m.type === "SHOW_CLAIMS")).toEqual([]); // a verdict draws nothing in the page
  });

  it("says why the request failed, in the server's words where they explain", async () => {
    const server = new FakeServer()
      .on("registerObservedVersion", registered)
      .on("recordViewAndGetStatus", notInvestigated)
      .on(
        "verdict.request",
        error(400, -32600, "BAD_REQUEST", {}, "the post has 45210 characters; verdicts are given for posts of at most 32000\u0000"),
        error(429, -32029, "TOO_MANY_REQUESTS", { retryAfterSeconds: 120 }, "too many verdict requests; retry in 120 s"),
        error(500, -32603, "INTERNAL_SERVER_ERROR", {}, "pq: connection refused at 10.0.0.7"),
      );
    const h = harness(server);
    await h.controller.onContentMessage(TAB, PAGE);
    await h.controller.requestVerdict(TAB);
    expect(await stateOf(h)).toMatchObject({ verdict: { error: "the post has 45210 characters; verdicts are given for posts of at most 32000" } });
    await h.controller.requestVerdict(TAB);
    expect(await stateOf(h)).toMatchObject({ verdict: { error: "too many verdict requests; retry in 120 s" } });
    await h.controller.requestVerdict(TAB);
    expect(await stateOf(h)).toMatchObject({ verdict: { error: "the server refused the request (INTERNAL_SERVER_ERROR)" } }); // not the server's internals
  });

  it("the Fact-check button's request: register the post, then verdict.request with the id the server registered", async () => {
    const bluesky: PlatformContent = {
      platform: "BLUESKY",
      externalId: "at://did:plc:ue4wzb3ysxq6g74ouj7ic7ha/app.bsky.feed.post/b4h4tghc6ol7k",
      url: "https://bsky.app/profile/marenholt.bsky.social/post/b4h4tghc6ol7k",
      contentText: "The Great Wall of China is visible from the Moon.",
      mediaState: "text_only",
      imageUrls: [],
      imageOccurrences: [],
      metadata: { handle: "marenholt.bsky.social" },
    };
    const server = new FakeServer()
      .on("registerObservedVersion", ok({ platform: "BLUESKY", externalId: bluesky.externalId, versionHash: HASH, postVersionId: "7d3c5b6e-1f0a-5b2c-9d8e-0a1b2c3d4e5f", provenance: "SERVER_VERIFIED" }))
      .on("verdict.request", requested)
      .on("verdict.get", error(404, -32004, "NOT_FOUND"), error(400, -32600, "BAD_REQUEST"));
    const api = new ApiClient({ baseUrl: "http://127.0.0.1:8080", extensionVersion: "0.5.0", fetch: server.fetch });
    expect(await startVerdict(api, bluesky)).toEqual({ v: 1, ok: true, analysisId: JOB_ID, status: "PENDING", postVersionId: "7d3c5b6e-1f0a-5b2c-9d8e-0a1b2c3d4e5f" });
    expect(server.calls("registerObservedVersion")[0]?.body).toMatchObject({ platform: "BLUESKY", externalId: bluesky.externalId, observedContentText: bluesky.contentText });
    expect(server.calls("verdict.request")[0]?.body).toEqual({ platform: "BLUESKY", externalId: bluesky.externalId, postVersionId: "7d3c5b6e-1f0a-5b2c-9d8e-0a1b2c3d4e5f" });
    // Not yet in the read model: worth another read; a bad request is not.
    expect(await readVerdict(api, JOB_ID)).toMatchObject({ ok: false, permanent: false });
    expect(await readVerdict(api, JOB_ID)).toMatchObject({ ok: false, permanent: true, error: "BAD_REQUEST" });
    server.on("registerObservedVersion", new TypeError("fetch failed"));
    expect(await startVerdict(api, bluesky)).toEqual({ v: 1, ok: false, error: "the Errata server cannot be reached" });
  });
});
