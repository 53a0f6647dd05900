// MediaWiki page configuration (wgArticleId, wgRevisionId, ...). Content
// scripts run in an isolated world and cannot see the page's `mw` global, so
// the values are read from the inline script that declares them
// (`RLCONF={...}` on current skins, `mw.config.set({...})` on older ones).
// A `mw.config.get` reachable from the document's window (tests, or a page
// context) is preferred when present.

import { isRecord } from "./dom-utils";

export type MwConfig = Readonly<Record<string, unknown>>;

interface MwWindow {
  mw?: { config?: { get?: (key: string) => unknown } };
}

const KEYS = [
  "wgArticleId",
  "wgRevisionId",
  "wgCurRevisionId",
  "wgNamespaceNumber",
  "wgPageName",
  "wgTitle",
  "wgAction",
  "wgIsArticle",
  "wgRevisionTimestamp",
] as const;

/**
 * The JSON object literal that starts at text[start] ("{"), found by
 * matching braces outside strings; null when unbalanced.
 */
function balancedObject(text: string, start: number): string | null {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") depth += 1;
    else if (c === "}") {
      depth -= 1;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return null;
}

// MediaWiki minifies booleans in some inline config as !0 / !1; JSON does not allow them.
function parseConfigObject(literal: string): Record<string, unknown> | null {
  for (const candidate of [literal, literal.replace(/:\s*!0\b/g, ":true").replace(/:\s*!1\b/g, ":false")]) {
    try {
      const parsed = JSON.parse(candidate) as unknown;
      if (isRecord(parsed)) return parsed;
    } catch {
      // try the next form
    }
  }
  return null;
}

const DECLARATIONS = [/RLCONF\s*=\s*\{/g, /mw\.config\.set\(\s*\{/g];

/** Every config object declared by inline scripts, merged in document order. */
export function readInlineMwConfig(document: Document): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const script of Array.from(document.querySelectorAll("script:not([src])"))) {
    const text = script.textContent ?? "";
    if (!text.includes("RLCONF") && !text.includes("mw.config.set")) continue;
    for (const pattern of DECLARATIONS) {
      pattern.lastIndex = 0;
      for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
        const literal = balancedObject(text, match.index + match[0].length - 1);
        const parsed = literal === null ? null : parseConfigObject(literal);
        if (parsed !== null) Object.assign(merged, parsed);
      }
    }
  }
  return merged;
}

/** The page's MediaWiki config values this extension uses. */
export function readMwConfig(document: Document): MwConfig {
  const inline = readInlineMwConfig(document);
  const getter = (document.defaultView as (Window & MwWindow) | null)?.mw?.config?.get;
  const out: Record<string, unknown> = {};
  for (const key of KEYS) {
    const fromGlobal = typeof getter === "function" ? getter(key) : undefined;
    const value = fromGlobal !== undefined ? fromGlobal : inline[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** A positive integer id as a decimal string (how the API wants pageId and revisionId). */
export function positiveIdString(value: unknown): string | null {
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return String(value);
  if (typeof value === "string" && /^[1-9][0-9]{0,19}$/.test(value)) return value;
  return null;
}

/** MediaWiki's YYYYMMDDHHMMSS revision timestamp as ISO-8601 UTC. */
export function mediaWikiTimestampToIso(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(value);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  const time = Date.UTC(y, mo - 1, d, h, mi, s);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}
