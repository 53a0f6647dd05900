// Loads the shared OpenErrata fixtures from ../../shared/fixtures/openerrata/
// (relative to the extension directory). A missing fixture is a test failure,
// never a skip: these files are what keeps client and server hashes equal.

import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const extensionDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export const SHARED_FIXTURE_DIR = resolve(extensionDir, "..", "..", "shared", "fixtures", "openerrata");
export const LOCAL_FIXTURE_DIR = resolve(extensionDir, "test", "fixtures");

function mustRead(path: string): string {
  if (!existsSync(path)) {
    throw new Error(
      `fixture missing: ${path}\n` +
        "The extension tests read the shared fixtures from ../../shared/fixtures/openerrata/ " +
        "(shared/ must sit beside the repository root).",
    );
  }
  return readFileSync(path, "utf8");
}

export function readSharedFixture(name: string): string {
  return mustRead(resolve(SHARED_FIXTURE_DIR, name));
}

export function readSharedJson<T>(name: string): T {
  return JSON.parse(readSharedFixture(name)) as T;
}

export function readLocalFixture(name: string): string {
  return mustRead(resolve(LOCAL_FIXTURE_DIR, name));
}

export interface HashVectors {
  generatedWith: string;
  emptyOccurrencesSerialized: string;
  emptyOccurrencesHash: string;
  normalization: Array<{ input: string; output: string; outputSha256: string; wordCount: number }>;
  html: Array<{
    platform: "LESSWRONG" | "WIKIPEDIA";
    input: string;
    normalizedText: string;
    markdown: string;
  }>;
  version: Array<{
    contentText: string;
    imageOccurrences: Array<{
      originalIndex: number;
      normalizedTextOffset: number;
      sourceUrl: string;
      captionText?: string;
    }>;
    contentHash: string;
    occurrencesSerialized: string;
    occurrencesHash: string;
    versionHashSeed: string;
    versionHash: string;
    wordCount: number;
    utf16Length: number;
  }>;
  serializeObservedVersionIdentityExample: string;
}

export interface GoldenFixture {
  fixture: string;
  platform: "LESSWRONG" | "WIKIPEDIA";
  sourceUrl?: string;
  externalId: string;
  pageId?: string;
  revisionId?: string;
  inputField: "html" | "parseApiHtml";
  inputSha256: string;
  normalizedTextFile: string;
  markdownFile: string;
  contentHash: string;
  occurrencesSerialized: string;
  occurrencesHash: string;
  versionHashSeed: string;
  versionHash: string;
  wordCount: number;
  utf16Length: number;
}

export interface PageFixture {
  key: string;
  externalId?: string;
  postUrl?: string;
  sourceUrl?: string;
  language?: string;
  pageId?: string;
  revisionId?: string;
  html: string;
  htmlSha256?: string;
  parseApiHtml?: string;
  parseApiHtmlSha256?: string;
}

export function loadHashVectors(): HashVectors {
  return readSharedJson<HashVectors>("normalization-and-hash-vectors.json");
}

export function loadGolden(): GoldenFixture[] {
  return readSharedJson<GoldenFixture[]>("golden.json");
}

const pageCache = new Map<string, PageFixture>();

export function loadPage(name: string): PageFixture {
  let page = pageCache.get(name);
  if (page === undefined) {
    page = readSharedJson<PageFixture>(name);
    pageCache.set(name, page);
  }
  return page;
}

/** The register body OpenErrata's own extension sent for a saved page, and the versionHash it yields. */
export interface ReferenceRegister {
  description: string;
  pageUrl: string;
  expectedVersionHash: string;
  requestBody: {
    platform: string;
    url: string;
    observedContentText: string;
    observedImageUrls: string[];
    observedImageOccurrences: Array<{
      originalIndex: number;
      normalizedTextOffset: number;
      sourceUrl: string;
      captionText?: string;
    }>;
    metadata: Record<string, unknown> & { htmlContent?: string };
  };
}

export function loadReferenceRegister(name: string): ReferenceRegister {
  return readSharedJson<ReferenceRegister>(name);
}
