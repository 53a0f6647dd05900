// Per-tab state. A service worker can be stopped at any time, so the state is
// mirrored into storage.session (kept while the browser runs, cleared when it
// closes); memory is the fast path.

import type { TabState } from "../lib/tab-state";

const key = (tabId: number): string => `tab:${tabId}`;

export class TabStore {
  private readonly states = new Map<number, TabState>();

  async get(tabId: number): Promise<TabState> {
    const known = this.states.get(tabId);
    if (known !== undefined) return known;
    const stored = await chrome.storage.session?.get(key(tabId));
    const state = stored?.[key(tabId)] as TabState | undefined;
    if (state !== undefined) this.states.set(tabId, state);
    return state ?? { kind: "idle" };
  }

  async set(tabId: number, state: TabState): Promise<void> {
    this.states.set(tabId, state);
    await chrome.storage.session?.set({ [key(tabId)]: state });
  }

  async delete(tabId: number): Promise<void> {
    this.states.delete(tabId);
    await chrome.storage.session?.remove(key(tabId));
  }
}
