// Follows one verdict analysis: asks for its job at once, then every second
// until it is COMPLETE or FAILED (the progress card shows each query as it
// happens). Failed reads back off and give up after a few; a read the
// server refuses for good (a 4xx) gives up at once. Used by the progress
// card on Bluesky and Threads and by the popup; the reads go through the
// background worker, which holds the API client.

import { type VerdictJob, isSettled } from "./api-types";
import type { Timers } from "./timers";

export const VERDICT_POLL_INTERVAL_MS = 1_000;
/** Consecutive failed reads tolerated before giving up. */
export const VERDICT_MAX_FAILURES = 6;
/** Following an analysis stops after this long; the user can try again. */
export const VERDICT_MAX_DURATION_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 16_000;

export type VerdictRead = { ok: true; job: VerdictJob } | { ok: false; error: string; permanent: boolean };

export interface VerdictPollerDeps {
  read(analysisId: string): Promise<VerdictRead>;
  timers: Timers;
  now(): number;
  /** Every job read (including the settled one). */
  onJob(job: VerdictJob): void;
  /** Polling gave up; message is worded for the user. */
  onGiveUp(message: string): void;
}

export class VerdictPoller {
  private timer: unknown = null;
  private failures = 0;
  private stopped = false;
  private readonly startedAt: number;

  constructor(
    readonly analysisId: string,
    private readonly deps: VerdictPollerDeps,
  ) {
    this.startedAt = deps.now();
  }

  /** The first read is at once. */
  start(): void {
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.deps.timers.clear(this.timer);
    this.timer = null;
  }

  get running(): boolean {
    return !this.stopped;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.deps.timers.set(() => {
      this.timer = null;
      void this.tick();
    }, ms);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.deps.now() - this.startedAt > VERDICT_MAX_DURATION_MS) {
      this.stop();
      this.deps.onGiveUp("the fact-check is taking long; try again later");
      return;
    }
    let read: VerdictRead;
    try {
      read = await this.deps.read(this.analysisId);
    } catch (error: unknown) {
      read = { ok: false, error: error instanceof Error ? error.message : String(error), permanent: false };
    }
    if (this.stopped) return;
    if (read.ok) {
      this.failures = 0;
      this.deps.onJob(read.job);
      if (isSettled(read.job)) this.stop();
      else this.schedule(VERDICT_POLL_INTERVAL_MS);
      return;
    }
    this.failures += 1;
    if (read.permanent || this.failures >= VERDICT_MAX_FAILURES) {
      this.stop();
      this.deps.onGiveUp(read.error);
      return;
    }
    this.schedule(Math.min(MAX_BACKOFF_MS, VERDICT_POLL_INTERVAL_MS * 2 ** this.failures));
  }
}
