import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  ApiClient,
  type ApiClientConfig,
  ApiError,
  ApiNetworkError,
  ApiResponseError,
  DEFAULT_ATTESTATION_KEY,
  RequestTooLargeError,
  UpgradeRequiredError,
} from "../src/background/api-client";
import type { RegisterObservedVersionInput } from "../src/lib/platform";

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** A fetch that records requests and answers from a queue. */
function fakeFetch(...answers: Array<Response | Error>) {
  const calls: Call[] = [];
  const fetch = async (url: string, init: RequestInit): Promise<Response> => {
    calls.push({
      url,
      method: init.method ?? "GET",
      headers: { ...(init.headers as Record<string, string>) },
      body: typeof init.body === "string" ? init.body : undefined,
    });
    const answer = answers.shift();
    if (answer === undefined) throw new Error("unexpected request");
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { calls, fetch };
}

function json(status: number, body: unknown): Response {
  return new Response(typeof body === "string" ? body : JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

const ok = (data: unknown) => json(200, { result: { data } });

function client(fetch: NonNullable<ApiClientConfig["fetch"]>, extra: Partial<ApiClientConfig> = {}): ApiClient {
  return new ApiClient({ baseUrl: "http://127.0.0.1:8080/", extensionVersion: "0.4.0", fetch, ...extra });
}

const HASH = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const REGISTER_INPUT: RegisterObservedVersionInput = {
  platform: "X",
  externalId: "1",
  url: "https://x.com/a/status/1",
  observedImageUrls: [],
  observedImageOccurrences: [],
  observedContentText: "Water boils at 90 degrees at sea level. <b>&</b> “é”",
  metadata: { authorHandle: "a", authorDisplayName: null, text: "Water boils", mediaUrls: [] },
};
const REGISTERED = {
  platform: "X",
  externalId: "1",
  versionHash: HASH,
  postVersionId: "4a1b7c52-2f0e-5b6e-8d1a-3c9e0f7b2d44",
  provenance: "CLIENT_FALLBACK",
};
const CLAIM = {
  id: "c1",
  text: "Water boils at 90 degrees",
  context: "Water boils at 90 degrees at sea level.",
  summary: "Water boils at 100 °C at sea level.",
  reasoning: "Standard pressure boiling point is 100 °C.",
  sources: [{ url: "https://example.org/boiling", title: "Boiling point", snippet: "100 °C" }],
};

describe("mutations", () => {
  it("POST the raw JSON body with version, api key and an HMAC signature of the exact body", async () => {
    const { calls, fetch } = fakeFetch(ok(REGISTERED));
    const out = await client(fetch, { apiKey: " instance-key ", openaiApiKey: "sk-user" }).registerObservedVersion(
      REGISTER_INPUT,
    );
    expect(out).toEqual(REGISTERED);
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.url).toBe("http://127.0.0.1:8080/trpc/post.registerObservedVersion");
    expect(call.method).toBe("POST");
    expect(call.body).toBe(JSON.stringify(REGISTER_INPUT));
    const expectedSignature = createHmac("sha256", DEFAULT_ATTESTATION_KEY).update(call.body ?? "", "utf8").digest("hex");
    expect(call.headers).toEqual({
      "content-type": "application/json",
      "x-openerrata-extension-version": "0.4.0",
      "x-api-key": "instance-key",
      "x-openerrata-signature": expectedSignature,
    });
  });

  it("signs with the configured secret and sends the OpenAI key only on investigateNow", async () => {
    const { calls, fetch } = fakeFetch(
      ok({ investigationId: "inv-1", status: "PENDING", provenance: "SERVER_VERIFIED" }),
      ok({ investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null }),
    );
    const api = client(fetch, { openaiApiKey: "sk-user", hmacSecret: "my-secret" });
    expect(await api.investigateNow({ postVersionId: "v1" })).toEqual({
      investigationId: "inv-1",
      status: "PENDING",
      provenance: "SERVER_VERIFIED",
    });
    expect(await api.recordViewAndGetStatus({ postVersionId: "v1" })).toEqual({
      investigationState: "NOT_INVESTIGATED",
      priorInvestigationResult: null,
    });
    const [investigate, view] = calls;
    expect(investigate?.headers["x-openai-api-key"]).toBe("sk-user");
    expect(investigate?.headers["x-openerrata-signature"]).toBe(
      createHmac("sha256", "my-secret").update('{"postVersionId":"v1"}').digest("hex"),
    );
    expect(investigate?.headers).not.toHaveProperty("x-api-key");
    expect(view?.headers).not.toHaveProperty("x-openai-api-key");
    expect(view?.url).toBe("http://127.0.0.1:8080/trpc/post.recordViewAndGetStatus");
  });

  it("refuses bodies over 512 KiB without sending them", async () => {
    const { calls, fetch } = fakeFetch();
    const big = { ...REGISTER_INPUT, observedContentText: "x".repeat(512 * 1024) };
    await expect(client(fetch).registerObservedVersion(big)).rejects.toBeInstanceOf(RequestTooLargeError);
    expect(calls).toHaveLength(0);
  });
});

describe("queries", () => {
  it("GET with ?input= and no body, content type or signature", async () => {
    const { calls, fetch } = fakeFetch(
      ok({ investigationState: "FAILED", provenance: "CLIENT_FALLBACK" }),
      ok({ statuses: [{ platform: "X", externalId: "1", investigationState: "INVESTIGATED", incorrectClaimCount: 2 }] }),
    );
    const api = client(fetch, { apiKey: "k", openaiApiKey: "sk-user" });
    expect(await api.getInvestigation({ investigationId: "inv 1/&" })).toEqual({
      investigationState: "FAILED",
      provenance: "CLIENT_FALLBACK",
    });
    await api.batchStatus({ posts: [{ platform: "X", externalId: "1", versionHash: HASH }] });
    const [get, batch] = calls;
    expect(get?.method).toBe("GET");
    expect(get?.url).toBe(
      `http://127.0.0.1:8080/trpc/post.getInvestigation?input=${encodeURIComponent('{"investigationId":"inv 1/&"}')}`,
    );
    expect(get?.body).toBeUndefined();
    expect(get?.headers).toEqual({ "x-openerrata-extension-version": "0.4.0", "x-api-key": "k" });
    expect(new URL(batch?.url ?? "").searchParams.get("input")).toBe(
      JSON.stringify({ posts: [{ platform: "X", externalId: "1", versionHash: HASH }] }),
    );
  });

  it("validateSettings has no query string and carries both keys", async () => {
    const { calls, fetch } = fakeFetch(ok({ instanceApiKeyAccepted: true, openaiApiKeyStatus: "valid" }));
    await client(fetch, { apiKey: "k", openaiApiKey: "sk-user" }).validateSettings();
    expect(calls[0]?.url).toBe("http://127.0.0.1:8080/trpc/post.validateSettings");
    expect(calls[0]?.headers).toEqual({
      "x-openerrata-extension-version": "0.4.0",
      "x-api-key": "k",
      "x-openai-api-key": "sk-user",
    });
  });

  it("health sends no version header and checks only status", async () => {
    const { calls, fetch } = fakeFetch(json(200, { status: "ok", minimumSupportedExtensionVersion: "0.2.0" }));
    expect(await client(fetch).health()).toEqual({ status: "ok" });
    expect(calls[0]?.url).toBe("http://127.0.0.1:8080/health");
    expect(calls[0]?.headers).toEqual({});
    const bad = fakeFetch(json(200, { status: "degraded" }));
    await expect(client(bad.fetch).health()).rejects.toBeInstanceOf(ApiResponseError);
  });
});

describe("errors", () => {
  it("reads the tRPC error envelope", async () => {
    const { fetch } = fakeFetch(
      json(400, {
        error: {
          message: "metadata.authorHandle: is required",
          code: -32600,
          data: { code: "BAD_REQUEST", httpStatus: 400, path: "post.registerObservedVersion" },
        },
      }),
    );
    const error = await client(fetch).registerObservedVersion(REGISTER_INPUT).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).not.toBeInstanceOf(UpgradeRequiredError);
    expect(error).toMatchObject({ codeName: "BAD_REQUEST", code: -32600, httpStatus: 400 });
  });

  it("turns UPGRADE_REQUIRED into UpgradeRequiredError", async () => {
    const { fetch } = fakeFetch(
      json(412, {
        error: {
          message: "upgrade required",
          code: -32012,
          data: {
            code: "PRECONDITION_FAILED",
            httpStatus: 412,
            path: "post.recordViewAndGetStatus",
            openerrataCode: "UPGRADE_REQUIRED",
            minimumSupportedExtensionVersion: "0.5.0",
            receivedExtensionVersion: "0.4.0",
          },
        },
      }),
    );
    const error = await client(fetch).recordViewAndGetStatus({ postVersionId: "v" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpgradeRequiredError);
    expect((error as UpgradeRequiredError).minimumSupportedExtensionVersion).toBe("0.5.0");
  });

  it("rejects error bodies that are not envelopes (string code, HTML, name/number mismatch)", async () => {
    const cases = [
      json(500, { error: { message: "x", code: "INTERNAL_SERVER_ERROR", data: { code: "INTERNAL_SERVER_ERROR", httpStatus: 500 } } }),
      new Response("<html>Bad gateway</html>", { status: 502 }),
      json(400, { error: { message: "x", code: -32603, data: { code: "BAD_REQUEST", httpStatus: 400 } } }),
    ];
    for (const answer of cases) {
      const { fetch } = fakeFetch(answer);
      await expect(client(fetch).recordViewAndGetStatus({ postVersionId: "v" })).rejects.toBeInstanceOf(ApiResponseError);
    }
  });

  it("reports network failures", async () => {
    const { fetch } = fakeFetch(new TypeError("fetch failed"));
    await expect(client(fetch).validateSettings()).rejects.toBeInstanceOf(ApiNetworkError);
  });
});

describe("strict outputs", () => {
  const investigating = {
    investigationState: "INVESTIGATING",
    status: "PROCESSING",
    provenance: "SERVER_VERIFIED",
    pendingClaims: [{ ...CLAIM, id: undefined }].map(({ id: _id, ...rest }) => rest),
    confirmedClaims: [],
    priorInvestigationResult: { oldClaims: [CLAIM], sourceInvestigationId: "inv-0" },
  };

  it("accepts every variant of recordViewAndGetStatus", async () => {
    const answers = [
      { investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null },
      investigating,
      { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [CLAIM] },
    ];
    const { fetch } = fakeFetch(...answers.map(ok));
    const api = client(fetch);
    for (const answer of answers) {
      expect(await api.recordViewAndGetStatus({ postVersionId: "v" })).toEqual(answer);
    }
  });

  const rejected: Array<[string, unknown]> = [
    ["an extra key", { investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null, claims: null }],
    ["a missing priorInvestigationResult", { investigationState: "NOT_INVESTIGATED" }],
    ["FAILED (never a view status)", { investigationState: "FAILED", provenance: "CLIENT_FALLBACK" }],
    ["pending claims with ids", { ...investigating, pendingClaims: [CLAIM] }],
    ["null claim lists", { ...investigating, confirmedClaims: null }],
    ["checkedAt (not on view status)", { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [], checkedAt: "2025-01-01T00:00:00Z" }],
    ["a claim without sources", { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [{ ...CLAIM, sources: [] }] }],
    ["a relative source URL", { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [{ ...CLAIM, sources: [{ url: "/x", title: "t", snippet: "s" }] }] }],
    ["an empty claim summary", { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: [{ ...CLAIM, summary: "" }] }],
    ["an unknown provenance", { investigationState: "INVESTIGATED", provenance: "GUESSED", claims: [] }],
  ];
  for (const [what, data] of rejected) {
    it(`rejects a view status with ${what}`, async () => {
      const { fetch } = fakeFetch(ok(data));
      await expect(client(fetch).recordViewAndGetStatus({ postVersionId: "v" })).rejects.toBeInstanceOf(ApiResponseError);
    });
  }

  it("getInvestigation: INVESTIGATED needs checkedAt (UTC, Z); optional checkedAt is never null", async () => {
    const good = { investigationState: "INVESTIGATED", provenance: "SERVER_VERIFIED", claims: [CLAIM], checkedAt: "2025-03-01T17:06:55.421Z" };
    const answers = [
      good,
      { ...good, checkedAt: undefined },
      { ...good, checkedAt: "2025-03-01T17:06:55+01:00" },
      { investigationState: "FAILED", provenance: "SERVER_VERIFIED", checkedAt: null },
    ];
    const { fetch } = fakeFetch(...answers.map(ok));
    const api = client(fetch);
    expect(await api.getInvestigation({ investigationId: "i" })).toEqual(good);
    for (let i = 1; i < answers.length; i += 1) {
      await expect(api.getInvestigation({ investigationId: "i" })).rejects.toBeInstanceOf(ApiResponseError);
    }
  });

  it("investigateNow COMPLETE carries claims; register needs a 64-hex versionHash", async () => {
    const { fetch } = fakeFetch(
      ok({ investigationId: "i", status: "COMPLETE", provenance: "SERVER_VERIFIED", claims: [CLAIM] }),
      ok({ ...REGISTERED, versionHash: HASH.toUpperCase() }),
      ok({ investigationId: "i", status: "FAILED", provenance: "SERVER_VERIFIED", claims: [] }),
    );
    const api = client(fetch);
    expect(await api.investigateNow({ postVersionId: "v" })).toMatchObject({ status: "COMPLETE", claims: [CLAIM] });
    await expect(api.registerObservedVersion(REGISTER_INPUT)).rejects.toBeInstanceOf(ApiResponseError);
    await expect(api.investigateNow({ postVersionId: "v" })).rejects.toBeInstanceOf(ApiResponseError);
  });

  it("validateSettings: a message exactly when the status needs one", async () => {
    const { fetch } = fakeFetch(
      ok({ instanceApiKeyAccepted: false, openaiApiKeyStatus: "invalid", openaiApiKeyMessage: "OpenAI rejected this API key." }),
      ok({ instanceApiKeyAccepted: false, openaiApiKeyStatus: "invalid" }),
      ok({ instanceApiKeyAccepted: false, openaiApiKeyStatus: "missing", openaiApiKeyMessage: "x" }),
    );
    const api = client(fetch);
    expect(await api.validateSettings()).toMatchObject({ openaiApiKeyStatus: "invalid" });
    await expect(api.validateSettings()).rejects.toBeInstanceOf(ApiResponseError);
    await expect(api.validateSettings()).rejects.toBeInstanceOf(ApiResponseError);
  });

  it("batchStatus: NOT_INVESTIGATED always counts 0", async () => {
    const { fetch } = fakeFetch(
      ok({ statuses: [{ platform: "X", externalId: "1", investigationState: "NOT_INVESTIGATED", incorrectClaimCount: 1 }] }),
    );
    await expect(
      client(fetch).batchStatus({ posts: [{ platform: "X", externalId: "1", versionHash: HASH }] }),
    ).rejects.toBeInstanceOf(ApiResponseError);
  });
});
