// The background worker's logic, free of chrome.* so it can be tested:
// the view path per tab, Investigate Now (by the user or automatically with
// the user's own key), polling getInvestigation every 5 s until the
// investigation settles, and the per-tab state the popup, the badge and the
// content script's annotations follow.
//
// MV3 stops idle service workers. Polls are therefore persisted
// (storage.session, one record per tab) and an alarm wakes the worker while
// any poll is outstanding; on every start and every alarm the outstanding
// polls are resumed where they left off.

import type { Claim, InvestigateNowOutput, InvestigationResult } from "../lib/api-types";
import type { BackgroundMessage, ContentMessage, VerdictGetResponse } from "../lib/messages";
import { MESSAGE_PROTOCOL_VERSION } from "../lib/messages";
import type { PlatformContent } from "../lib/platform";
import { type Settings, shouldAutoInvestigate } from "../lib/settings";
import type { Timers } from "../lib/timers";
import { type PostStatus, type StatusState, type TabState, claimsToDraw } from "../lib/tab-state";
import { type ApiClient, UpgradeRequiredError } from "./api-client";
import { describeFailure, isPermanentFailure } from "./errors";
import type { KeyValueStore } from "./storage";
import type { TabStore } from "./tab-store";
import { describeVerdictFailure } from "./verdicts";
import { runViewPath } from "./view-path";

export const POLL_INTERVAL_MS = 5_000;
/** Polling gives up after this long; the popup offers to check again. */
export const MAX_POLL_DURATION_MS = 30 * 60_000;
/** Consecutive failed polls (network, 5xx, 429) tolerated before giving up. */
export const MAX_POLL_FAILURES = 8;
const MAX_BACKOFF_MS = 60_000;
export const POLL_ALARM = "errata-poll";
const POLL_PREFIX = "poll:";
const INVESTIGATION_PREFIX = "investigation:";
const VERDICT_PREFIX = "verdict:";

export type InvestigationApi = Pick<
  ApiClient,
  "registerObservedVersion" | "recordViewAndGetStatus" | "investigateNow" | "getInvestigation" | "verdictRequest"
>;

export interface PollRecord {
  tabId: number;
  investigationId: string;
  postVersionId: string;
  startedAt: number;
  nextAt: number;
  failures: number;
}

export type { Timers } from "../lib/timers";

export interface BackgroundDeps {
  api(): Promise<InvestigationApi>;
  settings(): Promise<Settings>;
  tabs: TabStore;
  /** Poll records and investigation ids (storage.session in the browser). */
  store: KeyValueStore;
  alarms: { start(name: string): Promise<void>; stop(name: string): Promise<void> };
  timers: Timers;
  now(): number;
  showBadge(tabId: number, state: TabState): Promise<void>;
  sendToTab(tabId: number, message: BackgroundMessage): Promise<void>;
}

/** A short human name for the post. */
export function postTitleOf(content: PlatformContent): string | undefined {
  switch (content.platform) {
    case "LESSWRONG":
      return content.metadata.title;
    case "SUBSTACK":
      return content.metadata.title;
    case "WIKIPEDIA":
      return content.metadata.displayTitle ?? content.metadata.title.replace(/_/g, " ");
    case "X":
      return `@${content.metadata.authorHandle}`;
    case "BLUESKY":
      return `@${content.metadata.handle}`;
    case "THREADS":
      return `@${content.metadata.username}`;
  }
}

function splitResult(result: InvestigationResult): { status: PostStatus; checkedAt?: string } {
  const { checkedAt, ...status } = result as InvestigationResult & { checkedAt?: string };
  return checkedAt === undefined ? { status: status as PostStatus } : { status: status as PostStatus, checkedAt };
}

