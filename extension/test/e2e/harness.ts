// Shared set-up of the end-to-end tests: which API to talk to (the stub, or
// a real Errata API named by ERRATA_E2E_API_URL), where the browsers and the
// builds are, and where screenshots go.

import { existsSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { STUB_INSTANCE_KEY, StubApi } from "./stub-server";

export const EXTENSION_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ARTIFACTS_DIR = join(EXTENSION_DIR, "test-artifacts");
export const CHROME_BUILD = join(EXTENSION_DIR, "dist", "chrome");
export const FIREFOX_BUILD = join(EXTENSION_DIR, "dist", "firefox");
export const CHROMIUM_PATH = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";
export const FIREFOX_PATH = process.env["FIREFOX_PATH"] ?? "/usr/bin/firefox-esr";

export interface ApiUnderTest {
  url: string;
  /** The stub, when no real API was named. */
  stub: StubApi | null;
  /** Instance API key to configure (the stub's, or ERRATA_E2E_API_KEY for a real API). */
  apiKey: string;
  /** A user OpenAI key to configure for the auto-investigate test (never a real key with the stub). */
  openaiKey: string;
  close(): Promise<void>;
}

/** The API the extension is pointed at: ERRATA_E2E_API_URL, or a freshly started stub. */
export async function startApi(): Promise<ApiUnderTest> {
  const real = process.env["ERRATA_E2E_API_URL"]?.trim();
  if (real !== undefined && real.length > 0) {
    return {
      url: real.replace(/\/+$/, ""),
      stub: null,
      apiKey: process.env["ERRATA_E2E_API_KEY"] ?? "",
      openaiKey: process.env["ERRATA_E2E_OPENAI_KEY"] ?? "",
      close: async () => undefined,
    };
  }
  const stub = new StubApi();
  const url = await stub.start();
  return { url, stub, apiKey: STUB_INSTANCE_KEY, openaiKey: "sk-e2e-user-key", close: () => stub.stop() };
}

/** Fails (never skips) when something the run needs is missing. */
export function requireFile(path: string, what: string): void {
  if (!existsSync(path)) throw new Error(`${what} not found at ${path}; run scripts/install-browsers.sh and npm run build (npm run e2e does both)`);
}

export function artifact(name: string): string {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  return join(ARTIFACTS_DIR, name);
}

export async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const started = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== null && value !== undefined && value !== false) return value;
    } catch (error: unknown) {
      last = error;
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? "" : ` (last error: ${String(last)})`}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Normalized text, as the extension compares it (citation markers such as [16] removed). */
export function clean(text: string): string {
  return text
    .replace(/\[[^\]]{1,40}\]/g, "")
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}
