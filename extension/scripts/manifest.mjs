// One manifest design, two browsers (spec 3.13). Chrome runs the background
// as a module service worker; Firefox's MV3 runs it as a background script
// (an IIFE bundle) and needs a gecko id.

/** @typedef {"chrome" | "firefox"} BrowserTarget */

export const GECKO_ID = "errata@errata-dev";
export const FIREFOX_MIN_VERSION = "128.0";
export const CHROME_MIN_VERSION = "116";

/** Pages that get the content script declaratively; Substack custom domains are injected at run time. */
export const CONTENT_SCRIPT_MATCHES = [
  "https://lesswrong.com/*",
  "https://www.lesswrong.com/*",
  "https://x.com/*",
  "https://twitter.com/*",
  "https://*.substack.com/p/*",
  "https://*.wikipedia.org/wiki/*",
  "https://*.wikipedia.org/w/index.php*",
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
    description: "Highlights empirically incorrect claims in posts on LessWrong, X, Substack and Wikipedia.",
    version,
    permissions: ["activeTab", "storage", "scripting", "webNavigation", "alarms"],
    // Broad on purpose: Substack publications live on arbitrary custom domains
    // and the API server's address is user-configured; injection itself is
    // limited to recognised post pages.
    host_permissions: ["https://*/*", "http://*/*"],
    action: { default_title: "Errata", default_popup: "popup/index.html" },
    options_ui: { page: "options/index.html", open_in_tab: true },
    content_scripts: [
      {
        matches: CONTENT_SCRIPT_MATCHES,
        js: ["content.js"],
        run_at: "document_idle",
      },
    ],
  };
  if (target === "chrome") {
    return {
      ...manifest,
      minimum_chrome_version: CHROME_MIN_VERSION,
      background: { service_worker: "background.js", type: "module" },
    };
  }
  if (target === "firefox") {
    return {
      ...manifest,
      background: { scripts: ["background.js"] },
      browser_specific_settings: { gecko: { id: GECKO_ID, strict_min_version: FIREFOX_MIN_VERSION } },
    };
  }
  throw new Error(`unknown target ${String(target)}`);
}
