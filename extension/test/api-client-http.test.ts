// The client over real HTTP (Node's fetch against a loopback server): what
// actually goes on the wire, and the timeout.

import { createHmac } from "node:crypto";
import { type IncomingMessage, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient, ApiNetworkError, DEFAULT_ATTESTATION_KEY } from "../src/background/api-client";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let baseUrl = "";
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      if (req.url?.includes("stall")) return; // never answers
      res.setHeader("content-type", "application/json");
      if (req.url === "/health") {
        res.end(JSON.stringify({ status: "ok", minimumSupportedExtensionVersion: "0.2.0" }));
      } else if (req.url?.startsWith("/trpc/post.validateSettings")) {
        res.end(JSON.stringify({ result: { data: { instanceApiKeyAccepted: true, openaiApiKeyStatus: "missing" } } }));
      } else {
        res.end(JSON.stringify({ result: { data: { investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null } } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("ApiClient over HTTP", () => {
  it("sends the exact body it signed, and GETs without body or content type", async () => {
    seen.length = 0;
    const api = new ApiClient({ baseUrl, extensionVersion: "0.4.0", apiKey: "key-1", openaiApiKey: "sk-1" });
    await api.health();
    await api.recordViewAndGetStatus({ postVersionId: "pv-“1”" });
    await api.validateSettings();
    const [health, post, get] = seen;
    expect(health?.headers).not.toHaveProperty("x-openerrata-extension-version");
    expect(post?.method).toBe("POST");
    expect(post?.url).toBe("/trpc/post.recordViewAndGetStatus");
    expect(post?.body).toBe('{"postVersionId":"pv-“1”"}');
    expect(post?.headers["content-type"]).toBe("application/json");
    expect(post?.headers["x-openerrata-signature"]).toBe(
      createHmac("sha256", DEFAULT_ATTESTATION_KEY).update(post?.body ?? "", "utf8").digest("hex"),
    );
    expect(post?.headers["x-api-key"]).toBe("key-1");
    expect(post?.headers).not.toHaveProperty("x-openai-api-key");
    expect(get?.method).toBe("GET");
    expect(get?.url).toBe("/trpc/post.validateSettings");
    expect(get?.body).toBe("");
    expect(get?.headers).not.toHaveProperty("content-type");
    expect(get?.headers).not.toHaveProperty("x-openerrata-signature");
    expect(get?.headers["x-openai-api-key"]).toBe("sk-1");
  });

  it("gives up after the timeout", async () => {
    const api = new ApiClient({ baseUrl, extensionVersion: "0.4.0", timeoutMs: 200 });
    await expect(api.getInvestigation({ investigationId: "stall" })).rejects.toBeInstanceOf(ApiNetworkError);
  });
});
