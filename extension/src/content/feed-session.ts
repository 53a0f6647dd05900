// Bluesky and Threads pages: one Fact-check button per post, in feeds,
// threads and post pages, kept through infinite scroll and re-renders by a
// MutationObserver. Each scan is idempotent: a post that already holds its
// button keeps it, a post that lost it (re-rendered) gets it back, a post
// holding more than one (never ours, but a page could clone it) is brought
// back to one. A click reads the post, has the background worker register
// it and request its verdict analysis, and shows the progress card under the
// post at once; the card follows the analysis every second until the
// verdict. Cards are kept per post identity, so a post that is re-rendered
// (or scrolled away and back) gets its card back.

import type { PlatformContent } from "../lib/platform";
import type { Timers } from "../lib/timers";
import { type VerdictRead, VerdictPoller } from "../lib/verdict-poller";
import type { FeedAdapter, Theme } from "./adapters/feed-model";
import { BUTTON_TAG, CARD_TAG, FactCheckButton, VerdictCard } from "./verdict/card";
import { detectTheme } from "./verdict/theme";

export type StartAnswer = { ok: true; analysisId: string } | { ok: false; error: string };

/** How the session reaches the API (through the background worker in the browser). */
export interface FeedTransport {
  start(content: PlatformContent): Promise<StartAnswer>;
  read(analysisId: string): Promise<VerdictRead>;
}

export interface FeedSessionDeps {
  transport: FeedTransport;
  timers: Timers;
  now(): number;
  /** Runs a scan soon after DOM changes (debounced by the session: one pending scan at a time). */
  schedule(fn: () => void): void;
}

/** Marks a post container the session has seen; its value is the post's identity then ("" when it showed none). */
export const POST_MARK = "data-errata-post";

const WORDS: Record<string, string> = {
  hydrating: "the post is still loading",
  missing_identity: "the page does not show which post this is",
  ambiguous_dom: "the page is ambiguous",
  unsupported: "this kind of post is not supported",
};

type Phase = "new" | "running" | "settled" | "error";

/** One post's fact-check: its card and the analysis it follows. */
class PostCheck {
  readonly card: VerdictCard;
  phase: Phase = "new";
  private poller: VerdictPoller | null = null;
  private run = 0;

  constructor(
    private readonly session: FeedSession,
    public post: Element,
  ) {
    this.card = new VerdictCard(post.ownerDocument, {
      onClose: () => {
        this.card.host.hidden = true;
      },
      onRetry: () => void this.start(),
    });
  }

  private enter(phase: Phase): void {
    this.phase = phase;
    this.session.setBusy(this.post, phase === "running");
  }

  private fail(message: string): void {
    this.card.show({ kind: "error", message });
    this.enter("error");
  }

