// "Dispute this claim" (issue 18): the form's rules (the server's), the
// appeal.* calls, the background's answers and memory, the tracker that
// follows an open appeal, and the form's DOM (text only, keyboard).

import { describe, expect, it } from "vitest";
import { ApiClient, ApiError, parseRetryAfter } from "../src/background/api-client";
import { APPEAL_KEY_PREFIX, type AppealApi, AppealService, MAX_REMEMBERED_APPEALS } from "../src/background/appeals";
import { MemoryStore } from "../src/background/storage";
import { type AppealRecord, APPEAL_POLL_DELAYS_MS, checkAppealForm, checkAppealInput, displayText } from "../src/lib/appeals";
import type { AppealGetResponse } from "../src/lib/messages";
import type { Timers } from "../src/lib/timers";
import { AppealTracker, type AppealTransport } from "../src/content/annotate/appeal-tracker";
import { disputeSection } from "../src/content/annotate/dispute";
import { domFor } from "./dom";

const REASON = "The cited census table gives 1895, not 1896.";
const RLO = "\u202E";

describe("checkAppealForm: the server's rules, hostile input included", () => {
  const cases: Array<{ name: string; reason?: string; urls?: string; author?: boolean; ok: boolean; error?: RegExp }> = [
    { name: "a plain reason, no URLs", ok: true },
    { name: "exactly 10 characters", reason: "0123456789", ok: true },
    { name: "9 characters", reason: "012345678", ok: false, error: /at least 10/ },
    { name: "10 characters after trimming spaces only", reason: "   short    ", ok: false, error: /at least 10/ },
    { name: "2000 characters", reason: "a".repeat(2000), ok: true },
    { name: "2000 astral characters count as 2000", reason: "😀".repeat(2000), ok: true },
    { name: "2001 characters", reason: "a".repeat(2001), ok: false, error: /at most 2000/ },
    { name: "a 10 kB reason", reason: "x".repeat(10_240), ok: false, error: /at most 2000/ },
    { name: "markup is text: <img onerror>", reason: '<img src=x onerror="alert(1)"> is wrong here', ok: true },
    { name: "an RTL override is text", reason: `${RLO}this reads backwards and is still a reason`, ok: true },
    { name: "a bell character", reason: `ring the bell \u0007 please`, ok: false, error: /control characters/ },
    { name: "a lone surrogate", reason: `broken \ud800 surrogate text`, ok: false, error: /cannot be sent/ },
    { name: "line breaks and tabs are fine", reason: "line one\n\tline two", ok: true },
    { name: "one https URL", urls: "https://example.org/census", ok: true },
    { name: "blank lines are ignored", urls: "\n https://example.org/a \n\n", ok: true },
    { name: "a public IPv4 literal", urls: "http://8.8.8.8/page", ok: true },
    { name: "javascript: URL", urls: "javascript:alert(1)", ok: false, error: /http:\/\/ or https:\/\// },
    { name: "JaVaScRiPt: with spaces", urls: "  JaVaScRiPt:alert(document.cookie)", ok: false, error: /http:\/\// },
    { name: "data: URL", urls: "data:text/html,<script>alert(1)</script>", ok: false, error: /http:\/\// },
    { name: "ftp URL", urls: "ftp://example.org/file", ok: false, error: /http:\/\// },
    { name: "opaque http:host", urls: "http:example.org", ok: false, error: /http:\/\// },
    { name: "loopback 127.0.0.1", urls: "http://127.0.0.1:8080/admin", ok: false, error: /private or local/ },
    { name: "loopback written as a number", urls: "http://2130706433/", ok: false, error: /private or local/ },
    { name: "loopback in hex", urls: "http://0x7f.1/", ok: false, error: /private or local/ },
    { name: "private 10/8", urls: "https://10.1.2.3/", ok: false, error: /private or local/ },
    { name: "private 192.168/16", urls: "https://192.168.1.1/", ok: false, error: /private or local/ },
    { name: "link-local metadata address", urls: "http://169.254.169.254/latest/meta-data/", ok: false, error: /private or local/ },
    { name: "IPv6 loopback", urls: "http://[::1]/", ok: false, error: /private or local/ },
    { name: "IPv4-mapped IPv6 loopback", urls: "http://[::ffff:127.0.0.1]/", ok: false, error: /private or local/ },
    { name: "IPv6 unique local", urls: "http://[fd00::1]/", ok: false, error: /private or local/ },
    { name: "IPv6 public", urls: "http://[2001:4860:4860::8888]/", ok: true },
    { name: "localhost", urls: "https://localhost/", ok: false, error: /this computer/ },
    { name: "a .localhost name", urls: "https://api.localhost./", ok: false, error: /this computer/ },
    { name: "credentials", urls: "https://user:secret@example.org/", ok: false, error: /user name or password/ },
    { name: "an empty user", urls: "https://@example.org/", ok: false, error: /user name or password/ },
    { name: "an RTL override in the host", urls: `https://exa${RLO}mple.org/`, ok: false, error: /not a valid address/ },
    { name: "a URL over 2048 bytes", urls: `https://example.org/${"a".repeat(2048)}`, ok: false, error: /2048 bytes/ },
    { name: "the same URL twice", urls: "https://example.org/a\nhttps://example.org/a", ok: false, error: /repeats/ },
    {
      name: "six URLs",
      urls: [1, 2, 3, 4, 5, 6].map((i) => `https://example.org/${i}`).join("\n"),
      ok: false,
      error: /At most 5 URLs/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const check = checkAppealForm({ author: c.author ?? false, reason: c.reason ?? REASON, urlLines: c.urls ?? "" });
      expect(check.ok).toBe(c.ok);
      if (!check.ok && c.error !== undefined) expect(check.errors.join(" ")).toMatch(c.error);
    });
  }

  it("sends the trimmed reason verbatim, the role and the URLs", () => {
    const check = checkAppealForm({ author: true, reason: `  ${REASON}\n`, urlLines: "https://example.org/a\r\nhttps://example.org/b" });
    expect(check).toEqual({ ok: true, role: "AUTHOR", reason: REASON, urls: ["https://example.org/a", "https://example.org/b"] });
    expect(checkAppealForm({ author: false, reason: REASON, urlLines: "" })).toMatchObject({ role: "READER", urls: [] });
  });

  it("the background checks what a content script sends again", () => {
    expect(checkAppealInput({ claimId: "c1", role: "READER", reason: REASON, urls: [] })).toEqual({ claimId: "c1", role: "READER", reason: REASON, urls: [] });
    expect(checkAppealInput({ claimId: "c1", role: "ADMIN", reason: REASON, urls: [] })).toBeNull();
    expect(checkAppealInput({ claimId: "c1", role: "READER", reason: "short", urls: [] })).toBeNull();
    expect(checkAppealInput({ claimId: "c1", role: "READER", reason: REASON, urls: ["http://127.0.0.1/"] })).toBeNull();
    expect(checkAppealInput({ claimId: "c1", role: "READER", reason: REASON, urls: ["", "https://example.org/"] })).toBeNull();
    expect(checkAppealInput({ claimId: "", role: "READER", reason: REASON, urls: [] })).toBeNull();
    expect(checkAppealInput({ claimId: "c1", role: "READER", reason: REASON, urls: [7] })).toBeNull();
    expect(checkAppealInput(null)).toBeNull();
  });

  it("server strings are flattened and bounded for display", () => {
    expect(displayText("a\u0000b\u001bc")).toBe("a b c");
    expect(Array.from(displayText("x".repeat(5000), 100))).toHaveLength(100);
  });
});

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

describe("ApiClient appeal.*", () => {
  it("appeal.file is a signed POST in its own namespace; appeal.get a GET; both strict", async () => {
    const calls: Array<{ url: string; init: RequestInit }> = [];
    const answers = [
      json(200, { result: { data: { appealId: "a1", status: "OPEN", duplicate: false } } }),
      json(200, {
        result: { data: { appealId: "a1", claimId: "c1", status: "UPHELD", role: "READER", filedAt: "2025-01-01T00:00:00Z", decidedAt: "2025-01-01T00:01:00Z", decisionReason: "stands" } },
      }),
      json(200, { result: { data: { appealId: "a1", status: "OPEN", duplicate: false, requesterKey: "leak" } } }),
    ];
    const api = new ApiClient({
      baseUrl: "http://127.0.0.1:8080",
      extensionVersion: "0.4.0",
      openaiApiKey: "sk-never-sent",
      fetch: async (url, init) => {
        calls.push({ url, init });
        const answer = answers.shift();
        if (answer === undefined) throw new Error("unexpected");
        return answer;
      },
    });
    const input = { claimId: "c1", role: "READER" as const, reason: REASON, urls: [] };
    expect(await api.appealFile(input)).toEqual({ appealId: "a1", status: "OPEN", duplicate: false });
    expect(calls[0]?.url).toBe("http://127.0.0.1:8080/trpc/appeal.file");
    expect(calls[0]?.init.method).toBe("POST");
    expect(calls[0]?.init.body).toBe(JSON.stringify(input));
    const headers = calls[0]?.init.headers as Record<string, string>;
    expect(headers["x-openerrata-signature"]).toMatch(/^[0-9a-f]{64}$/);
    expect(headers["x-openai-api-key"]).toBeUndefined();
    expect((await api.appealGet({ appealId: "a1" })).status).toBe("UPHELD");
    expect(calls[1]?.url).toBe(`http://127.0.0.1:8080/trpc/appeal.get?input=${encodeURIComponent('{"appealId":"a1"}')}`);
    await expect(api.appealFile(input)).rejects.toThrow(/unexpected key "requesterKey"/);
  });

  it("a 429 carries Retry-After", async () => {
    const api = new ApiClient({
      baseUrl: "http://127.0.0.1:8080",
      extensionVersion: "0.4.0",
      fetch: async () =>
        json(429, { error: { message: "too many appeals", code: -32029, data: { code: "TOO_MANY_REQUESTS", httpStatus: 429 } } }, { "retry-after": "30" }),
    });
    const error = await api.appealFile({ claimId: "c1", role: "READER", reason: REASON, urls: [] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).retryAfterSeconds).toBe(30);
  });

  it("parseRetryAfter reads seconds and dates, nothing else", () => {
    expect(parseRetryAfter("120")).toBe(120);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter("-5")).toBeUndefined();
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", Date.parse("Wed, 21 Oct 2015 07:28:00 GMT"))).toBe(30);
  });
});

const record = (status: AppealRecord["status"], extra: Partial<AppealRecord> = {}): AppealRecord => ({
  appealId: "a1",
  claimId: "c1",
  status,
  role: "READER",
  filedAt: "2025-01-01T00:00:00Z",
  decidedAt: status === "OPEN" ? null : "2025-01-01T00:05:00Z",
  decisionReason: status === "OPEN" ? null : "decided",
  ...extra,
});

function apiError(httpStatus: number, codeName: string, message: string, retryAfter?: number): ApiError {
  const error = new ApiError("appeal.file", httpStatus, -1, codeName, message, undefined, {});
  error.retryAfterSeconds = retryAfter;
  return error;
}

describe("AppealService (background)", () => {
  const file = { v: 1, type: "APPEAL_FILE", claimId: "c1", role: "READER", reason: REASON, urls: ["https://example.org/a"] };

  it("files, remembers per claim, reads and remembers the decision", async () => {
    const store = new MemoryStore();
    const sent: unknown[] = [];
    const api: AppealApi = {
      appealFile: async (input) => {
        sent.push(input);
        return { appealId: "a1", status: "OPEN", duplicate: false };
      },
      appealGet: async () => record("RETRACTED"),
    };
    const service = new AppealService(async () => api, store, () => Date.parse("2025-01-01T00:00:00Z"));
    const filed = await service.file(file);
    expect(filed).toMatchObject({ ok: true, duplicate: false, record: { appealId: "a1", claimId: "c1", status: "OPEN", role: "READER" } });
    expect(sent).toEqual([{ claimId: "c1", role: "READER", reason: REASON, urls: ["https://example.org/a"] }]);
    expect((await service.states(["c1", "c2"])).records.map((r) => r.status)).toEqual(["OPEN"]);
    expect(await service.read("c1", "a1")).toEqual({ v: 1, ok: true, record: record("RETRACTED") });
    expect((await service.states(["c1"])).records).toEqual([record("RETRACTED")]);
  });

  it("sends nothing the form's rules refuse", async () => {
    let called = false;
    const api: AppealApi = {
      appealFile: async () => {
        called = true;
        return { appealId: "a1", status: "OPEN", duplicate: false };
      },
      appealGet: async () => record("OPEN"),
    };
    const service = new AppealService(async () => api, new MemoryStore(), () => 0);
    const answer = await service.file({ ...file, urls: ["http://127.0.0.1/"] });
    expect(answer.ok).toBe(false);
    expect(called).toBe(false);
  });

  const refusals: Array<{ name: string; error: ApiError; text: string }> = [
    { name: "400 in the server's words", error: apiError(400, "BAD_REQUEST", "url 0: docs.internal resolves to a non-public address"), text: "url 0: docs.internal resolves to a non-public address." },
    { name: "404", error: apiError(404, "NOT_FOUND", "claimId: no such published claim."), text: "claimId: no such published claim." },
    { name: "409", error: apiError(409, "CONFLICT", "the claim was already withdrawn"), text: "the claim was already withdrawn." },
    { name: "429 with Retry-After", error: apiError(429, "TOO_MANY_REQUESTS", "too many appeals", 30), text: "too many appeals. Try again in 30 seconds." },
    { name: "429 in minutes", error: apiError(429, "TOO_MANY_REQUESTS", "slow down", 600), text: "slow down. Try again in 10 minutes." },
    { name: "500 not in the server's words", error: apiError(500, "INTERNAL_SERVER_ERROR", "stack trace here"), text: "The server refused the request (INTERNAL_SERVER_ERROR)." },
    { name: "control characters in a message", error: apiError(400, "BAD_REQUEST", "bad\u0000\u001b[31m reason"), text: "bad  [31m reason." },
  ];
  for (const r of refusals) {
    it(`words a refusal: ${r.name}`, async () => {
      const api: AppealApi = {
        appealFile: async () => {
          throw r.error;
        },
        appealGet: async () => record("OPEN"),
      };
      const service = new AppealService(async () => api, new MemoryStore(), () => 0);
      const answer = await service.file(file);
      expect(answer).toMatchObject({ ok: false, error: r.text });
    });
  }

  it("refuses an answer about another claim and forgets the oldest beyond the bound", async () => {
    const store = new MemoryStore();
    let n = 0;
    const api: AppealApi = {
      appealFile: async (input) => ({ appealId: `a-${input.claimId}`, status: "OPEN", duplicate: false }),
      appealGet: async () => record("UPHELD", { claimId: "other" }),
    };
    const service = new AppealService(async () => api, store, () => (n += 1));
    expect(await service.read("c1", "a1")).toMatchObject({ ok: false, permanent: true });
    for (let i = 0; i < MAX_REMEMBERED_APPEALS + 3; i += 1) await service.file({ ...file, claimId: `c${i}` });
    const kept = await store.entries(APPEAL_KEY_PREFIX);
    expect(kept).toHaveLength(MAX_REMEMBERED_APPEALS);
    expect(kept.some(([key]) => key === `${APPEAL_KEY_PREFIX}c0`)).toBe(false);
  });
});

class Clock implements Timers {
  now = 0;
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
  get count(): number {
    return this.pending.size;
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

function transport(reads: AppealGetResponse[], remembered: AppealRecord[] = []): AppealTransport & { readCount: number } {
  const t = {
    readCount: 0,
    file: async () => ({ v: 1 as const, ok: true as const, record: record("OPEN"), duplicate: false }),
    read: async (): Promise<AppealGetResponse> => {
      t.readCount += 1;
      return reads.length > 1 ? (reads.shift() as AppealGetResponse) : (reads[0] as AppealGetResponse);
    },
    states: async () => ({ v: 1 as const, records: remembered }),
  };
  return t;
}

describe("AppealTracker", () => {
  it("follows a filed appeal with growing delays until it is retracted, and tells once", async () => {
    const clock = new Clock();
    const decided: AppealRecord[] = [];
    const t = transport([
      { v: 1, ok: true, record: record("OPEN") },
      { v: 1, ok: false, error: "The Errata server cannot be reached.", permanent: false },
      { v: 1, ok: true, record: record("RETRACTED") },
    ]);
    const tracker = new AppealTracker({ transport: t, timers: clock, onDecided: (r) => decided.push(r) });
    expect(await tracker.file({ claimId: "c1", role: "READER", reason: REASON, urls: [] })).toEqual({ ok: true });
    expect(tracker.get("c1")).toMatchObject({ following: true, record: { status: "OPEN" } });
    await clock.advance((APPEAL_POLL_DELAYS_MS[0] ?? 0) - 1);
    expect(t.readCount).toBe(0);
    await clock.advance(1);
    expect(t.readCount).toBe(1);
    await clock.advance((APPEAL_POLL_DELAYS_MS[1] ?? 0) + (APPEAL_POLL_DELAYS_MS[2] ?? 0));
    expect(t.readCount).toBe(3);
    expect(tracker.get("c1")?.record.status).toBe("RETRACTED");
    expect(decided.map((r) => r.status)).toEqual(["RETRACTED"]);
    expect(clock.count).toBe(0);
  });

  it("gives up after the bounded schedule, then Check again reads at once", async () => {
    const clock = new Clock();
    const t = transport([{ v: 1, ok: true, record: record("OPEN") }]);
    const tracker = new AppealTracker({ transport: t, timers: clock, onDecided: () => undefined });
    await tracker.file({ claimId: "c1", role: "READER", reason: REASON, urls: [] });
    await clock.advance(APPEAL_POLL_DELAYS_MS.reduce((a, b) => a + b, 0));
    expect(t.readCount).toBe(APPEAL_POLL_DELAYS_MS.length);
    expect(tracker.get("c1")).toMatchObject({ following: false, note: "Still under review. Check again later." });
    await clock.advance(3_600_000);
    expect(t.readCount).toBe(APPEAL_POLL_DELAYS_MS.length);
    tracker.checkAgain("c1");
    await clock.advance(0);
    expect(t.readCount).toBe(APPEAL_POLL_DELAYS_MS.length + 1);
  });

  it("a permanent read failure stops with its message; remembered decisions are told on load", async () => {
    const clock = new Clock();
    const decided: string[] = [];
    const t = transport([{ v: 1, ok: false, error: "appealId: no such appeal.", permanent: true }], [record("RETRACTED", { claimId: "c2" }), record("OPEN")]);
    const tracker = new AppealTracker({ transport: t, timers: clock, onDecided: (r) => decided.push(r.claimId) });
    await tracker.load(["c1", "c2"]);
    expect(decided).toEqual(["c2"]);
    await clock.advance(APPEAL_POLL_DELAYS_MS[0] ?? 0);
    expect(tracker.get("c1")).toMatchObject({ following: false, note: "appealId: no such appeal." });
    tracker.stop();
  });
});

describe("disputeSection (DOM)", () => {
  const claim = { id: "c1", text: "t", context: "c", summary: "s", reasoning: "r", sources: [] };

  it("opens a form with focus, counts characters, checks before sending, Escape closes it back to the button", async () => {
    const doc = domFor("<!doctype html><html><body><div id=panel></div></body></html>");
    const files: unknown[] = [];
    const t: AppealTransport = {
      file: async (input) => {
        files.push(input);
        return { v: 1, ok: false, error: "too many appeals from this client. Try again in 30 seconds." };
      },
      read: async () => ({ v: 1, ok: true, record: record("OPEN") }),
      states: async () => ({ v: 1, records: [] }),
    };
    const tracker = new AppealTracker({ transport: t, timers: new Clock(), onDecided: () => undefined });
    const section = disputeSection(doc, claim, tracker);
    doc.getElementById("panel")?.append(section.element);
    const open = section.element.querySelector<HTMLButtonElement>("button.dispute-open");
    expect(open?.textContent).toBe("Dispute this claim");
    expect(section.escape()).toBe(false);
    open?.click();
    const author = section.element.querySelector<HTMLInputElement>("input[type=checkbox]");
    expect(doc.activeElement).toBe(author);
    const reason = section.element.querySelector<HTMLTextAreaElement>("textarea.reason");
    const count = section.element.querySelector(".count");
    if (reason === null) throw new Error("no reason field");
    reason.value = "short";
    reason.dispatchEvent(new doc.defaultView!.Event("input"));
    expect(count?.textContent).toContain("5 / 2000");
    expect(count?.classList.contains("bad")).toBe(true);
    section.element.querySelector("form")?.requestSubmit();
    expect(section.element.querySelector(".errors")?.textContent).toContain("at least 10");
    expect(files).toEqual([]);

    reason.value = REASON;
    const urls = section.element.querySelector<HTMLTextAreaElement>("textarea.urls");
    if (urls === null) throw new Error("no urls field");
    urls.value = "https://user:pw@example.org/";
    section.element.querySelector("form")?.requestSubmit();
    expect(section.element.querySelector(".errors")?.textContent).toContain("user name or password");
    urls.value = "https://example.org/census";
    author!.checked = true;
    section.element.querySelector("form")?.requestSubmit();
    await settle();
    expect(files).toEqual([{ claimId: "c1", role: "AUTHOR", reason: REASON, urls: ["https://example.org/census"] }]);
    expect(section.element.querySelector(".errors")?.textContent).toBe("too many appeals from this client. Try again in 30 seconds.");

    expect(section.escape()).toBe(true);
    expect(section.element.querySelector("form")).toBeNull();
    expect(doc.activeElement?.textContent).toBe("Dispute this claim");
  });

  it("renders the outcome's hostile reason as text and takes focus after sending", async () => {
    const doc = domFor("<!doctype html><html><body><div id=panel></div></body></html>");
    const hostile = `<img src=x onerror="alert(1)"> ${RLO}desrever <b>bold</b>`;
    const clock = new Clock();
    const t: AppealTransport = {
      file: async () => ({ v: 1, ok: true, record: record("OPEN"), duplicate: false }),
      read: async () => ({ v: 1, ok: true, record: record("UPHELD", { decisionReason: hostile }) }),
      states: async () => ({ v: 1, records: [] }),
    };
    const tracker = new AppealTracker({ transport: t, timers: clock, onDecided: () => undefined });
    const section = disputeSection(doc, claim, tracker);
    doc.getElementById("panel")?.append(section.element);
    section.element.querySelector<HTMLButtonElement>("button.dispute-open")?.click();
    section.element.querySelector<HTMLTextAreaElement>("textarea.reason")!.value = REASON;
    section.element.querySelector("form")?.requestSubmit();
    await settle();
    const state = section.element.querySelector<HTMLElement>(".state");
    expect(state?.textContent).toBe("Appeal received: under review");
    expect(doc.activeElement).toBe(state);
    await clock.advance(APPEAL_POLL_DELAYS_MS[0] ?? 0);
    expect(section.element.querySelector(".state")?.textContent).toBe("Reviewed: the correction stands");
    const decision = section.element.querySelector<HTMLElement>(".decision");
    expect(decision?.textContent).toBe(hostile);
    expect(decision?.getAttribute("dir")).toBe("auto");
    expect(section.element.querySelectorAll("img, b, script")).toHaveLength(0);
  });
});