function statusAfterInvestigateNow(output: InvestigateNowOutput, previous: PostStatus): PostStatus {
  switch (output.status) {
    case "COMPLETE":
      return { investigationState: "INVESTIGATED", provenance: output.provenance, claims: output.claims };
    case "FAILED":
      return { investigationState: "FAILED", provenance: output.provenance };
    case "PENDING":
    case "PROCESSING": {
      const prior =
        previous.investigationState === "NOT_INVESTIGATED" || previous.investigationState === "INVESTIGATING"
          ? previous.priorInvestigationResult
          : null;
      const sameRun = previous.investigationState === "INVESTIGATING";
      return {
        investigationState: "INVESTIGATING",
        status: output.status,
        provenance: output.provenance,
        pendingClaims: sameRun ? previous.pendingClaims : [],
        confirmedClaims: sameRun ? previous.confirmedClaims : [],
        priorInvestigationResult: prior,
      };
    }
  }
}

function isTerminal(status: PostStatus): boolean {
  return status.investigationState !== "INVESTIGATING";
}

function claimIds(claims: readonly Claim[]): string {
  return JSON.stringify(claims.map((c) => c.id));
}

/** The withdrawn claim ids a content script reported (an older one sends none): strings only, bounded. */
function idList(ids: unknown): string[] {
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string" && id.length <= 128).slice(0, 500) : [];
}

function withoutKeys<T extends object>(state: T, ...keys: Array<keyof T>): T {
  const copy = { ...state };
  for (const key of keys) delete copy[key];
  return copy;
}

export class BackgroundController {
  /** The latest view-path run per tab; answers of older runs are dropped. */
  private readonly runs = new Map<number, number>();
  private runCounter = 0;
  private readonly pollTimers = new Map<number, unknown>();
  private readonly pollsInFlight = new Set<number>();

  constructor(private readonly deps: BackgroundDeps) {}

  // ---- state -------------------------------------------------------------

  /** Applies a change to a tab's state, then updates the badge and the page's annotations. */
  private async mutate(tabId: number, change: (state: TabState) => TabState | null): Promise<TabState> {
    const [before, after] = await this.deps.tabs.update(tabId, change);
    if (before === after) return after;
    await this.deps.showBadge(tabId, after);
    const drawBefore = claimsToDraw(before);
    const drawAfter = claimsToDraw(after);
    const becameFinal = after.kind === "status" && after.status.investigationState === "INVESTIGATED" &&
      !(before.kind === "status" && before.status.investigationState === "INVESTIGATED");
    if (after.kind !== "idle" && (claimIds(drawBefore) !== claimIds(drawAfter) || becameFinal)) {
      const settings = await this.deps.settings();
      await this.deps
        .sendToTab(tabId, {
          v: MESSAGE_PROTOCOL_VERSION,
          type: "SHOW_CLAIMS",
          url: after.url,
          claims: drawAfter,
          visible: settings.showHighlights,
        })
        .catch(() => undefined);
    }
    return after;
  }

  /** Changes the state only while the tab still shows the same post version. */
  private mutateVersion(
    tabId: number,
    postVersionId: string,
    change: (state: StatusState) => TabState | null,
  ): Promise<TabState> {
    return this.mutate(tabId, (state) =>
      state.kind === "status" && state.postVersionId === postVersionId ? change(state) : null,
    );
  }

  getState(tabId: number): Promise<TabState> {
    return this.deps.tabs.get(tabId);
  }

  // ---- content script ------------------------------------------------------

  async onContentMessage(tabId: number, message: ContentMessage): Promise<void> {
    if (message.type === "CLAIMS_ANCHORED") {
      await this.mutate(tabId, (state) =>
        state.kind === "status" && state.url === message.url && state.status.investigationState === "INVESTIGATED"
          ? { ...state, anchoring: { anchored: message.anchored, unanchored: message.unanchored, withdrawn: idList(message.withdrawn) } }
          : null,
      );
      return;
    }
    const run = ++this.runCounter;
    this.runs.set(tabId, run);
    await this.stopPolling(tabId);
    switch (message.type) {
      case "PAGE_SKIPPED":
        await this.mutate(tabId, () => ({
          kind: "skipped",
          platform: message.platform,
          url: message.url,
          reason: message.reason,
        }));
        return;
      case "PAGE_UNAVAILABLE":
        await this.mutate(tabId, () => ({
          kind: "unavailable",
          platform: message.platform,
          url: message.url,
          reason: message.reason,
        }));
        return;
      case "PAGE_CONTENT":
        await this.viewPost(tabId, run, message.content);
        return;
    }
  }