  async start(): Promise<void> {
    const run = ++this.run;
    this.poller?.stop();
    this.poller = null;
    this.card.host.hidden = false;
    this.card.show({ kind: "starting" });
    this.enter("running");
    const result = this.session.adapter.extract(this.post, this.post.ownerDocument);
    if (result.kind !== "ready") {
      this.fail(WORDS[result.reason] ?? result.reason);
      return;
    }
    if (result.content.contentText.length === 0) {
      this.fail("the post has no text to check");
      return;
    }
    let answer: StartAnswer;
    try {
      answer = await this.session.deps.transport.start(result.content);
    } catch (error: unknown) {
      answer = { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    if (run !== this.run) return;
    if (!answer.ok) {
      this.fail(answer.error);
      return;
    }
    this.card.host.dataset["analysisId"] = answer.analysisId;
    this.card.show({ kind: "following", job: null });
    const poller = new VerdictPoller(answer.analysisId, {
      read: (id) => this.session.deps.transport.read(id),
      timers: this.session.deps.timers,
      now: () => this.session.deps.now(),
      onJob: (job) => {
        if (run !== this.run) return;
        this.card.show({ kind: "following", job });
        if (job.status === "COMPLETE" || job.status === "FAILED") this.enter("settled");
      },
      onGiveUp: (message) => {
        if (run === this.run) this.fail(message);
      },
    });
    this.poller = poller;
    poller.start();
  }

  stop(): void {
    this.run += 1;
    this.poller?.stop();
    this.poller = null;
  }
}

export class FeedSession {
  private observer: MutationObserver | null = null;
  private themeObserver: MutationObserver | null = null;
  private scanPending = false;
  /** Checks by post identity (externalId); posts without one yet are keyed by their element. */
  private readonly checks = new Map<string, PostCheck>();
  private readonly anonymous = new WeakMap<Element, PostCheck>();
  private readonly buttons = new WeakMap<Element, FactCheckButton>();

  constructor(
    readonly adapter: FeedAdapter,
    private readonly doc: Document,
    readonly deps: FeedSessionDeps,
  ) {}

  start(): void {
    if (this.observer !== null) return;
    const win = this.doc.defaultView;
    if (win === null) return;
    this.observer = new win.MutationObserver((records) => {
      if (records.every((r) => this.onlyOurs(r))) return;
      this.requestScan();
    });
    this.observer.observe(this.doc.documentElement, { childList: true, subtree: true });
    // The site's theme switch changes the class or style of <html> or <body> (a second observer: one
    // observer keeps one set of options per node).
    this.themeObserver = new win.MutationObserver(() => this.requestScan());
    this.themeObserver.observe(this.doc.documentElement, { attributes: true, attributeFilter: ["class", "style"] });
    if (this.doc.body !== null) this.themeObserver.observe(this.doc.body, { attributes: true, attributeFilter: ["class", "style"] });
    this.scan();
  }

  stop(): void {
    this.observer?.disconnect();
    this.observer = null;
    this.themeObserver?.disconnect();
    this.themeObserver = null;
    for (const check of this.checks.values()) check.stop();
  }

  /** Whether a mutation only added or removed our own elements (our insertions must not trigger another scan). */
  private onlyOurs(record: MutationRecord): boolean {
    if (record.type !== "childList") return false;
    const ours = (node: Node): boolean => node.nodeName === BUTTON_TAG.toUpperCase() || node.nodeName === CARD_TAG.toUpperCase();
    return Array.from(record.addedNodes).every(ours) && Array.from(record.removedNodes).every(ours);
  }

  private requestScan(): void {
    if (this.scanPending) return;
    this.scanPending = true;
    this.deps.schedule(() => {
      this.scanPending = false;
      this.scan();
    });
  }

  /**
   * Gives every post on the page exactly one button, and its card back when
   * it had one. Idempotent, and cheap when nothing changed: a post's
   * identity is read once, when the post (its element) is first seen, and
   * again only while a card waits for its re-rendered post.
   */
  scan(): void {
    const started = performance.now();
    const siteTheme = this.adapter.siteTheme(this.doc);
    // Buttons take the page's theme (computed once); a card looks behind its own post.
    const pageTheme = siteTheme ?? detectTheme(this.doc, null, null);
    const waiting = [...this.checks.values()].some((check) => !check.card.host.isConnected);
    const posts = this.adapter.findPosts(this.doc);
    for (const post of posts) {
      let key = post.getAttribute(POST_MARK);
      if (key === null) {
        key = this.adapter.identify(post, this.doc)?.externalId ?? "";
        post.setAttribute(POST_MARK, key);
      }
      this.ensureButton(post, pageTheme);
      const check = key === "" ? undefined : this.checks.get(key);
      // A re-rendered post: the card comes back (unless it still shows under another copy of the post).
      if (waiting && check !== undefined && !check.card.host.isConnected) {
        check.post = post;
        post.append(check.card.host);
      }
    }
    for (const check of this.checks.values()) {
      if (check.card.host.isConnected) check.card.setTheme(siteTheme ?? detectTheme(this.doc, check.post, null));
    }
    try {
      performance.measure("errata:feed-scan", { start: started, end: performance.now(), detail: { posts: posts.length } });
    } catch {
      // User Timing with details is missing in very old engines; diagnostics only.
    }
  }

  private ensureButton(post: Element, theme: Theme): void {
    // A live collection: the common case (one button, ours) costs a length and a lookup.
    const mine = post.getElementsByTagName(BUTTON_TAG);
    const first = mine[0];
    const known = first === undefined ? undefined : this.buttons.get(first);
    if (mine.length === 1 && known !== undefined) {
      known.setTheme(theme);
      return;
    }
    for (const extra of Array.from(mine).slice(1)) extra.remove();
    if (first !== undefined && known !== undefined) {
      known.setTheme(theme);
      return;
    }
    first?.remove(); // not one of ours (a copy): replace it
    const button = new FactCheckButton(this.doc, () => void this.check(post));
    button.setTheme(theme);
    this.buttons.set(button.host, button);
    const row = this.adapter.actionRow(post);
    (row ?? post).append(button.host);
  }

  /** Shows on the post's button whether its check runs. */
  setBusy(post: Element, busy: boolean): void {
    const host = post.getElementsByTagName(BUTTON_TAG)[0];
    if (host !== undefined) this.buttons.get(host)?.setBusy(busy);
  }

  /** The button's click: show the post's card (starting its check when it has none, or after an error). */
  async check(post: Element): Promise<void> {
    const identity = this.adapter.identify(post, this.doc);
    let check = identity === null ? this.anonymous.get(post) : this.checks.get(identity.externalId);
    if (check === undefined) {
      check = new PostCheck(this, post);
      if (identity === null) this.anonymous.set(post, check);
      else this.checks.set(identity.externalId, check);
    }
    check.post = post;
    if (check.card.host.parentElement !== post) post.append(check.card.host);
    check.card.setTheme(this.adapter.siteTheme(this.doc) ?? detectTheme(this.doc, post, null));
    if (check.phase === "new" || check.phase === "error") {
      await check.start();
      return;
    }
    // Running or settled: the card again (it may have been closed).
    check.card.host.hidden = false;
  }
}
