// Background worker: wires the controller to the browser. Receives what
// content scripts read, runs the view path and investigations against the
// API, keeps per-tab state for the popup and the toolbar badge, and injects
// the content script into Substack posts on custom domains.
//
// Everything that must outlive a stopped MV3 service worker is in
// storage.session; listeners are registered synchronously at start-up so the
// events that wake the worker are delivered.

import { isAppealMessage, isContentMessage, isPopupMessage, isVerdictMessage, MESSAGE_PROTOCOL_VERSION } from "../lib/messages";
import type { GetTabStateResponse } from "../lib/messages";
import { FEED_PLATFORMS } from "../lib/platform";
import { loadSettings } from "../lib/settings";
import { badgeFor, type TabState } from "../lib/tab-state";
import { ApiClient } from "./api-client";
import { AppealService } from "./appeals";
import { BackgroundController, POLL_ALARM } from "./controller";
import { realTimers } from "../lib/timers";
import { ChromeStorageStore, sessionStore } from "./storage";
import { probeSubstackCustomDomain } from "./substack-injection";
import { TabStore } from "./tab-store";
import { readVerdict, startVerdict } from "./verdicts";

async function showBadge(tabId: number, state: TabState): Promise<void> {
  const badge = badgeFor(state);
  try {
    await chrome.action.setBadgeText({ tabId, text: badge.text });
    await chrome.action.setBadgeBackgroundColor({ tabId, color: badge.color });
    await chrome.action.setTitle({ tabId, title: badge.title });
  } catch {
    // The tab closed meanwhile.
  }
}

async function api(): Promise<ApiClient> {
  const settings = await loadSettings();
  return new ApiClient({
    baseUrl: settings.apiBaseUrl,
    extensionVersion: chrome.runtime.getManifest().version,
    apiKey: settings.apiKey,
    openaiApiKey: settings.openaiApiKey,
    hmacSecret: settings.hmacSecret,
  });
}

const store = sessionStore();
const controller = new BackgroundController({
  api,
  settings: loadSettings,
  tabs: new TabStore(store),
  store,
  alarms: {
    async start(name) {
      // 30 s is the shortest period Chrome honours; it only matters after the worker was stopped.
      if ((await chrome.alarms.get(name)) === undefined) await chrome.alarms.create(name, { periodInMinutes: 0.5 });
    },
    async stop(name) {
      await chrome.alarms.clear(name);
    },
  },
  timers: realTimers,
  now: () => Date.now(),
  showBadge,
  async sendToTab(tabId, message) {
    await chrome.tabs.sendMessage(tabId, message, { frameId: 0 });
  },
});

// Appeals are remembered on this device (storage.local) so a claim's card shows its appeal on the next visit.
const appeals = new AppealService(api, new ChromeStorageStore(chrome.storage.local), () => Date.now());

chrome.runtime.onMessage.addListener((message: unknown, sender, sendResponse) => {
  if (isContentMessage(message)) {
    const tabId = sender.tab?.id;
    if (tabId !== undefined && sender.frameId === 0) void controller.onContentMessage(tabId, message);
    return false;
  }
  if (isVerdictMessage(message)) {
    const answer = async (): Promise<void> => {
      switch (message.type) {
        case "VERDICT_START":
          // Only a Bluesky or Threads page's content script asks to register a post it shows.
          if (sender.tab?.id === undefined || !(FEED_PLATFORMS as readonly string[]).includes(message.content.platform)) {
            sendResponse({ v: MESSAGE_PROTOCOL_VERSION, ok: false, error: "only a Bluesky or Threads page asks for a post's verdict" });
            return;
          }
          sendResponse(await startVerdict(await api(), message.content));
          return;
        case "VERDICT_GET": {
          const read = await readVerdict(await api(), message.analysisId);
          if (message.tabId !== undefined) await controller.recordVerdict(message.tabId, message.analysisId, read);
          sendResponse(read);
          return;
        }
        case "VERDICT_FOR_TAB": {
          await controller.requestVerdict(message.tabId);
          const response: GetTabStateResponse = { v: MESSAGE_PROTOCOL_VERSION, state: await controller.getState(message.tabId) };
          sendResponse(response);
        }
      }
    };
    void answer();
    return true; // answered asynchronously
  }
  if (isAppealMessage(message)) {
    const answer = async (): Promise<void> => {
      switch (message.type) {
        case "APPEAL_FILE":
          sendResponse(await appeals.file(message));
          return;
        case "APPEAL_GET":
          sendResponse(await appeals.read(message.claimId, message.appealId));
          return;
        case "APPEAL_STATES":
          sendResponse(await appeals.states(message.claimIds));
      }
    };
    void answer();
    return true; // answered asynchronously
  }
  if (isPopupMessage(message)) {
    const answer = async (): Promise<void> => {
      if (message.type === "INVESTIGATE_NOW") void controller.investigate(message.tabId, { auto: false });
      if (message.type === "RECHECK") void controller.recheck(message.tabId);
      const response: GetTabStateResponse = { v: MESSAGE_PROTOCOL_VERSION, state: await controller.getState(message.tabId) };
      sendResponse(response);
    };
    void answer();
    return true; // answered asynchronously
  }
  return false;
});

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === POLL_ALARM) void controller.resumePolls();
});

// A new document in the tab: what was known about the previous page is gone.
chrome.webNavigation.onCommitted.addListener((details) => {
  if (details.frameId !== 0) return;
  void controller.onNavigated(details.tabId);
});

// Client-side navigation (X, LessWrong): ask the content script to read the page again.
chrome.webNavigation.onHistoryStateUpdated.addListener((details) => {
  if (details.frameId !== 0) return;
  void controller.onNavigated(details.tabId).then(() =>
    chrome.tabs.sendMessage(details.tabId, { v: MESSAGE_PROTOCOL_VERSION, type: "RESCAN" }, { frameId: 0 }).catch(() => {
      // No content script on this page.
    }),
  );
});

// Substack publications on their own domains cannot be listed in the manifest.
chrome.webNavigation.onCompleted.addListener((details) => {
  if (details.frameId !== 0) return;
  void probeSubstackCustomDomain(details.tabId, details.url);
});

chrome.tabs.onRemoved.addListener((tabId) => {
  void controller.onTabRemoved(tabId);
});

// The worker was (re)started: pick up polls a stopped worker left behind.
void controller.resumePolls();
