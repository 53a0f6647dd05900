// Popup: shows what the background worker knows about a tab's post and
// follows it live (the state lives in storage.session). The tab is the
// active one, or the one named by ?tabId= or ?url= (tests open the popup in
// a tab of its own).

import { isSettled } from "../lib/api-types";
import {
  MESSAGE_PROTOCOL_VERSION,
  type BackgroundMessage,
  type GetTabStateResponse,
  type PopupMessage,
  type VerdictGetResponse,
  type VerdictMessage,
} from "../lib/messages";
import { hasInvestigationCredentials, loadSettings, saveSettings } from "../lib/settings";
import { claimsToDraw, type TabState } from "../lib/tab-state";
import { realTimers } from "../lib/timers";
import { type VerdictRead, VerdictPoller } from "../lib/verdict-poller";
import { VERDICT_STYLES } from "../ui/verdict-view";
import { renderState, stateName, type PopupContext } from "./render";

/** The feed sites (their posts carry Fact-check buttons) by host. */
function feedSiteOf(url: string | undefined): string | undefined {
  try {
    const host = new URL(url ?? "").hostname.toLowerCase();
    if (host === "bsky.app" || host === "www.bsky.app") return "Bluesky";
    if (/^(?:www\.)?threads\.(?:net|com)$/.test(host)) return "Threads";
  } catch {
    // no URL
  }
  return undefined;
}

async function verdictRead(analysisId: string, tabId: number): Promise<VerdictRead> {
  const message: VerdictMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "VERDICT_GET", analysisId, tabId };
  const response = (await chrome.runtime.sendMessage(message)) as VerdictGetResponse | undefined;
  if (response?.v !== MESSAGE_PROTOCOL_VERSION) return { ok: false, error: "the extension did not answer", permanent: false };
  return response.ok ? { ok: true, job: response.job } : { ok: false, error: response.error, permanent: response.permanent };
}

async function targetTabId(): Promise<number | undefined> {
  const params = new URLSearchParams(location.search);
  const fromQuery = Number(params.get("tabId"));
  if (Number.isInteger(fromQuery) && fromQuery > 0) return fromQuery;
  const url = params.get("url");
  if (url !== null) {
    const tabs = await chrome.tabs.query({});
    return tabs.find((t) => t.url === url)?.id;
  }
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab?.id;
}

async function ask(message: PopupMessage | VerdictMessage): Promise<TabState | null> {
  try {
    const response = (await chrome.runtime.sendMessage(message)) as GetTabStateResponse | undefined;
    return response?.v === MESSAGE_PROTOCOL_VERSION ? response.state : null;
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  const openOptions = (): void => void chrome.runtime.openOptionsPage();
  document.getElementById("open-options")?.addEventListener("click", (event) => {
    event.preventDefault();
    openOptions();
  });
  const target = document.getElementById("state");
  const footer = document.getElementById("footer");
  const toggle = document.getElementById("show-highlights");
  if (target === null) return;
  const tabId = await targetTabId();
  let settings = await loadSettings();
  let current: TabState = { kind: "idle" };
  let verdictPoller: VerdictPoller | null = null;
  const style = document.createElement("style");
  style.textContent = VERDICT_STYLES;
  document.head.append(style);
  const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
  let feedSite: string | undefined;
  if (tabId !== undefined) {
    try {
      feedSite = feedSiteOf((await chrome.tabs.get(tabId)).url);
    } catch {
      // the tab is gone
    }
  }

  const ctx: PopupContext = {
    doc: document,
    hasCredentials: hasInvestigationCredentials(settings),
    onInvestigate: () => {
      if (tabId !== undefined) void ask({ v: MESSAGE_PROTOCOL_VERSION, type: "INVESTIGATE_NOW", tabId }).then(show);
    },
    onRecheck: () => {
      if (tabId !== undefined) void ask({ v: MESSAGE_PROTOCOL_VERSION, type: "RECHECK", tabId }).then(show);
    },
    onFocusClaim: (claimId) => {
      if (tabId === undefined) return;
      const message: BackgroundMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "FOCUS_CLAIM", claimId };
      chrome.tabs.sendMessage(tabId, message, { frameId: 0 }).catch(() => undefined);
    },
    onOpenSettings: openOptions,
    onVerdict: () => {
      if (tabId === undefined) return;
      delete ctx.verdictError;
      verdictPoller?.stop();
      verdictPoller = null;
      void ask({ v: MESSAGE_PROTOCOL_VERSION, type: "VERDICT_FOR_TAB", tabId }).then(show);
    },
    ...(feedSite === undefined ? {} : { feedSite }),
  };

  /** Follows the tab's verdict analysis (the first read at once, then every second) until it settles. */
  function followVerdict(state: TabState): void {
    const verdict = state.kind === "status" ? state.verdict : undefined;
    const id = verdict?.analysisId;
    if (tabId === undefined || id === undefined || (verdict?.job !== undefined && isSettled(verdict.job))) return;
    if (verdictPoller?.analysisId === id && (verdictPoller.running || ctx.verdictError !== undefined)) return;
    verdictPoller?.stop();
    const refresh = (): void => void ask({ v: MESSAGE_PROTOCOL_VERSION, type: "GET_TAB_STATE", tabId }).then(show);
    verdictPoller = new VerdictPoller(id, {
      read: (analysisId) => verdictRead(analysisId, tabId),
      timers: realTimers,
      now: () => Date.now(),
      onJob: refresh,
      onGiveUp: (message) => {
        ctx.verdictError = message;
        show(current);
      },
    });
    verdictPoller.start();
  }

  function show(state: TabState | null): void {
    if (state === null || target === null) return;
    current = state;
    target.dataset["state"] = stateName(state);
    target.replaceChildren(...renderState(ctx, state));
    target.querySelector("#verdict")?.classList.add(dark ? "ev-theme-dark" : "ev-theme-light");
    if (footer !== null) footer.hidden = claimsToDraw(state).length === 0;
    followVerdict(state);
  }

  if (toggle instanceof HTMLInputElement) {
    toggle.checked = settings.showHighlights;
    toggle.addEventListener("change", () => {
      settings = { ...settings, showHighlights: toggle.checked };
      void saveSettings(settings);
      if (tabId === undefined) return;
      const message: BackgroundMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "SET_VISIBILITY", visible: toggle.checked };
      chrome.tabs.sendMessage(tabId, message, { frameId: 0 }).catch(() => undefined);
    });
  }

  if (tabId === undefined) {
    show({ kind: "idle" });
    return;
  }
  // Live updates: the background writes each tab's state to storage.session.
  chrome.storage.onChanged.addListener((changes, area) => {
    const change = changes[`tab:${tabId}`];
    if (area === "session" && change?.newValue !== undefined) show(change.newValue as TabState);
    if (area === "local" && changes["settings"] !== undefined) {
      void loadSettings().then((s) => {
        settings = s;
        ctx.hasCredentials = hasInvestigationCredentials(s);
        show(current);
      });
    }
  });
  show(await ask({ v: MESSAGE_PROTOCOL_VERSION, type: "GET_TAB_STATE", tabId }));
  // A slow fallback in case storage change events are not delivered to this page.
  setInterval(() => void ask({ v: MESSAGE_PROTOCOL_VERSION, type: "GET_TAB_STATE", tabId }).then((s) => {
    if (s !== null && JSON.stringify(s) !== JSON.stringify(current)) show(s);
  }), 2000);
}

void main();
