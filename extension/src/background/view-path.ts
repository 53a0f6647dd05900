// The view path (spec 2.6): register what the page showed, then record the
// view and read that exact version's investigation status.

import type { PlatformContent } from "../lib/platform";
import { buildRegisterInput } from "../lib/platform";
import type { TabState } from "../lib/tab-state";
import {
  type ApiClient,
  ApiClientError,
  ApiError,
  ApiNetworkError,
  ApiResponseError,
  RequestTooLargeError,
  UpgradeRequiredError,
} from "./api-client";

export type ViewPathApi = Pick<ApiClient, "registerObservedVersion" | "recordViewAndGetStatus">;

function describeFailure(error: unknown): string {
  if (error instanceof ApiNetworkError) return "the Errata server cannot be reached";
  if (error instanceof RequestTooLargeError) return "this post is too large to send";
  if (error instanceof ApiError) return `the server refused the request (${error.codeName})`;
  if (error instanceof ApiResponseError) return "the server's answer was not understood";
  if (error instanceof ApiClientError) return error.message;
  return "unexpected error";
}

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
