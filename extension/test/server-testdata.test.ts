// The Go server's own golden responses (../api/testdata/*.json) must pass the
// client's strict parsers: one contract, checked from both ends.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ApiClient, ApiError, UpgradeRequiredError } from "../src/background/api-client";

const dir = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "api", "testdata");
if (!existsSync(dir)) throw new Error(`server response fixtures missing: ${dir}`);
const files = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();

type Call = (api: ApiClient) => Promise<unknown>;

/** Which procedure answers with the fixture, by file name. */
function procedureFor(file: string): Call | null {
  if (file === "health.json") return (api) => api.health();
  if (file.startsWith("register_")) return (api) => api.registerObservedVersion({} as never);
  if (file.startsWith("status_")) return (api) => api.recordViewAndGetStatus({ postVersionId: "v" });
  if (file.startsWith("validate_settings_")) return (api) => api.validateSettings();
  if (file.startsWith("batch_status")) return (api) => api.batchStatus({ posts: [] });
  if (file.startsWith("investigation_")) return (api) => api.getInvestigation({ investigationId: "i" });
  if (file.startsWith("investigate_now_")) return (api) => api.investigateNow({ postVersionId: "v" });
  return null;
}

function apiAnswering(body: string, status: number): ApiClient {
  return new ApiClient({
    baseUrl: "http://127.0.0.1:8080",
    extensionVersion: "0.4.0",
    fetch: async () => new Response(body, { status }),
  });
}

describe("server golden responses", () => {
  it("exist", () => {
    expect(files.length).toBeGreaterThan(0);
  });
  for (const file of files) {
    it(file, async () => {
      const body = readFileSync(resolve(dir, file), "utf8");
      const parsed = JSON.parse(body) as Record<string, unknown>;
      if ("error" in parsed) {
        const error = parsed["error"] as { data: { httpStatus: number } };
        const outcome = await apiAnswering(body, error.data.httpStatus)
          .recordViewAndGetStatus({ postVersionId: "v" })
          .catch((e: unknown) => e);
        expect(outcome).toBeInstanceOf(ApiError);
        if (file.startsWith("upgrade_required")) expect(outcome).toBeInstanceOf(UpgradeRequiredError);
        return;
      }
      const call = procedureFor(file);
      if (call === null) throw new Error(`no procedure known for ${file}: map it in procedureFor`);
      await expect(call(apiAnswering(body, 200))).resolves.toBeDefined();
    });
  }
});
