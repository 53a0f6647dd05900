// Builds the unpacked extension for both browsers from one source tree:
//   dist/chrome   MV3, module service worker
//   dist/firefox  MV3, background script (IIFE), gecko id
// Usage: node scripts/build.mjs [chrome|firefox ...]

import { build } from "esbuild";
import { cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeIcons } from "./icons.mjs";
import { buildManifest } from "./manifest.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/** @type {Record<"chrome" | "firefox", { esbuildTarget: string; backgroundFormat: import("esbuild").Format }>} */
const TARGETS = {
  chrome: { esbuildTarget: "chrome121", backgroundFormat: "esm" },
  firefox: { esbuildTarget: "firefox140", backgroundFormat: "iife" },
};

/** Files copied as they are: [path under src/, path in the build]. @type {Array<[string, string]>} */
const STATIC_FILES = [
  ["content/annotations.css", "annotations.css"],
  ["popup/index.html", "popup/index.html"],
  ["popup/popup.css", "popup/popup.css"],
  ["options/index.html", "options/index.html"],
  ["options/options.css", "options/options.css"],
  ["ui/common.css", "ui/common.css"],
];

/** @param {keyof typeof TARGETS} name */
async function buildTarget(name) {
  const { esbuildTarget, backgroundFormat } = TARGETS[name];
  const outdir = join(root, "dist", name);
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });

  /** @type {import("esbuild").BuildOptions} */
  const common = {
    bundle: true,
    minify: true,
    legalComments: "none",
    target: esbuildTarget,
    platform: "browser",
    logLevel: "warning",
    absWorkingDir: root,
  };
  await Promise.all([
    build({ ...common, entryPoints: ["src/background/index.ts"], outfile: join(outdir, "background.js"), format: backgroundFormat }),
    build({ ...common, entryPoints: ["src/content/main.ts"], outfile: join(outdir, "content.js"), format: "iife" }),
    build({ ...common, entryPoints: ["src/popup/main.ts"], outfile: join(outdir, "popup/main.js"), format: "iife" }),
    build({ ...common, entryPoints: ["src/options/main.ts"], outfile: join(outdir, "options/main.js"), format: "iife" }),
  ]);
  for (const [from, to] of STATIC_FILES) {
    mkdirSync(dirname(join(outdir, to)), { recursive: true });
    cpSync(join(root, "src", from), join(outdir, to));
  }
  writeIcons(outdir);
  writeFileSync(join(outdir, "manifest.json"), `${JSON.stringify(buildManifest(name, version), null, 2)}\n`);

  const sizes = ["background.js", "content.js", "popup/main.js", "options/main.js"]
    .map((f) => `${f} ${(statSync(join(outdir, f)).size / 1024).toFixed(1)} KiB`)
    .join(", ");
  console.log(`dist/${name}: ${sizes}`);
}

const requested = process.argv.slice(2);
const names = requested.length > 0 ? requested : Object.keys(TARGETS);
for (const name of names) {
  if (!(name in TARGETS)) {
    console.error(`unknown target ${name}; expected one of ${Object.keys(TARGETS).join(", ")}`);
    process.exit(2);
  }
}
for (const name of names) await buildTarget(/** @type {keyof typeof TARGETS} */ (name));
