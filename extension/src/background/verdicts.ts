// Verdict analyses through the API (issue 15): register the post a
// Fact-check button belongs to and request its analysis (verdict.request),
// and read an analysis's job (verdict.get). Answers are worded for the user
// and never throw: they go back to the content script or the popup.

import type { VerdictGetResponse, VerdictStartResponse } from "../lib/messages";
import { MESSAGE_PROTOCOL_VERSION } from "../lib/messages";
import { type PlatformContent, buildRegisterInput } from "../lib/platform";
import { type ApiClient, ApiError } from "./api-client";
import { describeFailure, isPermanentFailure } from "./errors";

/** Server messages of these codes say what to change (e.g. the post is too long for a verdict); they are shown. */
const TELLING_CODES = new Set(["BAD_REQUEST", "TOO_MANY_REQUESTS"]);

/** A verdict.* failure worded for the user: the server's own words where they explain, else the common wording. */
export function describeVerdictFailure(error: unknown): string {
  if (error instanceof ApiError && TELLING_CODES.has(error.codeName)) {
    const message = Array.from(error.serverMessage.trim().replace(/[\u0000-\u001f\u007f]/g, " ")).slice(0, 200).join("").replace(/[.\s]+$/, "");
    if (message.length > 0) return message;
  }
  return describeFailure(error);
}

export type VerdictApi = Pick<ApiClient, "registerObservedVersion" | "verdictRequest" | "verdictGet">;

/** registerObservedVersion, then verdict.request for the version the server registered. */
export async function startVerdict(api: VerdictApi, content: PlatformContent): Promise<VerdictStartResponse> {
  try {
    const registered = await api.registerObservedVersion(buildRegisterInput(content));
    const requested = await api.verdictRequest({
      platform: registered.platform,
      externalId: registered.externalId,
      postVersionId: registered.postVersionId,
    });
    return {
      v: MESSAGE_PROTOCOL_VERSION,
      ok: true,
      analysisId: requested.analysisId,
      status: requested.status,
      postVersionId: registered.postVersionId,
    };
  } catch (error: unknown) {
    return { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: describeVerdictFailure(error) };
  }
}

/** One verdict.get. */
export async function readVerdict(api: VerdictApi, analysisId: string): Promise<VerdictGetResponse> {
  try {
    return { v: MESSAGE_PROTOCOL_VERSION, ok: true, job: await api.verdictGet({ analysisId }) };
  } catch (error: unknown) {
    // Right after verdict.request the read model may not show the analysis yet: NOT_FOUND is worth another read.
    const notYet = error instanceof ApiError && error.codeName === "NOT_FOUND";
    return { v: MESSAGE_PROTOCOL_VERSION, ok: false, error: describeVerdictFailure(error), permanent: !notYet && isPermanentFailure(error) };
  }
}
