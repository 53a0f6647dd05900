// Substack posts on custom domains (spec 3.11): after a /p/{slug} page loads
// on a host the manifest's declarative rules do not cover, look for
// Substack's CDN fingerprint in the page and, when present, inject the same
// content script and annotation CSS the declarative rules use.

import { substackSlugOf } from "../lib/substack-url";

export const CONTENT_SCRIPT_FILE = "content.js";
export const ANNOTATIONS_CSS_FILE = "annotations.css";

/** Hosts whose pages already get the content script from the manifest (or are never Substack). */
function declarativelyCovered(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return (
    host === "substack.com" ||
    host.endsWith(".substack.com") ||
    host.endsWith("lesswrong.com") ||
    host === "x.com" ||
    host === "twitter.com" ||
    host.endsWith(".wikipedia.org") ||
    host === "bsky.app" ||
    /^(?:www\.)?threads\.(?:net|com)$/.test(host)
  );
}

/** Whether a URL is a candidate for the probe: an http(s) /p/{slug} page on another host. */
export function isCustomDomainCandidate(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return false;
    return !declarativelyCovered(parsed.hostname) && substackSlugOf(url) !== null;
  } catch {
    return false;
  }
}

// Runs in the page; must be self-contained (it is serialized by scripting.executeScript).
function pageHasSubstackFingerprint(): boolean {
  return document.querySelector('link[href*="substackcdn.com"]') !== null;
}

export async function probeSubstackCustomDomain(tabId: number, url: string): Promise<void> {
  if (!isCustomDomainCandidate(url)) return;
  try {
    const [probe] = await chrome.scripting.executeScript({
      target: { tabId, frameIds: [0] },
      func: pageHasSubstackFingerprint,
    });
    if (probe?.result !== true) return;
    await chrome.scripting.insertCSS({ target: { tabId, frameIds: [0] }, files: [ANNOTATIONS_CSS_FILE] });
    await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, files: [CONTENT_SCRIPT_FILE] });
  } catch {
    // The page went away, or the browser does not allow scripting it (e.g. a store page).
  }
}
