// A small stand-in for the Errata API, faithful to ../../shared/CONTRACT.md:
// tRPC v11 envelopes over plain HTTP (POST mutations with the raw JSON body,
// GET queries with ?input=), the version gate, the numeric error codes, the
// signature on POST bodies, and x-openai-api-key accepted only where the
// contract sends it. Every request is recorded so tests can check headers.
//
// Investigations follow per-post scripts (keyed by externalId); anything not
// scripted is NOT_INVESTIGATED. Used by the end-to-end tests when
// ERRATA_E2E_API_URL does not name a real server.

import { createHash, createHmac } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { type AddressInfo, isIP } from "node:net";
import type { Claim, ClaimPayload, InvestigationResult, VerdictJob, ViewStatus } from "../../src/lib/api-types";
import type { AppealRecord } from "../../src/lib/appeals";
import { failedJob, hostileJob, lightningJob, wallJob } from "../verdict-jobs";
import { CLIMATE, EINSTEIN, LESSWRONG, X_POST, payload } from "./claims";

export const STUB_INSTANCE_KEY = "e2e-instance-key";
export const ATTESTATION_KEY = "openerrata-attestation-v1";

const CODES = {
  PARSE_ERROR: [-32700, 400],
  BAD_REQUEST: [-32600, 400],
  UNAUTHORIZED: [-32001, 401],
  NOT_FOUND: [-32004, 404],
  CONFLICT: [-32009, 409],
  PRECONDITION_FAILED: [-32012, 412],
  TOO_MANY_REQUESTS: [-32029, 429],
  INTERNAL_SERVER_ERROR: [-32603, 500],
} as const;

