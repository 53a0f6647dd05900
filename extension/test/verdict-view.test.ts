// The verdict view shared by the card and the popup, theme detection, and
// the poller that follows an analysis.

import { describe, expect, it } from "vitest";
import { backgroundTheme, detectTheme, opaqueLuminance } from "../src/content/verdict/theme";
import { verdictJob } from "../src/lib/api-types";
import type { Timers } from "../src/lib/timers";
import { VERDICT_POLL_INTERVAL_MS, VerdictPoller, type VerdictRead } from "../src/lib/verdict-poller";
import { ShapeError } from "../src/lib/validate";
import { clip, domainOf, phaseText, renderVerdict } from "../src/ui/verdict-view";
import { domFor } from "./dom";
import { failedJob, hostileJob, wallJob } from "./verdict-jobs";

describe("verdict view", () => {
  it("says what the analysis is doing, step by step", () => {
    expect([null, 0, 1, 2, 3, 4, 5].map((step) => phaseText(step === null ? null : wallJob(step)))).toEqual([
      "Sending the post to Errata…",
      "Queued…",
      "Extracting claims…",
      "Found 2 claims; sorting them…",
      "Searching: 2 queries so far…",
      "Weighing the evidence…",
      "Done.",
    ]);
    expect(phaseText(failedJob())).toBe("The fact-check failed.");
  });

  it("clips by code points and names domains", () => {
    expect(clip("short", 10)).toBe("short");
    expect(clip("abcdefghij", 5)).toBe("abcd…");
    expect(clip("😀😀😀😀😀😀", 4)).toBe("😀😀😀…"); // never half a surrogate pair
    expect(domainOf("https://www.nasa.gov/x")).toBe("nasa.gov");
    expect(domainOf("https://xn--80ak6aa92e.com/")).toBe("xn--80ak6aa92e.com"); // IDN hosts stay punycode
    expect(domainOf("not a url")).toBe("");
  });

  it("renders the verdict from the job, bounded", () => {
    const doc = domFor("<main></main>");
    const job = hostileJob();
    if (job.verdict === null) throw new Error("no verdict");
    const main = doc.querySelector("main") as HTMLElement;
    main.append(...renderVerdict(doc, job, job.verdict, { claimsOpen: true }));
    expect(main.querySelector("details")?.open).toBe(true);
    expect(main.querySelectorAll("img, script")).toHaveLength(0);
    expect((main.querySelector(".ev-summary")?.textContent ?? "").length).toBe(1_200);
    expect(main.querySelector(".ev-pill")?.getAttribute("data-label")).toBe("False");
  });
});

describe("job JSON validation", () => {
  it("accepts every step of a run, and refuses drift", () => {
    for (const step of [0, 1, 2, 3, 4, 5]) expect(verdictJob(JSON.parse(JSON.stringify(wallJob(step))), "result.data").id).toBe(wallJob(step).id);
    expect(verdictJob(JSON.parse(JSON.stringify(hostileJob())), "result.data").status).toBe("COMPLETE");
    const drift = (mutate: (job: Record<string, unknown>) => void): unknown => {
      const job = JSON.parse(JSON.stringify(wallJob(5))) as Record<string, unknown>;
      mutate(job);
      return job;
    };
    const cases: Array<[string, unknown, string]> = [
      ["an unknown key", drift((j) => (j["extra"] = 1)), 'result.data: unexpected key "extra"'],
      ["an unknown label", drift((j) => ((j["verdict"] as Record<string, unknown>)["label"] = "Pants on fire")), "result.data.verdict.label"],
      ["confidence above 100", drift((j) => ((j["verdict"] as Record<string, unknown>)["confidence"] = 101)), "result.data.verdict.confidence"],
      ["tier 6", drift((j) => (((j["verdict"] as Record<string, unknown>)["sources"] as Array<Record<string, unknown>>)[0] = { url: "u", title: "t", domain: "d", tier: 6, fromSearch: false })), "result.data.verdict.sources[0].tier"],
      ["a NaN-like probability", drift((j) => (((j["claims"] as Array<Record<string, unknown>>)[0]?.["sources"] as Array<Record<string, unknown>>)[0]!["entail"] = "0.5")), "result.data.claims[0].sources[0].entail"],
      ["an unknown status", drift((j) => (j["status"] = "DONE")), "result.data.status"],
    ];
    for (const [what, value, path] of cases) {
      expect(() => verdictJob(value, "result.data"), what).toThrow(ShapeError);
      try {
        verdictJob(value, "result.data");
      } catch (error: unknown) {
        expect((error as ShapeError).path, what).toBe(path === 'result.data: unexpected key "extra"' ? "result.data" : path);
      }
    }
  });
});