  private async viewPost(tabId: number, run: number, content: PlatformContent): Promise<void> {
    const title = postTitleOf(content);
    const ref = { platform: content.platform, url: content.url, ...(title === undefined ? {} : { title }) };
    await this.mutate(tabId, () => ({ ...ref, kind: "registering", externalId: content.externalId }));
    const result = await runViewPath(await this.deps.api(), content);
    if (this.runs.get(tabId) !== run) return;
    let state: TabState = { ...result, ...(title === undefined ? {} : { title }) };
    if (state.kind !== "status") {
      const done = state;
      await this.mutate(tabId, () => done);
      return;
    }
    // A verdict asked for this version before (verdict.request is idempotent; its id is kept for the popup).
    const verdict = await this.deps.store.get<{ analysisId: string }>(VERDICT_PREFIX + state.postVersionId);
    if (verdict !== undefined) state = { ...state, verdict: { analysisId: verdict.analysisId } };
    const settings = await this.deps.settings();
    const status = state.status;
    if (status.investigationState === "INVESTIGATING") {
      const cached = await this.deps.store.get<{ investigationId: string }>(INVESTIGATION_PREFIX + state.postVersionId);
      if (cached !== undefined) {
        await this.mutate(tabId, () => ({ ...state, investigationId: cached.investigationId }));
        await this.startPolling(tabId, cached.investigationId, state.postVersionId);
        return;
      }
      await this.mutate(tabId, () => state);
      // investigateNow is idempotent: for a running investigation it only returns its id. It is
      // called without asking only when that cannot attach the user's key against their wishes.
      if (settings.apiKey.length > 0 || shouldAutoInvestigate(settings)) await this.investigate(tabId, { auto: true });
      return;
    }
    await this.mutate(tabId, () => state);
    if (status.investigationState === "NOT_INVESTIGATED" && shouldAutoInvestigate(settings)) {
      await this.investigate(tabId, { auto: true });
    }
  }

  // ---- investigate now ----------------------------------------------------

  /** investigateNow for the post version in the tab (the popup's button, Retry, or auto-investigate). */
  async investigate(tabId: number, options: { auto: boolean }): Promise<void> {
    let target: StatusState | null = null;
    await this.mutate(tabId, (state) => {
      if (state.kind !== "status" || state.requesting === true) return null;
      if (state.status.investigationState === "INVESTIGATED") return null;
      target = state;
      return {
        ...withoutKeys(state, "requestError"),
        requesting: true,
        ...(options.auto ? { autoInvestigated: true } : {}),
      };
    });
    const requested = target as StatusState | null;
    if (requested === null) return;
    const { postVersionId } = requested;

    let output: InvestigateNowOutput;
    try {
      output = await (await this.deps.api()).investigateNow({ postVersionId });
    } catch (error: unknown) {
      await this.mutateVersion(tabId, postVersionId, (state) => {
        if (error instanceof UpgradeRequiredError) {
          const minimumVersion = error.minimumSupportedExtensionVersion;
          return {
            kind: "error",
            platform: state.platform,
            url: state.url,
            ...(state.title === undefined ? {} : { title: state.title }),
            message: "this extension version is too old for the server",
            upgradeRequired: minimumVersion === undefined ? {} : { minimumVersion },
          };
        }
        return { ...withoutKeys(state, "requesting"), requestError: describeFailure(error) };
      });
      return;
    }
    await this.deps.store.set(INVESTIGATION_PREFIX + postVersionId, { investigationId: output.investigationId });
    const after = await this.mutateVersion(tabId, postVersionId, (state) => ({
      ...withoutKeys(state, "requesting", "requestError", "checkedAt", "anchoring"),
      investigationId: output.investigationId,
      status: statusAfterInvestigateNow(output, state.status),
    }));
    if (after.kind === "status" && after.postVersionId === postVersionId && !isTerminal(after.status)) {
      // The first status read comes at once (then every POLL_INTERVAL_MS): progress shows without a wait.
      await this.startPolling(tabId, output.investigationId, postVersionId, 0);
    }
  }

