// Runs the end-to-end tests in real browsers:
//   1. installs Debian's chromium and firefox-esr when missing (scripts/install-browsers.sh),
//   2. builds both extensions,
//   3. the stub suite: chromium.e2e.ts, firefox.e2e.ts, fixtures.e2e.ts against the
//      contract stub (test/e2e/stub-server.ts),
//   4. the real-stack suite: starts a private Errata stack with a scripted fake
//      provider (scripts/e2e-stack.mjs: bin/errata serve + worker on the local
//      Kafka, Postgres, Elasticsearch, ClickHouse), runs real-stack.e2e.ts
//      (Chromium), appeals.e2e.ts (Dispute this claim, decided by the real
//      appeals stage), workbench.e2e.ts (the /app page in Chromium) and
//      firefox.e2e.ts against it, then removes the stack.
// Missing browsers after the install attempt fail the run, and so does a
// missing bin/errata (run `make build`); only ERRATA_E2E=0 skips everything
// and ERRATA_E2E_REAL=0 skips the real-stack suite.
//
// Usage: node scripts/e2e.mjs [chromium|firefox]
// Environment: ERRATA_E2E=0, ERRATA_E2E_REAL=0, ERRATA_BIN (default ../bin/errata),
// ERRATA_E2E_SCRIPT (the fake provider's script), CHROMIUM_PATH, FIREFOX_PATH.
// ERRATA_E2E_API_URL names an already running stack for the real-stack suite
// instead of starting one (it must play the same script; set
// ERRATA_E2E_OPENAI_KEY and ERRATA_E2E_FAKE_LOG too).

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_BIN, startStack } from "./e2e-stack.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();
/** @type {Record<string, number | string>} */
const timings = {};
const seconds = (/** @type {number} */ ms) => Math.round(ms / 100) / 10;

if (process.env.ERRATA_E2E === "0") {
  console.log("e2e: skipped (ERRATA_E2E=0)");
  process.exit(0);
}

/** @param {string} command @param {string[]} args */
function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: process.env });
  if (result.status !== 0) {
    console.error(`e2e: ${command} ${args.join(" ")} failed (${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

const which = process.argv[2];
if (which !== undefined && which !== "chromium" && which !== "firefox") {
  console.error("usage: node scripts/e2e.mjs [chromium|firefox]");
  process.exit(2);
}
const wantReal = process.env.ERRATA_E2E_REAL !== "0";
const bin = process.env.ERRATA_BIN ?? DEFAULT_BIN;
const externalApi = process.env.ERRATA_E2E_API_URL?.trim() ?? "";
// Fail before the long stub run when the real suite cannot run.
if (wantReal && externalApi === "" && !existsSync(bin)) {
  console.error(
    `e2e: the real-stack suite needs the errata binary at ${bin}: run 'make build' in the repository root ` +
      "(and 'make up' for the local services), or set ERRATA_E2E_REAL=0 to skip the real-stack suite",
  );
  process.exit(1);
}

run("bash", [join(root, "scripts", "install-browsers.sh")]);
const browsers = {
  chromium: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  firefox: process.env.FIREFOX_PATH ?? "/usr/bin/firefox-esr",
};
for (const [name, path] of Object.entries(browsers)) {
  if ((which === undefined || which === name) && !existsSync(path)) {
    console.error(`e2e: ${name} is still missing at ${path} after the install attempt; set ERRATA_E2E=0 to skip the end-to-end tests`);
    process.exit(1);
  }
}
run(process.execPath, [join(root, "scripts", "build.mjs")]);

const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
/** @type {import("node:child_process").ChildProcess | null} */
let current = null;
/** @param {string[]} files @param {NodeJS.ProcessEnv} env @returns {Promise<number>} */
function vitestRun(files, env) {
  return new Promise((done) => {
    current = spawn(process.execPath, [vitest, "run", "-c", "vitest.e2e.config.ts", ...files], { cwd: root, stdio: "inherit", env });
    current.on("exit", (code, signal) => {
      current = null;
      done(code ?? (signal === null ? 1 : 130));
    });
  });
}

/** @type {Awaited<ReturnType<typeof startStack>> | null} */
let stack = null;
let interrupted = false;
for (const signal of /** @type {const} */ (["SIGINT", "SIGTERM"])) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`e2e: ${signal}: stopping`);
    current?.kill(signal);
    void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

function summary(/** @type {number} */ status) {
  timings.totalS = seconds(Date.now() - started);
  mkdirSync(join(root, "test-artifacts"), { recursive: true });
  writeFileSync(join(root, "test-artifacts", "e2e-run-timings.json"), `${JSON.stringify(timings, null, 2)}\n`);
  console.log(`e2e: finished in ${timings.totalS} s (${Object.entries(timings).map(([k, v]) => `${k} ${v}`).join(", ")})`);
  process.exit(status);
}

// 1. Against the contract stub (never a real API, whatever the environment says).
/** @param {string[]} chromiumFiles @param {string[]} firefoxFiles @param {string[]} rest */
function select(chromiumFiles, firefoxFiles, rest = []) {
  if (which === "chromium") return chromiumFiles;
  if (which === "firefox") return firefoxFiles;
  return [...rest, ...chromiumFiles, ...firefoxFiles];
}
const stubFiles = select(["test/e2e/chromium.e2e.ts", "test/e2e/appeals.e2e.ts", "test/e2e/social.e2e.ts"], ["test/e2e/firefox.e2e.ts"], ["test/e2e/fixtures.e2e.ts"]);
const stubEnv = { ...process.env };
for (const k of ["ERRATA_E2E_API_URL", "ERRATA_E2E_API_KEY", "ERRATA_E2E_OPENAI_KEY", "ERRATA_E2E_FAKE_LOG"]) delete stubEnv[k];
console.log(`e2e: ${which ?? "chromium and firefox"} against the contract stub`);
let t0 = Date.now();
const stubStatus = await vitestRun(stubFiles, stubEnv);
timings.stubSuiteS = seconds(Date.now() - t0);
if (interrupted) await new Promise(() => undefined); // the signal handler exits

// 2. Against a real stack with the scripted provider.
if (!wantReal) {
  console.log("e2e: real-stack suite skipped (ERRATA_E2E_REAL=0)");
  summary(stubStatus);
}
/** @type {NodeJS.ProcessEnv} */
let realEnv = { ...process.env };
if (externalApi === "") {
  t0 = Date.now();
  try {
    stack = await startStack({ bin });
  } catch (error) {
    console.error(`e2e: the real stack did not start: ${error instanceof Error ? error.message : String(error)}`);
    summary(1);
  }
  timings.stackStartS = seconds(Date.now() - t0);
  if (stack !== null) realEnv = { ...realEnv, ...stack.testEnv };
}
const realFiles = select(["test/e2e/real-stack.e2e.ts", "test/e2e/appeals.e2e.ts", "test/e2e/social.e2e.ts", "test/e2e/workbench.e2e.ts"], ["test/e2e/firefox.e2e.ts"]);
console.log(`e2e: ${which ?? "chromium and firefox"} against the real Errata stack at ${realEnv.ERRATA_E2E_API_URL}`);
t0 = Date.now();
const realStatus = await vitestRun(realFiles, realEnv);
timings.realSuiteS = seconds(Date.now() - t0);
if (stack !== null) {
  t0 = Date.now();
  await stack.stop();
  timings.stackStopS = seconds(Date.now() - t0);
}
if (interrupted) await new Promise(() => undefined);
summary(stubStatus !== 0 ? stubStatus : realStatus);
