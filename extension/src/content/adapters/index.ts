// Adapter selection: URL first, then DOM fingerprints for pages on hosts the
// URL alone cannot place (Substack on a custom domain).

import { lesswrongAdapter } from "./lesswrong";
import type { PlatformAdapter } from "./model";
import { substackAdapter } from "./substack";
import { wikipediaAdapter } from "./wikipedia";
import { xAdapter } from "./x";

export const ADAPTERS: readonly PlatformAdapter[] = [lesswrongAdapter, xAdapter, substackAdapter, wikipediaAdapter];

export function adapterForUrl(url: string): PlatformAdapter | null {
  return ADAPTERS.find((adapter) => adapter.matches(url)) ?? null;
}

export function selectAdapter(url: string, document: Document): PlatformAdapter | null {
  return adapterForUrl(url) ?? ADAPTERS.find((adapter) => adapter.detectFromDom?.(document) === true) ?? null;
}

export type { AdapterExtractionResult, AdapterNotReadyReason, PlatformAdapter } from "./model";
