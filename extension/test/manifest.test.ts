import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONTENT_SCRIPT_MATCHES, GECKO_ID, buildManifest } from "../scripts/manifest.mjs";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

/** The server's version gate: 1 to 4 dot-separated integers <= 65535, at least 0.2.0 (CONTRACT.md). */
function passesVersionGate(v: string): boolean {
  const parts = v.split(".");
  if (parts.length < 1 || parts.length > 4 || parts.some((p) => !/^\d{1,5}$/.test(p) || Number(p) > 65535)) return false;
  const [a = 0, b = 0, c = 0, d = 0] = parts.map(Number);
  const minimum = [0, 2, 0, 0];
  const mine = [a, b, c, d];
  for (let i = 0; i < 4; i += 1) if (mine[i] !== minimum[i]) return (mine[i] ?? 0) > (minimum[i] ?? 0);
  return true;
}

describe("manifest", () => {
  it("uses a version the server accepts", () => {
    expect(passesVersionGate(version)).toBe(true);
  });

  for (const target of ["chrome", "firefox"] as const) {
    it(`${target}: MV3 with the spec's permissions and content scripts`, () => {
      const m = buildManifest(target, version);
      expect(m.manifest_version).toBe(3);
      expect(m.version).toBe(version);
      expect([...m.permissions].sort()).toEqual(["activeTab", "alarms", "scripting", "storage", "webNavigation"]);
      expect(m.host_permissions).toEqual(["https://*/*", "http://*/*"]);
      expect(m.content_scripts).toEqual([
        { matches: CONTENT_SCRIPT_MATCHES, js: ["content.js"], css: ["annotations.css"], run_at: "document_idle" },
      ]);
      expect(Object.keys(m.icons)).toEqual(["16", "32", "48", "128"]);
      expect(CONTENT_SCRIPT_MATCHES).toEqual(
        expect.arrayContaining([
          "https://www.lesswrong.com/*",
          "https://x.com/*",
          "https://twitter.com/*",
          "https://*.substack.com/p/*",
          "https://*.wikipedia.org/wiki/*",
          "https://*.wikipedia.org/w/index.php*",
          "https://bsky.app/*",
          "https://www.threads.net/*",
          "https://www.threads.com/*",
          "https://threads.com/*",
        ]),
      );
      expect(m.action.default_popup).toBe("popup/index.html");
      expect(m.options_ui.page).toBe("options/index.html");
    });
  }

  it("chrome: module service worker (scripts named for Firefox's linter); firefox: background scripts; both a gecko id", () => {
    const chrome = buildManifest("chrome", version);
    expect(chrome.background).toEqual({ service_worker: "background.js", scripts: ["background.js"], type: "module" });
    expect(chrome).toMatchObject({ browser_specific_settings: { gecko: { id: GECKO_ID } } });
    const firefox = buildManifest("firefox", version);
    expect(firefox.background).toEqual({ scripts: ["background.js"] });
    expect(firefox).toMatchObject({
      browser_specific_settings: { gecko: { id: GECKO_ID, data_collection_permissions: { required: expect.any(Array) } } },
    });
    expect(GECKO_ID).toMatch(/^[a-zA-Z0-9-._]*@[a-zA-Z0-9-._]+$/);
  });
});