describe("theme", () => {
  it("reads luminance from computed colours, ignoring transparent ones", () => {
    expect(opaqueLuminance("rgb(255, 255, 255)")).toBe(1);
    expect(opaqueLuminance("rgb(0, 0, 0)")).toBe(0);
    expect(opaqueLuminance("rgba(0, 0, 0, 0)")).toBeNull();
    expect(opaqueLuminance("rgba(16 16 16 / 90%)")).toBeCloseTo(0.0627, 3);
    expect(opaqueLuminance("transparent")).toBeNull();
    expect(opaqueLuminance("")).toBeNull();
  });

  it("site marker first, then the nearest opaque background, then the system preference", () => {
    const doc = domFor(
      `<html><body style="background-color: rgb(0, 0, 0)">
        <div id="in-dark"><p id="p">x</p></div>
        <div style="background-color: rgb(250, 250, 250)"><div><p id="in-light">x</p></div></div>
      </body></html>`,
    );
    expect(backgroundTheme(doc.getElementById("p"))).toBe("dark");
    expect(backgroundTheme(doc.getElementById("in-light"))).toBe("light");
    expect(detectTheme(doc, doc.getElementById("in-light"), null)).toBe("light");
    expect(detectTheme(doc, doc.getElementById("in-light"), "dark")).toBe("dark");
    const bare = domFor("<html><body><p id='p'>x</p></body></html>");
    expect(backgroundTheme(bare.getElementById("p"))).toBeNull();
    expect(detectTheme(bare, bare.getElementById("p"), null)).toBe("light"); // jsdom has no dark preference
  });
});

class Clock implements Timers {
  now = 0;
  private seq = 0;
  readonly pending = new Map<number, { at: number; fn: () => void }>();
  set(fn: () => void, ms: number): unknown {
    this.pending.set(++this.seq, { at: this.now + ms, fn });
    return this.seq;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  get scheduled(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.now);
  }
  async runNext(): Promise<void> {
    const [id, next] = [...this.pending.entries()].sort((a, b) => a[1].at - b[1].at)[0] ?? [];
    if (id === undefined || next === undefined) throw new Error("nothing scheduled");
    this.pending.delete(id);
    this.now = next.at;
    next.fn();
    for (let i = 0; i < 10; i += 1) await new Promise((r) => setImmediate(r));
  }
}

describe("verdict poller", () => {
  it("reads at once, then every second until the job settles", async () => {
    const clock = new Clock();
    const reads: VerdictRead[] = [
      { ok: true, job: wallJob(1) },
      { ok: false, error: "busy", permanent: false },
      { ok: true, job: wallJob(3) },
      { ok: true, job: wallJob(5) },
    ];
    const seen: string[] = [];
    const poller = new VerdictPoller("a", {
      read: async () => reads.shift() ?? { ok: false, error: "none", permanent: true },
      timers: clock,
      now: () => clock.now,
      onJob: (job) => seen.push(job.status),
      onGiveUp: (m) => seen.push(`gave up: ${m}`),
    });
    poller.start();
    expect(clock.scheduled).toEqual([0]);
    await clock.runNext();
    expect(clock.scheduled).toEqual([VERDICT_POLL_INTERVAL_MS]);
    await clock.runNext();
    expect(clock.scheduled).toEqual([2_000]); // one failure: back off
    await clock.runNext();
    await clock.runNext();
    expect(seen).toEqual(["RUNNING", "RUNNING", "COMPLETE"]);
    expect(clock.scheduled).toEqual([]);
    expect(poller.running).toBe(false);
  });

  it("gives up at once on a permanent failure, and after a few transient ones", async () => {
    const clock = new Clock();
    const seen: string[] = [];
    const permanent = new VerdictPoller("a", {
      read: async () => ({ ok: false, error: "the server refused the request (NOT_FOUND)", permanent: true }),
      timers: clock,
      now: () => clock.now,
      onJob: () => seen.push("job"),
      onGiveUp: (m) => seen.push(m),
    });
    permanent.start();
    await clock.runNext();
    expect(seen).toEqual(["the server refused the request (NOT_FOUND)"]);
    expect(clock.scheduled).toEqual([]);

    const transient = new VerdictPoller("b", {
      read: async () => {
        throw new Error("network down");
      },
      timers: clock,
      now: () => clock.now,
      onJob: () => seen.push("job"),
      onGiveUp: (m) => seen.push(m),
    });
    transient.start();
    for (let i = 0; i < 6; i += 1) await clock.runNext();
    expect(seen.at(-1)).toBe("network down");
    expect(clock.scheduled).toEqual([]);
  });
});
