// Content script: finds the platform adapter for the page, waits until the
// post is readable, and reports it (or why it is skipped) to the background
// worker; then draws the claims the background sends back. Nothing is sent
// to the API from here.

import {
  isBackgroundMessage,
  MESSAGE_PROTOCOL_VERSION,
  type AppealFileResponse,
  type AppealGetResponse,
  type AppealMessage,
  type AppealStatesResponse,
  type BackgroundMessage,
  type ContentMessage,
  type VerdictGetResponse,
  type VerdictMessage,
  type VerdictStartResponse,
} from "../lib/messages";
import type { PlatformContent } from "../lib/platform";
import { skipReasonFor } from "../lib/skip";
import { realTimers } from "../lib/timers";
import type { VerdictRead } from "../lib/verdict-poller";
import { feedAdapterForUrl, selectAdapter, type AdapterNotReadyReason, type PlatformAdapter } from "./adapters";
import { AppealTracker, type AppealTransport } from "./annotate/appeal-tracker";
import { Annotator } from "./annotate/annotator";
import { FeedSession, type FeedTransport, type StartAnswer } from "./feed-session";

/** Quiet time after DOM changes before the Fact-check buttons are checked again. */
const FEED_SCAN_MS = 150;
const EXTENSION_GONE = "the extension was updated or reloaded; reload the page";

/** Verdict requests through the background worker (which holds the API client and its settings). */
const feedTransport: FeedTransport = {
  async start(content: PlatformContent): Promise<StartAnswer> {
    const message: VerdictMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "VERDICT_START", content };
    try {
      const response = (await chrome.runtime.sendMessage(message)) as VerdictStartResponse | undefined;
      if (response?.v !== MESSAGE_PROTOCOL_VERSION) return { ok: false, error: EXTENSION_GONE };
      return response.ok ? { ok: true, analysisId: response.analysisId } : { ok: false, error: response.error };
    } catch {
      return { ok: false, error: EXTENSION_GONE };
    }
  },
  async read(analysisId: string): Promise<VerdictRead> {
    const message: VerdictMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "VERDICT_GET", analysisId };
    try {
      const response = (await chrome.runtime.sendMessage(message)) as VerdictGetResponse | undefined;
      if (response?.v !== MESSAGE_PROTOCOL_VERSION) return { ok: false, error: EXTENSION_GONE, permanent: true };
      return response.ok ? { ok: true, job: response.job } : { ok: false, error: response.error, permanent: response.permanent };
    } catch {
      return { ok: false, error: EXTENSION_GONE, permanent: true };
    }
  },
};

/** Appeals through the background worker (which holds the API client and remembers each claim's appeal). */
const appealTransport: AppealTransport = {
  async file(input): Promise<AppealFileResponse> {
    const message: AppealMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "APPEAL_FILE", ...input };
    try {
      const response = (await chrome.runtime.sendMessage(message)) as AppealFileResponse | undefined;
      return response?.v === MESSAGE_PROTOCOL_VERSION ? response : { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: EXTENSION_GONE };
    } catch {
      return { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: EXTENSION_GONE };
    }
  },
  async read(claimId, appealId): Promise<AppealGetResponse> {
    const message: AppealMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "APPEAL_GET", claimId, appealId };
    try {
      const response = (await chrome.runtime.sendMessage(message)) as AppealGetResponse | undefined;
      return response?.v === MESSAGE_PROTOCOL_VERSION ? response : { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: EXTENSION_GONE, permanent: true };
    } catch {
      return { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: EXTENSION_GONE, permanent: true };
    }
  },
  async states(claimIds): Promise<AppealStatesResponse> {
    const message: AppealMessage = { v: MESSAGE_PROTOCOL_VERSION, type: "APPEAL_STATES", claimIds };
    const response = (await chrome.runtime.sendMessage(message)) as AppealStatesResponse | undefined;
    return response?.v === MESSAGE_PROTOCOL_VERSION && Array.isArray(response.records) ? response : { v: MESSAGE_PROTOCOL_VERSION, records: [] };
  },
};

/** How long a page may keep rendering before the content script gives up. */
const GIVE_UP_AFTER_MS = 20_000;
/** Quiet time after the last DOM change before trying again. */
const SETTLE_MS = 300;

declare global {
  // Guards against double injection (declarative rules plus the custom-domain probe).
  var __errataContentScript: boolean | undefined;
}

function send(message: ContentMessage): void {
  chrome.runtime.sendMessage(message).catch(() => {
    // The extension was reloaded or updated; this page's script is orphaned.
  });
}

class PageSession {
  private observer: MutationObserver | null = null;
  private settleTimer: ReturnType<typeof setTimeout> | null = null;
  private giveUpTimer: ReturnType<typeof setTimeout> | null = null;
  private lastReason: AdapterNotReadyReason = "hydrating";

