// Popup: shows what the background worker knows about a tab's post and
// follows it live (the state lives in storage.session). The tab is the
// active one, or the one named by ?tabId= or ?url= (tests open the popup in
// a tab of its own).

import { MESSAGE_PROTOCOL_VERSION, type BackgroundMessage, type GetTabStateResponse, type PopupMessage } from "../lib/messages";
import { hasInvestigationCredentials, loadSettings, saveSettings } from "../lib/settings";
import { claimsToDraw, type TabState } from "../lib/tab-state";
import { renderState, stateName, type PopupContext } from "./render";

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

async function ask(message: PopupMessage): Promise<TabState | null> {
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
  };

  function show(state: TabState | null): void {
    if (state === null || target === null) return;
    current = state;
    target.dataset["state"] = stateName(state);
    target.replaceChildren(...renderState(ctx, state));
    if (footer !== null) footer.hidden = claimsToDraw(state).length === 0;
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
