// The appeals of the claims on one page: what the background remembers
// about each claim's appeal, filing a new one, and following an open one
// (appeal.get after growing delays, bounded; then "check again") until it
// is decided. Everything goes through the background worker, which holds
// the API client; the claim panel renders the state and listens for changes.

import { type AppealInput, type AppealRecord, appealPollDelay } from "../../lib/appeals";
import type { AppealFileResponse, AppealGetResponse, AppealStatesResponse } from "../../lib/messages";
import type { Timers } from "../../lib/timers";

export interface AppealTransport {
  file(input: AppealInput): Promise<AppealFileResponse>;
  read(claimId: string, appealId: string): Promise<AppealGetResponse>;
  states(claimIds: string[]): Promise<AppealStatesResponse>;
}

export interface ClaimAppealState {
  record: AppealRecord;
  /** A read is scheduled or running. */
  following: boolean;
  /** Why following stopped before a decision (worded for the user), if it did. */
  note: string | null;
}

export interface AppealTrackerDeps {
  transport: AppealTransport;
  timers: Timers;
  /** An appeal of a claim on this page was decided (told once per claim and outcome). */
  onDecided(record: AppealRecord): void;
}

export type FileResult = { ok: true } | { ok: false; error: string };

const GAVE_UP = "Still under review. Check again later.";

export class AppealTracker {
  private readonly states = new Map<string, ClaimAppealState>();
  private readonly timers = new Map<string, { handle: unknown; attempt: number }>();
  private readonly listeners = new Set<(claimId: string) => void>();
  private readonly told = new Set<string>();
  private stopped = false;

  constructor(private readonly deps: AppealTrackerDeps) {}

  /** Listens for changes of any claim's appeal; returns the unsubscribe function. */
  subscribe(listener: (claimId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(claimId: string): ClaimAppealState | undefined {
    return this.states.get(claimId);
  }

  /** Reads what the background remembers about these claims; open appeals are followed again. */
  async load(claimIds: readonly string[]): Promise<void> {
    const wanted = claimIds.filter((id) => !this.states.has(id));
    if (wanted.length === 0) return;
    const answer = await this.deps.transport.states(wanted);
    for (const record of answer.records) {
      if (!wanted.includes(record.claimId) || this.states.has(record.claimId)) continue;
      this.update(record);
    }
  }

  /** Files an appeal; on success the claim's state is its appeal, followed until decided. */
  async file(input: AppealInput): Promise<FileResult> {
    const answer = await this.deps.transport.file(input);
    if (!answer.ok) return { ok: false, error: answer.error };
    this.update(answer.record);
    return { ok: true };
  }

  /** Reads an open appeal again at once and follows it anew (the user's "Check again"). */
  checkAgain(claimId: string): void {
    const state = this.states.get(claimId);
    if (state === undefined || state.record.status !== "OPEN") return;
    this.cancel(claimId);
    this.states.set(claimId, { ...state, following: true, note: null });
    this.notify(claimId);
    this.schedule(claimId, 0, 0);
  }

  /** Stops every timer (the page changed). */
  stop(): void {
    this.stopped = true;
    for (const claimId of [...this.timers.keys()]) this.cancel(claimId);
  }

  private update(record: AppealRecord): void {
    const claimId = record.claimId;
    const open = record.status === "OPEN";
    this.states.set(claimId, { record, following: open, note: null });
    if (open && !this.timers.has(claimId)) this.schedule(claimId, 0, appealPollDelay(0) ?? 0);
    if (!open) {
      this.cancel(claimId);
      const key = `${claimId}:${record.status}`;
      if (!this.told.has(key)) {
        this.told.add(key);
        this.deps.onDecided(record);
      }
    }
    this.notify(claimId);
  }

  private schedule(claimId: string, attempt: number, ms: number): void {
    if (this.stopped) return;
    const handle = this.deps.timers.set(() => void this.poll(claimId, attempt), ms);
    this.timers.set(claimId, { handle, attempt });
  }

  private async poll(claimId: string, attempt: number): Promise<void> {
    const state = this.states.get(claimId);
    if (state === undefined || this.stopped) return;
    const answer = await this.deps.transport.read(claimId, state.record.appealId);
    if (this.stopped || this.timers.get(claimId)?.attempt !== attempt) return; // stopped or restarted meanwhile
    this.timers.delete(claimId);
    if (answer.ok) {
      if (answer.record.status !== "OPEN") {
        this.update(answer.record);
        return;
      }
      this.states.set(claimId, { record: answer.record, following: true, note: null });
    } else if (answer.permanent) {
      this.states.set(claimId, { record: state.record, following: false, note: answer.error });
      this.notify(claimId);
      return;
    }
    const next = appealPollDelay(attempt + 1);
    if (next === null) {
      this.states.set(claimId, { record: this.states.get(claimId)?.record ?? state.record, following: false, note: GAVE_UP });
      this.notify(claimId);
      return;
    }
    this.schedule(claimId, attempt + 1, next);
    this.notify(claimId);
  }

  private cancel(claimId: string): void {
    const timer = this.timers.get(claimId);
    if (timer !== undefined) this.deps.timers.clear(timer.handle);
    this.timers.delete(claimId);
  }

  private notify(claimId: string): void {
    for (const listener of [...this.listeners]) listener(claimId);
  }
}
