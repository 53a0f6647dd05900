import { describe, expect, it } from "vitest";
import { ApiClient } from "../src/background/api-client";
import { isCustomDomainCandidate } from "../src/background/substack-injection";
import { runViewPath } from "../src/background/view-path";
import { isBackgroundMessage, isContentMessage, isPopupMessage, isVerdictMessage } from "../src/lib/messages";
import type { PlatformContent } from "../src/lib/platform";
import { parseSettings, DEFAULT_SETTINGS } from "../src/lib/settings";
import { skipReasonFor } from "../src/lib/skip";
import { badgeFor } from "../src/lib/tab-state";

const CONTENT: PlatformContent = {
  platform: "X",
  externalId: "42",
  url: "https://x.com/ada_l/status/42",
  contentText: "Water boils at 90 degrees at sea level.",
  mediaState: "text_only",
  imageUrls: [],
  imageOccurrences: [],
  metadata: { authorHandle: "ada_l", authorDisplayName: null, text: "Water boils at 90 degrees at sea level.", mediaUrls: [] },
};
const HASH = "ab".repeat(32);

function api(...answers: Array<[number, unknown] | Error>) {
  const requests: Array<{ url: string; body: unknown }> = [];
  const client = new ApiClient({
    baseUrl: "http://127.0.0.1:8080",
    extensionVersion: "0.4.0",
    fetch: async (url, init) => {
      requests.push({ url, body: typeof init.body === "string" ? JSON.parse(init.body) : undefined });
      const answer = answers.shift();
      if (answer === undefined) throw new Error("unexpected request");
      if (answer instanceof Error) throw answer;
      return new Response(JSON.stringify(answer[1]), { status: answer[0] });
    },
  });
  return { client, requests };
}

describe("view path", () => {
  it("registers, then records the view of the returned version", async () => {
    const { client, requests } = api(
      [200, { result: { data: { platform: "X", externalId: "42", versionHash: HASH, postVersionId: "pv-1", provenance: "CLIENT_FALLBACK" } } }],
      [200, { result: { data: { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [] } } }],
    );
    const state = await runViewPath(client, CONTENT);
    expect(requests.map((r) => r.url)).toEqual([
      "http://127.0.0.1:8080/trpc/post.registerObservedVersion",
      "http://127.0.0.1:8080/trpc/post.recordViewAndGetStatus",
    ]);
    expect(requests[0]?.body).toMatchObject({ platform: "X", externalId: "42", observedContentText: CONTENT.contentText });
    expect(requests[1]?.body).toEqual({ postVersionId: "pv-1" });
    expect(state).toEqual({
      kind: "status",
      platform: "X",
      url: CONTENT.url,
      externalId: "42",
      postVersionId: "pv-1",
      versionHash: HASH,
      provenance: "CLIENT_FALLBACK",
      status: { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [] },
    });
    expect(badgeFor(state)).toMatchObject({ text: "✓" });
  });

  it("stops at an upgrade-required answer and says so", async () => {
    const { client, requests } = api([
      412,
      {
        error: {
          message: "upgrade required",
          code: -32012,
          data: { code: "PRECONDITION_FAILED", httpStatus: 412, openerrataCode: "UPGRADE_REQUIRED", minimumSupportedExtensionVersion: "9.0.0", receivedExtensionVersion: "0.4.0" },
        },
      },
    ]);
    const state = await runViewPath(client, CONTENT);
    expect(requests).toHaveLength(1);
    expect(state).toMatchObject({ kind: "error", upgradeRequired: { minimumVersion: "9.0.0" } });
    expect(badgeFor(state).text).toBe("!");
  });

  it("reports an unreachable server", async () => {
    const { client } = api(new TypeError("fetch failed"));
    expect(await runViewPath(client, CONTENT)).toMatchObject({ kind: "error", message: "the Errata server cannot be reached" });
  });
});

