// Adapter selection: URL first, then DOM fingerprints for pages on hosts the
// URL alone cannot place (Substack on a custom domain). Bluesky and Threads
// pages, which show many posts each, have feed adapters instead.

import { blueskyAdapter } from "./bluesky";
import type { FeedAdapter } from "./feed-model";
import { lesswrongAdapter } from "./lesswrong";
import type { PlatformAdapter } from "./model";
import { substackAdapter } from "./substack";
import { threadsAdapter } from "./threads";
import { wikipediaAdapter } from "./wikipedia";
import { xAdapter } from "./x";

export const ADAPTERS: readonly PlatformAdapter[] = [lesswrongAdapter, xAdapter, substackAdapter, wikipediaAdapter];

export const FEED_ADAPTERS: readonly FeedAdapter[] = [blueskyAdapter, threadsAdapter];

export function feedAdapterForUrl(url: string): FeedAdapter | null {
  return FEED_ADAPTERS.find((adapter) => adapter.matches(url)) ?? null;
}

export function adapterForUrl(url: string): PlatformAdapter | null {
  return ADAPTERS.find((adapter) => adapter.matches(url)) ?? null;
}

export function selectAdapter(url: string, document: Document): PlatformAdapter | null {
  return adapterForUrl(url) ?? ADAPTERS.find((adapter) => adapter.detectFromDom?.(document) === true) ?? null;
}

export type { AdapterExtractionResult, AdapterNotReadyReason, PlatformAdapter } from "./model";
export type { FeedAdapter } from "./feed-model";
