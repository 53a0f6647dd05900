// One manifest design, two browsers (spec 3.13). Chrome runs the background
// as a module service worker; Firefox's MV3 runs it as a background script
// (an IIFE bundle) and needs a gecko id. The Chrome build also names the
// script form and the gecko settings (Chrome ignores both) so that it passes
// Firefox's linter too.

/** @typedef {"chrome" | "firefox"} BrowserTarget */

export const GECKO_ID = "errata@errata-dev";
// 140: the CSS Custom Highlight API and data_collection_permissions.
export const FIREFOX_MIN_VERSION = "140.0";
// 121: a manifest may name background.scripts beside the service worker.
export const CHROME_MIN_VERSION = "121";

/** Mobile is out of scope (spec 2.1); this only states which Android release knows every manifest key used. */
export const GECKO_ANDROID = { strict_min_version: "142.0" };

/** Post text and its URL go to the configured Errata server (Firefox's data consent categories). */
export const DATA_COLLECTION = { required: ["websiteContent", "browsingActivity"] };

export const ICONS = {
  16: "icons/icon-16.png",
  32: "icons/icon-32.png",
  48: "icons/icon-48.png",
  128: "icons/icon-128.png",
};

/** Pages that get the content script declaratively; Substack custom domains are injected at run time. */
export const CONTENT_SCRIPT_MATCHES = [
  "https://lesswrong.com/*",
  "https://www.lesswrong.com/*",
  "https://x.com/*",
  "https://twitter.com/*",
  "https://*.substack.com/p/*",
  "https://*.wikipedia.org/wiki/*",
  "https://*.wikipedia.org/w/index.php*",
  // Every page of Bluesky and Threads: feeds, threads and post pages, each post with its Fact-check button.
  "https://bsky.app/*",
  "https://threads.net/*",
  "https://www.threads.net/*",
  "https://threads.com/*",
  "https://www.threads.com/*",
];

/**
 * @param {BrowserTarget} target
 * @param {string} version the package version (also the x-openerrata-extension-version header)
 */
export function buildManifest(target, version) {
  const manifest = {
    manifest_version: 3,
    name: "Errata",
    short_name: "Errata",
    description:
      "Highlights empirically incorrect claims in posts on LessWrong, X, Substack and Wikipedia; fact-checks Bluesky and Threads posts.",
    version,
    permissions: ["activeTab", "storage", "scripting", "webNavigation", "alarms"],
    // Broad on purpose: Substack publications live on arbitrary custom domains
    // and the API server's address is user-configured; injection itself is
    // limited to recognised post pages.
    host_permissions: ["https://*/*", "http://*/*"],
    icons: ICONS,
    action: {
      default_title: "Errata",
      default_popup: "popup/index.html",
      default_icon: { 16: ICONS[16], 32: ICONS[32] },
    },
    options_ui: { page: "options/index.html", open_in_tab: true },
    content_scripts: [
      {
        matches: CONTENT_SCRIPT_MATCHES,
        js: ["content.js"],
        css: ["annotations.css"],
        run_at: "document_idle",
      },
    ],
  };
  const gecko = { id: GECKO_ID, strict_min_version: FIREFOX_MIN_VERSION, data_collection_permissions: DATA_COLLECTION };
  if (target === "chrome") {
    return {
      ...manifest,
      minimum_chrome_version: CHROME_MIN_VERSION,
      background: { service_worker: "background.js", scripts: ["background.js"], type: "module" },
      browser_specific_settings: { gecko, gecko_android: GECKO_ANDROID },
    };
  }
  if (target === "firefox") {
    return {
      ...manifest,
      background: { scripts: ["background.js"] },
      browser_specific_settings: { gecko, gecko_android: GECKO_ANDROID },
    };
  }
  throw new Error(`unknown target ${String(target)}`);
}
