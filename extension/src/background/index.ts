// Background worker: receives what content scripts read, runs the view path
// against the API, keeps per-tab state for the popup and the toolbar badge,
// and injects the content script into Substack posts on custom domains.

import { isContentMessage, isPopupMessage, MESSAGE_PROTOCOL_VERSION } from "../lib/messages";
import type { BackgroundMessage, ContentMessage, GetTabStateResponse } from "../lib/messages";
import { loadSettings } from "../lib/settings";
import { badgeFor, type TabState } from "../lib/tab-state";
import { ApiClient } from "./api-client";
import { probeSubstackCustomDomain } from "./substack-injection";
import { TabStore } from "./tab-store";
import { runViewPath } from "./view-path";

const tabs = new TabStore();
/** The latest view-path run per tab; answers of older runs are dropped. */
const runs = new Map<number, number>();
let runCounter = 0;

async function apiClient(): Promise<ApiClient> {
  const settings = await loadSettings();
  return new ApiClient({
    baseUrl: settings.apiBaseUrl,
    extensionVersion: chrome.runtime.getManifest().version,
    apiKey: settings.apiKey,
    openaiApiKey: settings.openaiApiKey,
    hmacSecret: settings.hmacSecret,
  });
}

async function showState(tabId: number, state: TabState): Promise<void> {
  await tabs.set(tabId, state);
  const badge = badgeFor(state);
  try {
    await chrome.action.setBadgeText({ tabId, text: badge.text });
    await chrome.action.setBadgeBackgroundColor({ tabId, color: badge.color });
    await chrome.action.setTitle({ tabId, title: badge.title });
  } catch {
    // The tab closed meanwhile.
  }
}

async function handleContentMessage(tabId: number, message: ContentMessage): Promise<void> {
  const run = ++runCounter;
  runs.set(tabId, run);
  switch (message.type) {
    case "PAGE_SKIPPED":
      await showState(tabId, { kind: "skipped", platform: message.platform, url: message.url, reason: message.reason });
      return;
    case "PAGE_UNAVAILABLE":
      await showState(tabId, {
        kind: "unavailable",
        platform: message.platform,
        url: message.url,
        reason: message.reason,
      });
      return;
    case "PAGE_CONTENT": {
      const { content } = message;
      await showState(tabId, {
        kind: "registering",
        platform: content.platform,
        url: content.url,
        externalId: content.externalId,
      });
      const state = await runViewPath(await apiClient(), content);
      if (runs.get(tabId) === run) await showState(tabId, state);
      return;
    }
  }
}

chrome.runtime.onMessage.addListener((message: unknown, sender, sendResponse) => {
  if (isContentMessage(message)) {
    const tabId = sender.tab?.id;
    if (tabId !== undefined && sender.frameId === 0) void handleContentMessage(tabId, message);
    return false;
  }
  if (isPopupMessage(message)) {
    void tabs.get(message.tabId).then((state) => {
      const response: GetTabStateResponse = { v: MESSAGE_PROTOCOL_VERSION, state };
      sendResponse(response);
    });
    return true; // answered asynchronously
  }
  return false;
});

// A new document in the tab: what was known about the previous page is gone.
chrome.webNavigation.onCommitted.addListener((details) => {
  if (details.frameId !== 0) return;
  runs.delete(details.tabId);
  void showState(details.tabId, { kind: "idle" });
});

// Client-side navigation (X, LessWrong): ask the content script to read the page again.
chrome.webNavigation.onHistoryStateUpdated.addListener((details) => {
  if (details.frameId !== 0) return;
  runs.delete(details.tabId);
  void showState(details.tabId, { kind: "idle" });
  const rescan: BackgroundMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "RESCAN" };
  chrome.tabs.sendMessage(details.tabId, rescan, { frameId: 0 }).catch(() => {
    // No content script on this page.
  });
});

// Substack publications on their own domains cannot be listed in the manifest.
chrome.webNavigation.onCompleted.addListener((details) => {
  if (details.frameId !== 0) return;
  void probeSubstackCustomDomain(details.tabId, details.url);
});

chrome.tabs.onRemoved.addListener((tabId) => {
  runs.delete(tabId);
  void tabs.delete(tabId);
});