  constructor(
    private readonly adapter: PlatformAdapter,
    private readonly url: string,
  ) {}

  start(): void {
    if (this.attempt()) return;
    this.observer = new MutationObserver(() => this.scheduleAttempt());
    this.observer.observe(document.documentElement, { childList: true, subtree: true, characterData: true });
    this.giveUpTimer = setTimeout(() => {
      this.stop();
      send({ v: MESSAGE_PROTOCOL_VERSION, type: "PAGE_UNAVAILABLE", platform: this.adapter.platformKey, url: this.url, reason: this.lastReason });
    }, GIVE_UP_AFTER_MS);
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = null;
    if (this.settleTimer !== null) clearTimeout(this.settleTimer);
    if (this.giveUpTimer !== null) clearTimeout(this.giveUpTimer);
    this.settleTimer = null;
    this.giveUpTimer = null;
  }

  private scheduleAttempt(): void {
    if (this.settleTimer !== null) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      if (this.attempt()) this.stop();
    }, SETTLE_MS);
  }

  /** One try at reading the page; true when it is settled (reported or skipped). */
  private attempt(): boolean {
    const platform = this.adapter.platformKey;
    if (this.adapter.detectPrivateOrGated?.(document) === true) {
      send({ v: MESSAGE_PROTOCOL_VERSION, type: "PAGE_SKIPPED", platform, url: this.url, reason: "private_or_gated" });
      return true;
    }
    const result = this.adapter.extract(document);
    if (result.kind === "not_ready") {
      if (result.reason === "unsupported") {
        send({ v: MESSAGE_PROTOCOL_VERSION, type: "PAGE_SKIPPED", platform, url: this.url, reason: "unsupported_content" });
        return true;
      }
      this.lastReason = result.reason;
      return false;
    }
    const skip = skipReasonFor(result.content);
    send(
      skip === null
        ? { v: MESSAGE_PROTOCOL_VERSION, type: "PAGE_CONTENT", content: result.content }
        : { v: MESSAGE_PROTOCOL_VERSION, type: "PAGE_SKIPPED", platform, url: this.url, reason: skip },
    );
    return true;
  }
}

let session: PageSession | null = null;
let feedSession: FeedSession | null = null;
let annotator: Annotator | null = null;
let appeals: AppealTracker | null = null;
let pageUrl = "";

function scan(): void {
  session?.stop();
  session = null;
  annotator?.clear();
  annotator = null;
  appeals?.stop();
  appeals = null;
  const url = location.href;
  pageUrl = url;
  // Bluesky and Threads: buttons on every post, for as long as the page lives (in-page navigations included).
  const feed = feedAdapterForUrl(url);
  if (feed !== null) {
    if (feedSession === null) {
      feedSession = new FeedSession(feed, document, {
        transport: feedTransport,
        timers: realTimers,
        now: () => Date.now(),
        schedule: (fn) => void setTimeout(fn, FEED_SCAN_MS),
      });
      feedSession.start(); // scans at once
    } else {
      feedSession.scan();
    }
    return;
  }
  const adapter = selectAdapter(url, document);
  if (adapter === null) return;
  const tracker = new AppealTracker({
    transport: appealTransport,
    timers: realTimers,
    onDecided(record) {
      if (record.status === "RETRACTED") annotator?.retract(record.claimId);
    },
  });
  appeals = tracker;
  annotator = new Annotator(adapter, document, {
    report(anchored, unanchored, withdrawn) {
      send({ v: MESSAGE_PROTOCOL_VERSION, type: "CLAIMS_ANCHORED", url, anchored, unanchored, withdrawn });
    },
    appeals: tracker,
  });
  session = new PageSession(adapter, url);
  session.start();
}

/** Handles a message from the background worker or the popup; the return value answers FOCUS_CLAIM. */
function handle(message: BackgroundMessage): boolean {
  switch (message.type) {
    case "RESCAN":
      scan();
      return true;
    case "SHOW_CLAIMS":
      // Claims for a page this document no longer shows (the URL changed meanwhile) are dropped.
      if (message.url !== pageUrl) return false;
      annotator?.setClaims(message.claims, message.visible);
      return true;
    case "SET_VISIBILITY":
      annotator?.setVisible(message.visible);
      return true;
    case "FOCUS_CLAIM":
      return annotator?.focus(message.claimId) ?? false;
  }
}

if (globalThis.__errataContentScript !== true) {
  globalThis.__errataContentScript = true;
  chrome.runtime.onMessage.addListener((message: unknown, _sender: unknown, sendResponse: (response: unknown) => void) => {
    if (!isBackgroundMessage(message)) return false;
    const result = handle(message);
    if (message.type === "FOCUS_CLAIM") sendResponse({ v: MESSAGE_PROTOCOL_VERSION, found: result });
    return false;
  });
  scan();
}