class TrpcError extends Error {
  constructor(
    readonly code: keyof typeof CODES,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** One appeal (appeal.*): decided after a few reads, RETRACTED when the reason carries the marker, else UPHELD. */
interface StubAppeal {
  appealId: string;
  claimId: string;
  role: "READER" | "AUTHOR";
  reason: string;
  filedAt: string;
  reads: number;
  decidedAt: string | null;
}

/** A reason containing this is retracted on review; anything else is upheld. */
export const APPEAL_RETRACT_MARKER = "[retract]";
/** A reason containing this is decided with a hostile decision reason (markup, bidi override). */
export const APPEAL_HOSTILE_MARKER = "[hostile]";
export const APPEAL_RETRACTED_REASON = "Test decision: the cited source shows the sentence is accurate; the flag is withdrawn.";
export const APPEAL_UPHELD_REASON = "Test decision: the sources given do not contradict the published evidence.";
export const APPEAL_HOSTILE_REASON = '<img src=x onerror="alert(1)"> \u202Edesrever\u202C <b>bold</b> stands';
/** Host names the stub "resolves" to a private address (the server refuses them after resolving). */
export const APPEAL_PRIVATE_SUFFIX = ".internal";

function appealUrlProblem(raw: unknown, i: number): string | null {
  if (typeof raw !== "string") return `urls[${i}]: must be a string`;
  if (Buffer.byteLength(raw, "utf8") > 2048) return `url ${i} is longer than 2048 bytes or not UTF-8`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `url ${i} is not an absolute http(s) URL without credentials`;
  }
  if (!/^https?:\/\//i.test(raw) || (url.protocol !== "http:" && url.protocol !== "https:") || url.username !== "" || url.password !== "" || /^[a-z]+:\/\/[^/?#]*@/i.test(raw)) {
    return `url ${i} is not an absolute http(s) URL without credentials`;
  }
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return `url ${i} names a local host`;
  if (isIP(host) === 4) {
    const [a = 0, b = 0] = host.split(".").map(Number);
    if (a === 0 || a === 10 || a === 127 || a >= 224 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) {
      return `url ${i} names a non-public address`;
    }
  }
  if (isIP(host) === 6 && /^(::1?|f[cd]|fe[89ab]|ff|::ffff:(7f|a|c0a8|a9fe))/.test(host)) return `url ${i} names a non-public address`;
  if (host.endsWith(APPEAL_PRIVATE_SUFFIX)) return `url ${i}: ${url.hostname} resolves to a non-public address`;
  return null;
}

export interface RecordedRequest {
  method: string;
  path: string;
  procedure: string;
  headers: Record<string, string | undefined>;
  input: unknown;
}

/** One investigation's script: the answer of investigateNow, then of each getInvestigation in turn (the last repeats). */
interface Script {
  view: "NOT_INVESTIGATED" | "INVESTIGATED_NOW";
  claims?: Claim[];
  /** investigateNow answers, in turn (the last repeats). */
  investigateNow?: Array<"PENDING" | "PROCESSING" | "FAILED" | "COMPLETE">;
  /** getInvestigation answers, in turn (the last repeats). */
  polls?: InvestigationResult[];
  /** registerObservedVersion fails with this error. */
  registerFails?: keyof typeof CODES;
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

const investigating = (pending: ClaimPayload[], confirmed: ClaimPayload[]): InvestigationResult => ({
  investigationState: "INVESTIGATING",
  status: "PROCESSING",
  provenance: "CLIENT_FALLBACK",
  pendingClaims: pending,
  confirmedClaims: confirmed,
  priorInvestigationResult: null,
});

const done = (claims: Claim[]): InvestigationResult => ({
  investigationState: "INVESTIGATED",
  provenance: "CLIENT_FALLBACK",
  claims,
  checkedAt: now(),
});

/**
 * Verdict analyses (verdict.*, Errata's own namespace) by what the post's
 * text starts with: each verdict.get advances the job one step (queued,
 * claims, searches with their results, claim verdicts, the verdict); the
 * opinion post's job is hostile (markup where the API's strings go); one
 * post's analysis fails. Any other text gets the Great Wall job too.
 */
const VERDICT_SCRIPTS: Array<{ startsWith: string; jobs: (id: string) => VerdictJob[] }> = [
  { startsWith: "Honestly the first season", jobs: (id) => [hostileJob(id)] },
  { startsWith: "Hot take: pineapple", jobs: (id) => [wallJob(1, id), failedJob(id)] },
  { startsWith: "Reminder before tonight's storm", jobs: (id) => [0, 1, 2, 3, 4, 5].map((step) => lightningJob(step, id)) },
  { startsWith: "", jobs: (id) => [0, 1, 2, 3, 4, 5].map((step) => wallJob(step, id)) },
];

/** The scripted posts of the end-to-end fixtures, by externalId. */
export function defaultScripts(): Map<string, Script> {
  return new Map<string, Script>([
    // Wikipedia, Albert Einstein: investigated already; exact, context, fuzzy and unplaceable claims.
    ["en:736", { view: "INVESTIGATED_NOW", claims: [EINSTEIN.exact, EINSTEIN.repeated, EINSTEIN.fuzzy, EINSTEIN.missing] }],
    // LessWrong: Investigate Now from the popup, live claims on the first poll, done on the second.
    [
      "ioZxrP7BhS5ArK59w",
      {
        view: "NOT_INVESTIGATED",
        investigateNow: ["PENDING"],
        polls: [investigating([payload(LESSWRONG.second)], [payload(LESSWRONG.confirmed)]), done([LESSWRONG.confirmed, LESSWRONG.second])],
      },
    ],
    // Wikipedia, Climate change: the first run fails; Retry starts one that completes.
    [
      "en:5042951",
      { view: "NOT_INVESTIGATED", investigateNow: ["FAILED", "PENDING"], polls: [done([CLIMATE.deserts])] },
    ],
    // X (dark page): auto-investigated with the user's key.
    ["1790000000000000202", { view: "NOT_INVESTIGATED", investigateNow: ["PROCESSING"], polls: [done([X_POST.cable])] }],
    // X, the parent post of the thread: the server fails (the popup's error state after an in-page navigation).
    ["1790000000000000201", { view: "NOT_INVESTIGATED", registerFails: "INTERNAL_SERVER_ERROR" }],
    // Substack: investigated, nothing wrong.
    ["148000777", { view: "INVESTIGATED_NOW", claims: [] }],
  ]);
}

function isVersion(v: string): boolean {
  const parts = v.split(".");
  return parts.length >= 1 && parts.length <= 4 && parts.every((p) => /^\d{1,5}$/.test(p) && Number(p) <= 65535);
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 4; i += 1) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export class StubApi {
  readonly requests: RecordedRequest[] = [];
  /** Requests that broke a contract rule (wrong header placement, bad signature...). */
  readonly violations: string[] = [];
  minimumVersion = "0.2.0";
  private server: Server | null = null;
  private scripts = defaultScripts();
  private readonly investigations = new Map<string, { externalId: string; polls: number }>();
  private readonly runs = new Map<string, number>();
  private readonly versions = new Map<string, { externalId: string; platform: string; text: string }>();
  /** Verdict analyses by id: their scripted jobs and how many reads they had. */
  private readonly analyses = new Map<string, { jobs: VerdictJob[]; reads: number; postVersionId: string }>();
  private readonly appeals = new Map<string, StubAppeal>();
  private readonly retractedClaims = new Set<string>();
  private readonly appealFilings = new Map<string, number>();
  /** appeal.file calls per client (x-api-key, or anonymous) before it answers 429. */
  appealFloodLimit = 20;
  /** appeal.get reads of an appeal that still answer OPEN. */
  appealReadsBeforeDecision = 2;

  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (address === undefined || address === null) throw new Error("stub not started");
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    return this.url;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server === null ? resolve() : this.server.close(() => resolve())));
    this.server = null;
  }

  /** Back to the initial scripts (investigations start over). */
  reset(): void {
    this.scripts = defaultScripts();
    this.investigations.clear();
    this.runs.clear();
    this.analyses.clear();
    this.appeals.clear();
    this.retractedClaims.clear();
    this.appealFilings.clear();
    this.appealFloodLimit = 20;
    this.appealReadsBeforeDecision = 2;
    this.minimumVersion = "0.2.0";
  }

  calls(procedure: string): RecordedRequest[] {
    return this.requests.filter((r) => r.procedure === procedure);
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "content-type": "application/json", "access-control-allow-origin": "*", ...headers });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://stub");
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const header = (name: string): string | undefined => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "access-control-allow-origin": "*", "access-control-allow-headers": "*", "access-control-allow-methods": "GET, POST" });
      res.end();
      return;
    }
    if (url.pathname === "/health" && req.method === "GET") {
      this.requests.push({ method: "GET", path: "/health", procedure: "health", headers: {}, input: undefined });
      this.send(res, 200, { status: "ok", minimumSupportedExtensionVersion: this.minimumVersion });
      return;
    }
    const match = /^\/trpc\/(post|verdict|appeal)\.([A-Za-z]+)$/.exec(url.pathname);
    // post.* procedures are recorded by name (as the contract knows them); verdict.* and appeal.* with their namespace.
    const procedure = match === null ? "" : match[1] === "post" ? (match[2] ?? "") : `${match[1] ?? ""}.${match[2] ?? ""}`;
    const headers = {
      version: header("x-openerrata-extension-version"),
      apiKey: header("x-api-key"),
      openaiKey: header("x-openai-api-key"),
      signature: header("x-openerrata-signature"),
      contentType: header("content-type"),
    };
    let input: unknown;
    try {
      if (req.method === "POST") input = JSON.parse(body) as unknown;
      else {
        const raw = url.searchParams.get("input");
        input = raw === null ? undefined : (JSON.parse(raw) as unknown);
      }
    } catch {
      this.send(res, 400, this.envelope(new TrpcError("PARSE_ERROR", "input is not JSON"), procedure));
      return;
    }
    this.requests.push({
      method: req.method ?? "",
      path: url.pathname,
      procedure,
      headers: { ...headers, signature: headers.signature === undefined ? undefined : "(present)" },
      input,
    });
    try {
      this.checkHeaders(req.method ?? "", procedure, headers, body);
      const data = this.dispatch(procedure, req.method ?? "", input as Record<string, unknown>, headers);
      this.send(res, 200, { result: { data } });
    } catch (error: unknown) {
      const e = error instanceof TrpcError ? error : new TrpcError("INTERNAL_SERVER_ERROR", String(error));
      this.send(res, CODES[e.code][1], this.envelope(e, procedure), e.headers);
    }
  }

  private envelope(error: TrpcError, procedure: string): unknown {
    const [code, httpStatus] = CODES[error.code];
    const path = procedure.includes(".") ? procedure : `post.${procedure}`;
    return { error: { message: error.message, code, data: { code: error.code, httpStatus, path, ...error.extra } } };
  }

  private checkHeaders(
    method: string,
    procedure: string,
    headers: { version?: string | undefined; openaiKey?: string | undefined; signature?: string | undefined; contentType?: string | undefined },
    body: string,
  ): void {
    const version = headers.version;
    if (version === undefined || compareVersions(version, this.minimumVersion) < 0) {
      if (version !== undefined && !isVersion(version)) {
        throw new TrpcError("BAD_REQUEST", "malformed extension version", { openerrataCode: "MALFORMED_EXTENSION_VERSION" });
      }
      throw new TrpcError("PRECONDITION_FAILED", "extension upgrade required", {
        openerrataCode: "UPGRADE_REQUIRED",
        minimumSupportedExtensionVersion: this.minimumVersion,
        receivedExtensionVersion: version ?? "",
      });
    }
    if (!isVersion(version)) throw new TrpcError("BAD_REQUEST", "malformed extension version", { openerrataCode: "MALFORMED_EXTENSION_VERSION" });
    if (headers.openaiKey !== undefined && procedure !== "investigateNow" && procedure !== "validateSettings") {
      this.violations.push(`x-openai-api-key sent on ${procedure}`);
    }
    if (method === "POST") {
      const expected = createHmac("sha256", ATTESTATION_KEY).update(body, "utf8").digest("hex");
      if (headers.signature !== expected) this.violations.push(`bad or missing signature on ${procedure}`);
      if (headers.contentType?.startsWith("application/json") !== true) this.violations.push(`POST ${procedure} without JSON content type`);
    } else if (headers.signature !== undefined || headers.contentType !== undefined) {
      this.violations.push(`GET ${procedure} carries a signature or content type`);
    }
  }

  private dispatch(
    procedure: string,
    method: string,
    input: Record<string, unknown>,
    headers: { apiKey?: string | undefined; openaiKey?: string | undefined },
  ): unknown {
    const mutation = ["registerObservedVersion", "recordViewAndGetStatus", "investigateNow", "verdict.request", "appeal.file"].includes(procedure);
    const query = ["getInvestigation", "validateSettings", "batchStatus", "verdict.get", "appeal.get", "appeal.ofClaim"].includes(procedure);
    if ((!mutation && !query) || (mutation && method !== "POST") || (query && method !== "GET")) {
      throw new TrpcError("NOT_FOUND", `no procedure post.${procedure} for ${method}`);
    }
    switch (procedure) {
      case "registerObservedVersion":
        return this.register(input);
      case "recordViewAndGetStatus":
        return this.view(String(input["postVersionId"]));
      case "investigateNow":
        if (headers.apiKey !== STUB_INSTANCE_KEY && (headers.openaiKey ?? "").trim().length === 0) {
          throw new TrpcError("UNAUTHORIZED", "an instance API key or an OpenAI key is required");
        }
        return this.investigateNow(String(input["postVersionId"]));
      case "getInvestigation":
        return this.getInvestigation(String(input["investigationId"]));
      case "verdict.request":
        return this.verdictRequest(input);
      case "verdict.get":
        return this.verdictGet(input);
      case "appeal.file":
        return this.appealFile(input, headers.apiKey);
      case "appeal.get": {
        const appeal = this.appeals.get(String(input?.["appealId"]));
        if (appeal === undefined) throw new TrpcError("NOT_FOUND", "appealId: no such appeal");
        appeal.reads += 1;
        return this.appealView(appeal);
      }
      case "appeal.ofClaim":
        return { appeals: [...this.appeals.values()].filter((a) => a.claimId === input?.["claimId"]).map((a) => this.appealView(a)) };
      case "validateSettings": {
        const key = headers.openaiKey?.trim() ?? "";
        const accepted = headers.apiKey === STUB_INSTANCE_KEY;
        if (key.length === 0) return { instanceApiKeyAccepted: accepted, openaiApiKeyStatus: "missing" };
        if (!key.startsWith("sk-")) {
          return { instanceApiKeyAccepted: accepted, openaiApiKeyStatus: "format_invalid", openaiApiKeyMessage: "OpenAI keys start with sk-" };
        }
        return { instanceApiKeyAccepted: accepted, openaiApiKeyStatus: "valid" };
      }
      default:
        throw new TrpcError("NOT_FOUND", `post.${procedure} is not implemented by the stub`);
    }
  }

  private register(input: Record<string, unknown>): unknown {
    const platform = String(input["platform"]);
    const metadata = (input["metadata"] ?? {}) as Record<string, unknown>;
    const externalId =
      platform === "WIKIPEDIA" ? `${String(metadata["language"])}:${String(metadata["pageId"])}` : String(input["externalId"]);
    if (!["LESSWRONG", "X", "SUBSTACK", "WIKIPEDIA", "BLUESKY", "THREADS"].includes(platform)) throw new TrpcError("BAD_REQUEST", "unknown platform");
    // The server's identity rules (events/content/social.go).
    if (platform === "BLUESKY") {
      if (!/^at:\/\/did:(?:plc:[a-z2-7]{24}|web:[a-z0-9.-]+)\/app\.bsky\.feed\.post\/[2-7a-j][2-7a-z]{12}$/.test(externalId)) {
        throw new TrpcError("BAD_REQUEST", "externalId: must be the post's AT URI at://{did}/app.bsky.feed.post/{rkey}");
      }
      if (typeof metadata["handle"] !== "string" || !/^(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*$/.test(metadata["handle"])) {
        throw new TrpcError("BAD_REQUEST", "metadata.handle: a handle is a domain name such as alice.bsky.social");
      }
    }
    if (platform === "THREADS") {
      if (!/^[A-Za-z0-9_-]{5,64}$/.test(externalId)) throw new TrpcError("BAD_REQUEST", "externalId: must be the Threads post code");
      if (typeof metadata["username"] !== "string" || !/^[a-z0-9._]{1,30}$/.test(metadata["username"])) {
        throw new TrpcError("BAD_REQUEST", "metadata.username: 1 to 30 letters, digits, periods or underscores");
      }
    }
    if (platform === "LESSWRONG" && ("observedContentText" in input || typeof metadata["htmlContent"] !== "string")) {
      throw new TrpcError("BAD_REQUEST", "LessWrong sends htmlContent and no observedContentText");
    }
    if (platform !== "LESSWRONG" && typeof input["observedContentText"] !== "string") {
      throw new TrpcError("BAD_REQUEST", "observedContentText is required");
    }
    if (platform === "WIKIPEDIA" && "externalId" in input) throw new TrpcError("BAD_REQUEST", "Wikipedia sends no externalId");
    const failure = this.scripts.get(externalId)?.registerFails;
    if (failure !== undefined) throw new TrpcError(failure, "scripted failure");
    const text = String(input["observedContentText"] ?? metadata["htmlContent"] ?? "");
    const versionHash = createHash("sha256").update(text, "utf8").digest("hex");
    const postVersionId = `pv-${createHash("sha256").update(`${platform}:${externalId}:${versionHash}`).digest("hex").slice(0, 16)}`;
    this.versions.set(postVersionId, { externalId, platform, text });
    return { platform, externalId, versionHash, postVersionId, provenance: "CLIENT_FALLBACK" };
  }

  /** verdict.request: one analysis per version (its id derives from it), as the server does. */
  private verdictRequest(input: Record<string, unknown>): unknown {
    const keys = Object.keys(input).sort().join(",");
    if (keys !== "externalId,platform,postVersionId") throw new TrpcError("BAD_REQUEST", `verdict.request takes platform, externalId and postVersionId, got ${keys}`);
    const postVersionId = String(input["postVersionId"]);
    const version = this.versions.get(postVersionId);
    if (version === undefined) throw new TrpcError("NOT_FOUND", "postVersionId: no such version; register it with registerObservedVersion first");
    if (version.platform !== input["platform"] || version.externalId !== input["externalId"]) {
      throw new TrpcError("BAD_REQUEST", "platform and externalId: the version belongs to another post");
    }
    const hex = createHash("sha256").update(`analysis:${postVersionId}`).digest("hex");
    const analysisId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    if (!this.analyses.has(analysisId)) {
      const script = VERDICT_SCRIPTS.find((v) => version.text.startsWith(v.startsWith)) ?? VERDICT_SCRIPTS[VERDICT_SCRIPTS.length - 1];
      this.analyses.set(analysisId, { jobs: script?.jobs(analysisId) ?? [], reads: 0, postVersionId });
    }
    const analysis = this.analyses.get(analysisId);
    const current = analysis?.jobs[Math.max(0, Math.min((analysis?.reads ?? 0) - 1, analysis.jobs.length - 1))];
    return { analysisId, status: analysis !== undefined && analysis.reads > 0 ? (current?.status ?? "PENDING") : "PENDING" };
  }

  private verdictGet(input: Record<string, unknown>): VerdictJob {
    const analysis = this.analyses.get(String(input["analysisId"]));
    if (analysis === undefined) throw new TrpcError("NOT_FOUND", "analysisId: no such analysis");
    const job = analysis.jobs[Math.min(analysis.reads, analysis.jobs.length - 1)];
    analysis.reads += 1;
    if (job === undefined) throw new TrpcError("INTERNAL_SERVER_ERROR", "no job scripted");
    return job;
  }

  /** A claim withdrawn after an appeal is in no answer any more (as the server filters it). */
  private unretracted(claims: Claim[]): Claim[] {
    return claims.filter((c) => !this.retractedClaims.has(c.id));
  }

  /** Every claim id a script publishes (the claims an appeal may name). */
  private publishedClaims(): Set<string> {
    const ids = new Set<string>();
    for (const script of this.scripts.values()) {
      for (const claim of script.claims ?? []) ids.add(claim.id);
      for (const poll of script.polls ?? []) if (poll.investigationState === "INVESTIGATED") for (const claim of poll.claims) ids.add(claim.id);
    }
    return ids;
  }

  /** appeal.file, validated like the server: shape, reason, URLs, the published claim, conflicts, the client's rate. */
  private appealFile(input: Record<string, unknown>, apiKey: string | undefined): unknown {
    // The per-client limit counts every attempt, valid or not.
    const requester = apiKey ?? "anonymous";
    const filings = (this.appealFilings.get(requester) ?? 0) + 1;
    this.appealFilings.set(requester, filings);
    if (filings > this.appealFloodLimit) {
      throw new TrpcError("TOO_MANY_REQUESTS", "too many appeals from this client; slow down", {}, { "retry-after": "30" });
    }
    if (input === null || typeof input !== "object" || Array.isArray(input)) throw new TrpcError("BAD_REQUEST", "input must be an object");
    const keys = Object.keys(input).sort().join(",");
    if (keys !== "claimId,reason,role,urls") throw new TrpcError("BAD_REQUEST", `appeal.file takes claimId, role, reason and urls, got ${keys}`);
    const { claimId, role, reason, urls } = input;
    if (typeof claimId !== "string" || claimId.length === 0) throw new TrpcError("BAD_REQUEST", "claimId: required");
    if (role !== "READER" && role !== "AUTHOR") throw new TrpcError("BAD_REQUEST", "role: READER or AUTHOR");
    if (typeof reason !== "string") throw new TrpcError("BAD_REQUEST", "reason: required");
    const runes = Array.from(reason).length;
    if (runes < 10 || runes > 2000) throw new TrpcError("BAD_REQUEST", "reason must be 10 to 2000 characters of valid UTF-8");
    if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(reason)) throw new TrpcError("BAD_REQUEST", "reason contains control characters");
    if (!Array.isArray(urls)) throw new TrpcError("BAD_REQUEST", "urls: an array");
    if (urls.length > 5) throw new TrpcError("BAD_REQUEST", "at most 5 urls");
    if (new Set(urls).size !== urls.length) throw new TrpcError("BAD_REQUEST", "urls repeat");
    urls.forEach((u, i) => {
      const problem = appealUrlProblem(u, i);
      if (problem !== null) throw new TrpcError("BAD_REQUEST", problem);
    });
    if (!this.publishedClaims().has(claimId)) throw new TrpcError("NOT_FOUND", "claimId: no such published claim");
    if (this.retractedClaims.has(claimId)) throw new TrpcError("CONFLICT", "the claim was already withdrawn after an appeal");
    const hex = createHash("sha256").update(JSON.stringify([claimId, requester, reason, urls])).digest("hex");
    const appealId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    const existing = this.appeals.get(appealId);
    if (existing !== undefined) return { appealId, status: this.appealView(existing).status, duplicate: true };
    const open = [...this.appeals.values()].filter((a) => a.claimId === claimId && a.decidedAt === null).length;
    if (open >= 3) throw new TrpcError("CONFLICT", "too many open appeals on this claim");
    this.appeals.set(appealId, { appealId, claimId, role, reason, filedAt: now(), reads: 0, decidedAt: null });
    return { appealId, status: "OPEN", duplicate: false };
  }

  private appealView(appeal: StubAppeal): AppealRecord {
    const decided = appeal.reads > this.appealReadsBeforeDecision;
    if (decided && appeal.decidedAt === null) appeal.decidedAt = now();
    const retract = appeal.reason.includes(APPEAL_RETRACT_MARKER);
    if (decided && retract) this.retractedClaims.add(appeal.claimId);
    const decisionReason = appeal.reason.includes(APPEAL_HOSTILE_MARKER)
      ? APPEAL_HOSTILE_REASON
      : retract
        ? APPEAL_RETRACTED_REASON
        : APPEAL_UPHELD_REASON;
    return {
      appealId: appeal.appealId,
      claimId: appeal.claimId,
      status: decided ? (retract ? "RETRACTED" : "UPHELD") : "OPEN",
      role: appeal.role,
      filedAt: appeal.filedAt,
      decidedAt: decided ? appeal.decidedAt : null,
      decisionReason: decided ? decisionReason : null,
    };
  }

  /** How many times an analysis's job was read (verdict.get). */
  verdictReads(): number {
    return [...this.analyses.values()].reduce((n, a) => n + a.reads, 0);
  }

  private script(postVersionId: string): { externalId: string; script: Script | undefined } {
    const version = this.versions.get(postVersionId);
    if (version === undefined) throw new TrpcError("NOT_FOUND", "unknown post version");
    return { externalId: version.externalId, script: this.scripts.get(version.externalId) };
  }

  private view(postVersionId: string): ViewStatus {
    const version = this.versions.get(postVersionId);
    if (version === undefined) return { investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null };
    const { script } = this.script(postVersionId);
    const investigation = [...this.investigations.entries()].find(([, v]) => v.externalId === version.externalId);
    if (investigation !== undefined) {
      const result = this.resultOf(investigation[0], false);
      if (result.investigationState === "INVESTIGATED") {
        return { investigationState: "INVESTIGATED", provenance: result.provenance, claims: this.unretracted(result.claims) };
      }
      if (result.investigationState === "INVESTIGATING") {
        const { checkedAt: _c, ...status } = result;
        return status;
      }
    }
    if (script?.view === "INVESTIGATED_NOW") {
      return { investigationState: "INVESTIGATED", provenance: "CLIENT_FALLBACK", claims: this.unretracted(script.claims ?? []) };
    }
    return { investigationState: "NOT_INVESTIGATED", priorInvestigationResult: null };
  }

  private investigateNow(postVersionId: string): unknown {
    const { externalId, script } = this.script(postVersionId);
    const run = this.runs.get(externalId) ?? 0;
    this.runs.set(externalId, run + 1);
    const answers = script?.investigateNow ?? ["COMPLETE"];
    const status = answers[Math.min(run, answers.length - 1)] ?? "COMPLETE";
    const investigationId = `inv-${externalId.replace(/[^A-Za-z0-9]/g, "")}-${run + 1}`;
    this.investigations.set(investigationId, { externalId, polls: 0 });
    if (status === "COMPLETE") {
      return { investigationId, status, provenance: "CLIENT_FALLBACK", claims: script?.claims ?? [] };
    }
    return { investigationId, status, provenance: "CLIENT_FALLBACK" };
  }

  private resultOf(investigationId: string, advance: boolean): InvestigationResult {
    const investigation = this.investigations.get(investigationId);
    if (investigation === undefined) throw new TrpcError("NOT_FOUND", "unknown investigation");
    const script = this.scripts.get(investigation.externalId);
    const run = this.runs.get(investigation.externalId) ?? 1;
    const answers = script?.investigateNow ?? ["COMPLETE"];
    const status = answers[Math.min(run - 1, answers.length - 1)];
    if (status === "FAILED") return { investigationState: "FAILED", provenance: "CLIENT_FALLBACK", checkedAt: now() };
    const polls = script?.polls ?? [done(script?.claims ?? [])];
    const index = Math.min(Math.max(investigation.polls - (advance ? 0 : 1), 0), polls.length - 1);
    if (advance) investigation.polls += 1;
    const result = polls[index] ?? done([]);
    return result.investigationState === "INVESTIGATED" ? { ...result, claims: this.unretracted(result.claims), checkedAt: now() } : result;
  }

  private getInvestigation(investigationId: string): InvestigationResult {
    return this.resultOf(investigationId, true);
  }
}
