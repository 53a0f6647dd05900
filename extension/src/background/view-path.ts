// The view path (spec 2.6): register what the page showed, then record the
// view and read that exact version's investigation status.

import type { PlatformContent } from "../lib/platform";
import { buildRegisterInput } from "../lib/platform";
import type { TabState } from "../lib/tab-state";
import { type ApiClient, UpgradeRequiredError } from "./api-client";
import { describeFailure } from "./errors";

export type ViewPathApi = Pick<ApiClient, "registerObservedVersion" | "recordViewAndGetStatus">;

export async function runViewPath(api: ViewPathApi, content: PlatformContent): Promise<TabState> {
  const post = { platform: content.platform, url: content.url };
  try {
    const registered = await api.registerObservedVersion(buildRegisterInput(content));
    const status = await api.recordViewAndGetStatus({ postVersionId: registered.postVersionId });
    return {
      ...post,
      kind: "status",
      externalId: registered.externalId,
      postVersionId: registered.postVersionId,
      versionHash: registered.versionHash,
      provenance: registered.provenance,
      status,
    };
  } catch (error: unknown) {
    if (error instanceof UpgradeRequiredError) {
      const minimumVersion = error.minimumSupportedExtensionVersion;
      return {
        ...post,
        kind: "error",
        message: "this extension version is too old for the server",
        upgradeRequired: minimumVersion === undefined ? {} : { minimumVersion },
      };
    }
    return { ...post, kind: "error", message: describeFailure(error) };
  }
}
