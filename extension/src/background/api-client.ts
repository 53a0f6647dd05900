// The Errata API over tRPC v11 as plain HTTP (CONTRACT.md, "Transport",
// "Envelopes", "Headers"): mutations are POSTs with the raw JSON input as the
// body, queries are GETs with ?input=<JSON>. Every response is parsed
// strictly; anything unexpected is an error, never a guess.

import {
  type BatchStatusInputPost,
  type BatchStatusOutput,
  type InvestigateNowOutput,
  type InvestigationResult,
  type RegisterObservedVersionOutput,
  type ValidateSettingsOutput,
  type VerdictJob,
  type VerdictRequestInput,
  type VerdictRequestOutput,
  type ViewStatus,
  batchStatusOutput,
  investigateNowOutput,
  investigationResult,
  registerObservedVersionOutput,
  validateSettingsOutput,
  verdictJob,
  verdictRequestOutput,
  viewStatus,
} from "../lib/api-types";
import { type AppealFileOutput, type AppealInput, type AppealRecord, appealFileOutput, appealRecord } from "../lib/appeals";
import { hmacSha256Hex } from "../lib/hash";
import { utf8ByteLength } from "../lib/normalize";
import type { RegisterObservedVersionInput } from "../lib/platform";
import { ShapeError, type Validator, isPlainObject } from "../lib/validate";

export const HEADER_EXTENSION_VERSION = "x-openerrata-extension-version";
export const HEADER_API_KEY = "x-api-key";
export const HEADER_OPENAI_API_KEY = "x-openai-api-key";
export const HEADER_SIGNATURE = "x-openerrata-signature";
/** The attestation key bundled in the public extension; a weak abuse signal, not a secret. */
export const DEFAULT_ATTESTATION_KEY = "openerrata-attestation-v1";
/** The server refuses larger bodies (HTTP 413); they are not sent at all. */
export const MAX_REQUEST_BODY_BYTES = 512 * 1024;
const DEFAULT_TIMEOUT_MS = 20_000;

/**
 * The tRPC namespaces: post.* is OpenErrata's wire contract (unchanged);
 * verdict.* is Errata's own (verdict analyses), which OpenErrata's
 * extension never calls; so is appeal.* (disputes of published claims).
 * All carry the same headers.
 */
export type Namespace = "post" | "verdict" | "appeal";

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface ApiClientConfig {
  /** e.g. http://127.0.0.1:8080 (a trailing slash is ignored). */
  baseUrl: string;
  /** The manifest version, sent on every post.* call. */
  extensionVersion: string;
  /** Instance API key, sent on every post.* call when set. */
  apiKey?: string;
  /** The user's OpenAI key, sent only on investigateNow and validateSettings. */
  openaiApiKey?: string;
  /** Overrides the bundled attestation key for x-openerrata-signature. */
  hmacSecret?: string;
  fetch?: FetchLike;
  timeoutMs?: number;
}

/** The tRPC error codes of the contract, by name. */
export const TRPC_ERROR_CODES = {
  PARSE_ERROR: -32700,
  BAD_REQUEST: -32600,
  UNAUTHORIZED: -32001,
  FORBIDDEN: -32003,
  NOT_FOUND: -32004,
  CONFLICT: -32009,
  PRECONDITION_FAILED: -32012,
  PAYLOAD_TOO_LARGE: -32013,
  TOO_MANY_REQUESTS: -32029,
  INTERNAL_SERVER_ERROR: -32603,
} as const;

export type TrpcErrorName = keyof typeof TRPC_ERROR_CODES;

/** Base of every failure the client reports. */
export class ApiClientError extends Error {
  override name = "ApiClientError";
}

/** The server answered with a well-formed tRPC error envelope. */
export class ApiError extends ApiClientError {
  override name = "ApiError";
  constructor(
    readonly procedure: string,
    readonly httpStatus: number,
    /** The JSON-RPC number, e.g. -32600. */
    readonly code: number,
    /** data.code, e.g. BAD_REQUEST (kept as sent even if this client does not know it). */
    readonly codeName: string,
    /** The server's own message (error.message of the envelope). */
    readonly serverMessage: string,
    /** data.openerrataCode, e.g. UPGRADE_REQUIRED or MALFORMED_EXTENSION_VERSION. */
    readonly openerrataCode: string | undefined,
    readonly data: Readonly<Record<string, unknown>>,
  ) {
    super(`${procedure}: ${codeName}: ${serverMessage}`);
  }