  /** The popup's "check again": poll now when an investigation is known, else read the page again. */
  async recheck(tabId: number): Promise<void> {
    const state = await this.deps.tabs.get(tabId);
    if (state.kind === "status" && state.investigationId !== undefined && !isTerminal(state.status)) {
      await this.mutate(tabId, (s) => (s.kind === "status" ? withoutKeys(s, "requestError") : null));
      await this.startPolling(tabId, state.investigationId, state.postVersionId, 0);
      return;
    }
    await this.deps.sendToTab(tabId, { v: MESSAGE_PROTOCOL_VERSION, type: "RESCAN" }).catch(() => undefined);
  }

  // ---- verdict for this post (the popup) ------------------------------------

  /** verdict.request for the post version in the tab. */
  async requestVerdict(tabId: number): Promise<void> {
    let target: StatusState | null = null;
    await this.mutate(tabId, (state) => {
      if (state.kind !== "status" || state.verdict?.requesting === true) return null;
      target = state;
      return { ...state, verdict: { requesting: true } };
    });
    const requested = target as StatusState | null;
    if (requested === null) return;
    const { platform, externalId, postVersionId } = requested;
    try {
      const output = await (await this.deps.api()).verdictRequest({ platform, externalId, postVersionId });
      await this.deps.store.set(VERDICT_PREFIX + postVersionId, { analysisId: output.analysisId });
      await this.mutateVersion(tabId, postVersionId, (state) => ({ ...state, verdict: { analysisId: output.analysisId } }));
    } catch (error: unknown) {
      await this.mutateVersion(tabId, postVersionId, (state) => ({ ...state, verdict: { error: describeVerdictFailure(error) } }));
    }
  }

  /** Records a verdict.get answer for the tab, when the tab still follows that analysis. */
  async recordVerdict(tabId: number, analysisId: string, read: VerdictGetResponse): Promise<void> {
    if (!read.ok) return;
    await this.mutate(tabId, (state) =>
      state.kind === "status" && state.verdict?.analysisId === analysisId && JSON.stringify(state.verdict.job) !== JSON.stringify(read.job)
        ? { ...state, verdict: { analysisId, job: read.job } }
        : null,
    );
  }

  // ---- polling ------------------------------------------------------------

  private pollKey(tabId: number): string {
    return `${POLL_PREFIX}${tabId}`;
  }

  async startPolling(tabId: number, investigationId: string, postVersionId: string, delay = POLL_INTERVAL_MS): Promise<void> {
    const now = this.deps.now();
    const existing = await this.deps.store.get<PollRecord>(this.pollKey(tabId));
    const record: PollRecord =
      existing !== undefined && existing.investigationId === investigationId && existing.postVersionId === postVersionId
        ? { ...existing, nextAt: now + delay, failures: 0, startedAt: delay === 0 ? now : existing.startedAt }
        : { tabId, investigationId, postVersionId, startedAt: now, nextAt: now + delay, failures: 0 };
    await this.deps.store.set(this.pollKey(tabId), record);
    await this.deps.alarms.start(POLL_ALARM);
    this.schedule(tabId, delay);
  }

  private schedule(tabId: number, delay: number): void {
    const existing = this.pollTimers.get(tabId);
    if (existing !== undefined) this.deps.timers.clear(existing);
    this.pollTimers.set(
      tabId,
      this.deps.timers.set(() => {
        this.pollTimers.delete(tabId);
        void this.pollOnce(tabId);
      }, Math.max(0, delay)),
    );
  }

  async stopPolling(tabId: number): Promise<void> {
    const timer = this.pollTimers.get(tabId);
    if (timer !== undefined) this.deps.timers.clear(timer);
    this.pollTimers.delete(tabId);
    await this.deps.store.remove(this.pollKey(tabId));
    if ((await this.deps.store.entries(POLL_PREFIX)).length === 0) await this.deps.alarms.stop(POLL_ALARM);
  }

  /** Resumes every persisted poll that has no live timer (worker start, alarm). */
  async resumePolls(): Promise<void> {
    const now = this.deps.now();
    const records = await this.deps.store.entries<PollRecord>(POLL_PREFIX);
    if (records.length === 0) {
      await this.deps.alarms.stop(POLL_ALARM);
      return;
    }
    for (const [, record] of records) {
      if (this.pollTimers.has(record.tabId) || this.pollsInFlight.has(record.tabId)) continue;
      this.schedule(record.tabId, Math.max(0, record.nextAt - now));
    }
  }

