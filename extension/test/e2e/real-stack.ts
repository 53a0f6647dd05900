// What the real-stack suites know about the stack scripts/e2e-stack.mjs
// starts: the fake provider's script (which claims it submits for which
// page, and which of them its validator approves) and its request log (how
// many investigations and verdicts it answered).

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EXTENSION_DIR } from "./harness";

export interface ScriptClaim {
  text: string;
  context: string;
  summary: string;
  reasoning: string;
  /** appealStance: the fake's answer when an appeal review judges the source (fakeopenai.ScriptSource). */
  sources: { url: string; title: string; snippet: string; appealStance?: { entail: number; contradict: number; neutral: number } }[];
  approved: boolean;
}

export interface ScriptRule {
  name: string;
  match: string;
  claims: ScriptClaim[];
}

export interface FakeScript {
  apiKey: string;
  rules: ScriptRule[];
}

/** One line of `errata fake-openai --script-log` (fakeopenai.ScriptLogEntry). */
export interface FakeLogEntry {
  seq: number;
  kind: "investigate" | "continue" | "validate" | "stance" | "extract" | "summary" | "other";
  rule: string;
  claims?: number;
  text?: string;
  approved?: boolean;
  /** The appeal whose review sent a "stance" request. */
  appeal?: string;
}

export const REAL_API_URL = process.env["ERRATA_E2E_API_URL"]?.trim() ?? "";
export const IS_REAL = REAL_API_URL !== "";

const scriptPath = process.env["ERRATA_E2E_SCRIPT"] ?? join(EXTENSION_DIR, "test", "e2e", "fixtures", "fake-script.json");

export const SCRIPT = JSON.parse(readFileSync(scriptPath, "utf8")) as FakeScript;

export function rule(name: string): ScriptRule {
  const found = SCRIPT.rules.find((r) => r.name === name);
  if (found === undefined) throw new Error(`the fake provider's script has no rule ${name}`);
  return found;
}

export function approved(r: ScriptRule): ScriptClaim[] {
  return r.claims.filter((c) => c.approved);
}

export function rejected(r: ScriptRule): ScriptClaim[] {
  return r.claims.filter((c) => !c.approved);
}

/** The fake provider's answers so far (empty before its first answer). */
export function fakeLog(): FakeLogEntry[] {
  const path = process.env["ERRATA_E2E_FAKE_LOG"];
  if (path === undefined || path === "") throw new Error("ERRATA_E2E_FAKE_LOG is not set: run the real-stack suite through npm run e2e");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as FakeLogEntry);
}

/** Stage-1 starts the fake answered for a rule ("" for posts no rule matched). */
export function investigations(ruleName: string): FakeLogEntry[] {
  return fakeLog().filter((e) => e.kind === "investigate" && e.rule === ruleName);
}

export function verdicts(ruleName: string): FakeLogEntry[] {
  return fakeLog().filter((e) => e.kind === "validate" && e.rule === ruleName);
}

/** "N incorrect claims found", as the popup words it. */
export function headline(n: number): string {
  return n === 1 ? "1 incorrect claim found" : `${n} incorrect claims found`;
}
