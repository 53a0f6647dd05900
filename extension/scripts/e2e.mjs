// Runs the end-to-end tests in real browsers:
//   1. installs Debian's chromium and firefox-esr when missing (scripts/install-browsers.sh),
//   2. builds both extensions,
//   3. runs test/e2e/*.e2e.ts with vitest (vitest.e2e.config.ts).
// Missing browsers after the install attempt fail the run; only ERRATA_E2E=0 skips it.
//
// Usage: node scripts/e2e.mjs [chromium|firefox]
// Environment: ERRATA_E2E=0 (skip), ERRATA_E2E_API_URL (a real Errata API
// instead of the stub; ERRATA_E2E_API_KEY, ERRATA_E2E_OPENAI_KEY optional),
// CHROMIUM_PATH, FIREFOX_PATH.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const started = Date.now();

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

const files = which === undefined ? [] : [`test/e2e/${which}.e2e.ts`];
const api = process.env.ERRATA_E2E_API_URL ? `the Errata API at ${process.env.ERRATA_E2E_API_URL}` : "the contract stub";
console.log(`e2e: ${which ?? "chromium and firefox"} against ${api}`);
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const result = spawnSync(process.execPath, [vitest, "run", "-c", "vitest.e2e.config.ts", ...files], { cwd: root, stdio: "inherit" });
console.log(`e2e: finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(result.status ?? 1);
