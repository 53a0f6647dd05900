// Per-tab state. A service worker can be stopped at any time, so the state is
// mirrored into storage.session (kept while the browser runs, cleared when it
// closes); memory is the fast path. Writes for one tab are serialized so that
// concurrent updates (a poll answer, an anchoring report) never lose each other.

import type { TabState } from "../lib/tab-state";
import type { KeyValueStore } from "./storage";

export const TAB_STATE_PREFIX = "tab:";
const key = (tabId: number): string => `${TAB_STATE_PREFIX}${tabId}`;

export class TabStore {
  private readonly states = new Map<number, TabState>();
  private readonly queues = new Map<number, Promise<unknown>>();

  constructor(private readonly store: KeyValueStore) {}

  async get(tabId: number): Promise<TabState> {
    const known = this.states.get(tabId);
    if (known !== undefined) return known;
    const state = await this.store.get<TabState>(key(tabId));
    if (state !== undefined && !this.states.has(tabId)) this.states.set(tabId, state);
    return this.states.get(tabId) ?? { kind: "idle" };
  }

  async set(tabId: number, state: TabState): Promise<void> {
    await this.update(tabId, () => state);
  }

  /**
   * Read-modify-write, one at a time per tab. The function returns the new
   * state, or null to leave the state as it is. Resolves to [before, after].
   */
  update(tabId: number, change: (state: TabState) => TabState | null): Promise<[TabState, TabState]> {
    const previous = this.queues.get(tabId) ?? Promise.resolve();
    const next = previous.then(async (): Promise<[TabState, TabState]> => {
      const before = await this.get(tabId);
      const after = change(before);
      if (after === null) return [before, before];
      this.states.set(tabId, after);
      await this.store.set(key(tabId), after);
      return [before, after];
    });
    const settled = next.catch(() => undefined);
    this.queues.set(tabId, settled);
    void settled.then(() => {
      if (this.queues.get(tabId) === settled) this.queues.delete(tabId);
    });
    return next;
  }

  async delete(tabId: number): Promise<void> {
    this.states.delete(tabId);
    await this.store.remove(key(tabId));
  }
}