  /** One getInvestigation for a tab's outstanding poll. */
  async pollOnce(tabId: number): Promise<void> {
    if (this.pollsInFlight.has(tabId)) return;
    this.pollsInFlight.add(tabId);
    try {
      await this.poll(tabId);
    } finally {
      this.pollsInFlight.delete(tabId);
    }
  }

  private async poll(tabId: number): Promise<void> {
    const record = await this.deps.store.get<PollRecord>(this.pollKey(tabId));
    if (record === undefined) return;
    const state = await this.deps.tabs.get(tabId);
    if (state.kind !== "status" || state.postVersionId !== record.postVersionId) {
      await this.stopPolling(tabId);
      return;
    }
    const now = this.deps.now();
    if (now - record.startedAt > MAX_POLL_DURATION_MS) {
      await this.stopPolling(tabId);
      await this.mutateVersion(tabId, record.postVersionId, (s) => ({
        ...s,
        requestError: "the investigation is taking long; check again later",
      }));
      return;
    }
    let result: InvestigationResult;
    try {
      result = await (await this.deps.api()).getInvestigation({ investigationId: record.investigationId });
    } catch (error: unknown) {
      await this.pollFailed(tabId, record, error);
      return;
    }
    const { status, checkedAt } = splitResult(result);
    const after = await this.mutateVersion(tabId, record.postVersionId, (s) => ({
      ...withoutKeys(s, "requestError", "checkedAt"),
      status,
      investigationId: record.investigationId,
      ...(checkedAt === undefined ? {} : { checkedAt }),
    }));
    if (isTerminal(status) || after.kind !== "status" || after.postVersionId !== record.postVersionId) {
      await this.stopPolling(tabId);
      return;
    }
    // Still running: the record may have been replaced meanwhile (a newer investigateNow); keep the newest.
    const current = await this.deps.store.get<PollRecord>(this.pollKey(tabId));
    if (current === undefined || current.investigationId !== record.investigationId) return;
    await this.deps.store.set(this.pollKey(tabId), { ...current, failures: 0, nextAt: this.deps.now() + POLL_INTERVAL_MS });
    this.schedule(tabId, POLL_INTERVAL_MS);
  }

  private async pollFailed(tabId: number, record: PollRecord, error: unknown): Promise<void> {
    if (error instanceof UpgradeRequiredError) {
      await this.stopPolling(tabId);
      const minimumVersion = error.minimumSupportedExtensionVersion;
      await this.mutateVersion(tabId, record.postVersionId, (s) => ({
        kind: "error",
        platform: s.platform,
        url: s.url,
        ...(s.title === undefined ? {} : { title: s.title }),
        message: "this extension version is too old for the server",
        upgradeRequired: minimumVersion === undefined ? {} : { minimumVersion },
      }));
      return;
    }
    const failures = record.failures + 1;
    if (isPermanentFailure(error) || failures >= MAX_POLL_FAILURES) {
      await this.stopPolling(tabId);
      await this.mutateVersion(tabId, record.postVersionId, (s) => ({
        ...s,
        requestError: `lost track of the investigation: ${describeFailure(error)}`,
      }));
      return;
    }
    const delay = Math.min(MAX_BACKOFF_MS, POLL_INTERVAL_MS * 2 ** (failures - 1));
    await this.deps.store.set(this.pollKey(tabId), { ...record, failures, nextAt: this.deps.now() + delay });
    this.schedule(tabId, delay);
  }

  // ---- tabs ---------------------------------------------------------------

  /** A new document, or an in-page navigation, in the tab: the previous post is gone. */
  async onNavigated(tabId: number): Promise<void> {
    this.runs.delete(tabId);
    await this.stopPolling(tabId);
    await this.mutate(tabId, () => ({ kind: "idle" }));
  }

  async onTabRemoved(tabId: number): Promise<void> {
    this.runs.delete(tabId);
    await this.stopPolling(tabId);
    await this.deps.tabs.delete(tabId);
  }
}
