// Light or dark, as the page shows it: the site's own theme marker when it
// has one, else the computed background behind an element (the first
// ancestor with an opaque background), else the system preference.

import type { Theme } from "../adapters/feed-model";

/** The relative luminance (0 black .. 1 white) of a computed CSS colour, or null when it is (mostly) transparent or unreadable. */
export function opaqueLuminance(color: string): number | null {
  const match = /rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:[,\s/]+([\d.]+%?))?/.exec(color);
  if (match === null) return null;
  const alphaText = match[4];
  const alpha = alphaText === undefined ? 1 : alphaText.endsWith("%") ? Number.parseFloat(alphaText) / 100 : Number(alphaText);
  if (!(alpha >= 0.5)) return null;
  const [r, g, b] = [match[1], match[2], match[3]].map((v) => Number(v) / 255) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Below this luminance a background counts as dark. */
export const DARK_BELOW = 0.45;

/** The theme of the background behind element: its own or its nearest opaque ancestor's; null when none is opaque. */
export function backgroundTheme(element: Element | null): Theme | null {
  const win = element?.ownerDocument.defaultView ?? null;
  if (win === null) return null;
  for (let e: Element | null = element; e !== null; e = e.parentElement) {
    const luminance = opaqueLuminance(win.getComputedStyle(e).backgroundColor);
    if (luminance !== null) return luminance < DARK_BELOW ? "dark" : "light";
  }
  return null;
}

/** The page's theme around element: the site's marker, else the background, else the system preference. */
export function detectTheme(doc: Document, near: Element | null, siteTheme: Theme | null): Theme {
  if (siteTheme !== null) return siteTheme;
  const behind = backgroundTheme(near ?? doc.body ?? doc.documentElement);
  if (behind !== null) return behind;
  return doc.defaultView?.matchMedia?.("(prefers-color-scheme: dark)").matches === true ? "dark" : "light";
}