describe("badge", () => {
  const post = { platform: "X" as const, url: CONTENT.url, externalId: "42", postVersionId: "pv", versionHash: HASH, provenance: "SERVER_VERIFIED" as const };
  const claim = { id: "c", text: "t", context: "c", summary: "s", reasoning: "r", sources: [{ url: "https://e.org", title: "", snippet: "" }] };
  it("counts incorrect claims, shows progress, stays empty otherwise", () => {
    expect(badgeFor({ ...post, kind: "status", status: { investigationState: "INVESTIGATED", provenance: "SERVER_VERIFIED", claims: [claim, { ...claim, id: "d" }] } })).toMatchObject({ text: "2" });
    expect(badgeFor({ ...post, kind: "status", status: { investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null } }).text).toBe("");
    expect(badgeFor({ ...post, kind: "status", status: { investigationState: "INVESTIGATING", status: "PENDING", provenance: "SERVER_VERIFIED", pendingClaims: [], confirmedClaims: [], priorInvestigationResult: null } }).text).toBe("…");
    expect(badgeFor({ kind: "skipped", platform: "X", url: CONTENT.url, reason: "has_video" })).toMatchObject({ text: "", title: expect.stringContaining("video") });
    expect(badgeFor({ kind: "idle" }).text).toBe("");
  });
});

describe("skip rules", () => {
  const words = (n: number) => Array.from({ length: n }, () => "w").join(" ");
  it("video first, then empty text, then more than 10,000 words", () => {
    expect(skipReasonFor({ ...CONTENT, mediaState: "has_video", contentText: "" })).toBe("has_video");
    expect(skipReasonFor({ ...CONTENT, contentText: "" })).toBe("no_text");
    expect(skipReasonFor({ ...CONTENT, contentText: words(10_000) })).toBeNull();
    expect(skipReasonFor({ ...CONTENT, contentText: words(10_001) })).toBe("word_count");
  });
});

describe("settings", () => {
  it("defaults to the local API and keeps valid values", () => {
    expect(parseSettings(undefined)).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS.apiBaseUrl).toBe("http://127.0.0.1:8080");
    expect(parseSettings({ apiBaseUrl: " https://errata.example/ ", apiKey: " k ", autoInvestigate: true })).toEqual({
      ...DEFAULT_SETTINGS,
      apiBaseUrl: "https://errata.example",
      apiKey: "k",
      autoInvestigate: true,
    });
    expect(parseSettings({ apiBaseUrl: "javascript:alert(1)", autoInvestigate: "yes" })).toEqual(DEFAULT_SETTINGS);
  });
});

describe("messages and custom-domain probing", () => {
  it("recognises only current-protocol messages", () => {
    expect(isContentMessage({ v: 1, type: "PAGE_SKIPPED", platform: "X", url: "u", reason: "no_text" })).toBe(true);
    expect(isContentMessage({ v: 2, type: "PAGE_SKIPPED" })).toBe(false);
    expect(isPopupMessage({ v: 1, type: "GET_TAB_STATE", tabId: 3 })).toBe(true);
    expect(isPopupMessage({ v: 1, type: "GET_TAB_STATE" })).toBe(false);
    expect(isBackgroundMessage({ v: 1, type: "RESCAN" })).toBe(true);
    expect(isVerdictMessage({ v: 1, type: "VERDICT_GET", analysisId: "a" })).toBe(true);
    expect(isVerdictMessage({ v: 1, type: "VERDICT_GET", analysisId: "a", tabId: 4 })).toBe(true);
    expect(isVerdictMessage({ v: 1, type: "VERDICT_GET", analysisId: 7 })).toBe(false);
    expect(isVerdictMessage({ v: 1, type: "VERDICT_START", content: null })).toBe(false);
    expect(isVerdictMessage({ v: 1, type: "VERDICT_FOR_TAB", tabId: 4 })).toBe(true);
    expect(isVerdictMessage({ v: 1, type: "VERDICT_FOR_TAB" })).toBe(false);
    expect(isVerdictMessage({ v: 1, type: "GET_TAB_STATE", tabId: 4 })).toBe(false);
    expect(isPopupMessage({ v: 1, type: "VERDICT_FOR_TAB", tabId: 4 })).toBe(false);
  });

  it("probes /p/ pages on hosts the manifest does not cover", () => {
    expect(isCustomDomainCandidate("https://www.astralcodexten.com/p/some-post")).toBe(true);
    expect(isCustomDomainCandidate("https://someone.substack.com/p/some-post")).toBe(false);
    expect(isCustomDomainCandidate("https://www.astralcodexten.com/archive")).toBe(false);
    expect(isCustomDomainCandidate("chrome://extensions/p/x")).toBe(false);
    expect(isCustomDomainCandidate("https://www.threads.com/p/x")).toBe(false);
  });
});