  /** Seconds the server asked to wait (Retry-After of a 429 or 503), when it said. */
  retryAfterSeconds: number | undefined = undefined;
}

/** Retry-After as seconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (!/[a-z]/i.test(text) || Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** The server no longer accepts this extension version; the user must update it. */
export class UpgradeRequiredError extends ApiError {
  override name = "UpgradeRequiredError";
  get minimumSupportedExtensionVersion(): string | undefined {
    const v = this.data["minimumSupportedExtensionVersion"];
    return typeof v === "string" ? v : undefined;
  }
}

/** The request never got an HTTP answer (network down, refused, timed out). */
export class ApiNetworkError extends ApiClientError {
  override name = "ApiNetworkError";
}

/** The server answered something that is not what the contract promises. */
export class ApiResponseError extends ApiClientError {
  override name = "ApiResponseError";
  constructor(
    readonly procedure: string,
    readonly httpStatus: number,
    message: string,
  ) {
    super(`${procedure}: unexpected response (HTTP ${httpStatus}): ${message}`);
  }
}

/** The request body is above the server's limit; it was not sent. */
export class RequestTooLargeError extends ApiClientError {
  override name = "RequestTooLargeError";
  constructor(
    readonly procedure: string,
    readonly bytes: number,
  ) {
    super(`${procedure}: request body of ${bytes} bytes exceeds ${MAX_REQUEST_BODY_BYTES}`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Reads a tRPC error envelope strictly, or returns null when the body is not one. */
export function parseErrorEnvelope(procedure: string, httpStatus: number, body: unknown): ApiError | null {
  if (!isPlainObject(body) || Object.keys(body).length !== 1 || !isPlainObject(body["error"])) return null;
  const error = body["error"];
  const { message, code, data } = error;
  if (Object.keys(error).some((k) => k !== "message" && k !== "code" && k !== "data")) return null;
  if (typeof message !== "string" || typeof code !== "number" || !Number.isInteger(code)) return null;
  if (!isPlainObject(data) || typeof data["code"] !== "string" || typeof data["httpStatus"] !== "number") return null;
  const codeName = data["code"];
  const known = (TRPC_ERROR_CODES as Record<string, number>)[codeName];
  if (known !== undefined && known !== code) return null; // a name and number that disagree
  const openerrataCode = typeof data["openerrataCode"] === "string" ? data["openerrataCode"] : undefined;
  const args = [procedure, httpStatus, code, codeName, message, openerrataCode, data] as const;
  return codeName === "PRECONDITION_FAILED" && openerrataCode === "UPGRADE_REQUIRED"
    ? new UpgradeRequiredError(...args)
    : new ApiError(...args);
}

export class ApiClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly config: ApiClientConfig) {
    this.baseUrl = config.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = config.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  registerObservedVersion(input: RegisterObservedVersionInput): Promise<RegisterObservedVersionOutput> {
    return this.mutation("registerObservedVersion", input, registerObservedVersionOutput);
  }

  recordViewAndGetStatus(input: { postVersionId: string }): Promise<ViewStatus> {
    return this.mutation("recordViewAndGetStatus", input, viewStatus);
  }

  investigateNow(input: { postVersionId: string }): Promise<InvestigateNowOutput> {
    return this.mutation("investigateNow", input, investigateNowOutput, { sendOpenaiKey: true });
  }

  getInvestigation(input: { investigationId: string }): Promise<InvestigationResult> {
    return this.query("getInvestigation", input, investigationResult);
  }

  validateSettings(): Promise<ValidateSettingsOutput> {
    return this.query("validateSettings", undefined, validateSettingsOutput, { sendOpenaiKey: true });
  }

  batchStatus(input: { posts: BatchStatusInputPost[] }): Promise<BatchStatusOutput> {
    return this.query("batchStatus", input, batchStatusOutput);
  }

  /** verdict.request: starts (or finds) the verdict analysis of a registered post version. */
  verdictRequest(input: VerdictRequestInput): Promise<VerdictRequestOutput> {
    return this.mutation("request", input, verdictRequestOutput, {}, "verdict");
  }

  /** verdict.get: the job JSON of a verdict analysis. */
  verdictGet(input: { analysisId: string }): Promise<VerdictJob> {
    return this.query("get", input, verdictJob, {}, "verdict");
  }

  /** appeal.file: disputes a published claim (the same appeal again is answered with duplicate: true). */
  appealFile(input: AppealInput): Promise<AppealFileOutput> {
    return this.mutation("file", input, appealFileOutput, {}, "appeal");
  }

  /** appeal.get: one appeal's state. */
  appealGet(input: { appealId: string }): Promise<AppealRecord> {
    return this.query("get", input, appealRecord, {}, "appeal");
  }

  /** GET /health (no version header). Resolves when the server says status "ok". */
  async health(): Promise<{ status: "ok" }> {
    const response = await this.send("health", `${this.baseUrl}/health`, { method: "GET", headers: {} });
    const text = await response.text();
    const body = parseJson(text);
    if (!response.ok || !isPlainObject(body) || body["status"] !== "ok") {
      throw new ApiResponseError("health", response.status, `expected {"status":"ok"}, got ${text.slice(0, 200)}`);
    }
    return { status: "ok" };
  }

  private headers(options: { sendOpenaiKey?: boolean }): Record<string, string> {
    const headers: Record<string, string> = { [HEADER_EXTENSION_VERSION]: this.config.extensionVersion };
    const apiKey = this.config.apiKey?.trim();
    if (apiKey !== undefined && apiKey.length > 0) headers[HEADER_API_KEY] = apiKey;
    const openaiKey = this.config.openaiApiKey?.trim();
    if (options.sendOpenaiKey === true && openaiKey !== undefined && openaiKey.length > 0) {
      headers[HEADER_OPENAI_API_KEY] = openaiKey;
    }
    return headers;
  }

  private async mutation<T>(
    name: string,
    input: unknown,
    validator: Validator<T>,
    options: { sendOpenaiKey?: boolean } = {},
    namespace: Namespace = "post",
  ): Promise<T> {
    const procedure = `${namespace}.${name}`;
    const body = JSON.stringify(input);
    const bytes = utf8ByteLength(body);
    if (bytes > MAX_REQUEST_BODY_BYTES) throw new RequestTooLargeError(procedure, bytes);
    const secret = this.config.hmacSecret !== undefined && this.config.hmacSecret.length > 0
      ? this.config.hmacSecret
      : DEFAULT_ATTESTATION_KEY;
    const headers = {
      ...this.headers(options),
      "content-type": "application/json",
      [HEADER_SIGNATURE]: await hmacSha256Hex(secret, body),
    };
    const response = await this.send(procedure, `${this.baseUrl}/trpc/${procedure}`, { method: "POST", headers, body });
    return this.readResult(procedure, response, validator);
  }

  private async query<T>(
    name: string,
    input: unknown,
    validator: Validator<T>,
    options: { sendOpenaiKey?: boolean } = {},
    namespace: Namespace = "post",
  ): Promise<T> {
    const procedure = `${namespace}.${name}`;
    const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    const response = await this.send(procedure, `${this.baseUrl}/trpc/${procedure}${query}`, {
      method: "GET",
      headers: this.headers(options),
    });
    return this.readResult(procedure, response, validator);
  }

  private async send(procedure: string, url: string, init: RequestInit): Promise<Response> {
    try {
      return await this.fetchImpl(url, {
        ...init,
        credentials: "omit",
        cache: "no-store",
        signal: AbortSignal.timeout(this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch (error: unknown) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ApiNetworkError(`${procedure}: request to ${url} failed: ${reason}`);
    }
  }

  private async readResult<T>(procedure: string, response: Response, validator: Validator<T>): Promise<T> {
    const text = await response.text();
    const body = parseJson(text);
    if (body === undefined) {
      throw new ApiResponseError(procedure, response.status, `body is not JSON: ${text.slice(0, 200)}`);
    }
    if (!response.ok) {
      const error = parseErrorEnvelope(procedure, response.status, body);
      if (error !== null) {
        error.retryAfterSeconds = parseRetryAfter(response.headers.get("retry-after"));
        throw error;
      }
      throw new ApiResponseError(procedure, response.status, `not a tRPC error envelope: ${text.slice(0, 200)}`);
    }
    if (!isPlainObject(body) || Object.keys(body).length !== 1 || !isPlainObject(body["result"])) {
      throw new ApiResponseError(procedure, response.status, `expected {"result":{"data":...}}`);
    }
    const result = body["result"];
    if (Object.keys(result).length !== 1 || !("data" in result)) {
      throw new ApiResponseError(procedure, response.status, `expected {"result":{"data":...}}`);
    }
    try {
      return validator(result["data"], "result.data");
    } catch (error: unknown) {
      if (error instanceof ShapeError) throw new ApiResponseError(procedure, response.status, error.message);
      throw error;
    }
  }
}
