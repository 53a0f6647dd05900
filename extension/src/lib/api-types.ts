// Output types of the extension-facing API and their strict validators
// (CONTRACT.md, "Output strictness" and "Output shapes per procedure"), and
// of Errata's own verdict.* namespace (the job JSON of a verdict analysis,
// issue 15), which OpenErrata's extension never calls.

import { PLATFORMS, type Platform } from "./platform";
import {
  type Validator,
  absoluteHttpUrl,
  array,
  boolean,
  integerIn,
  literal,
  matching,
  nonEmptyString,
  nonNegativeInteger,
  nullable,
  numberIn,
  object,
  string,
  variants,
} from "./validate";

export type Provenance = "SERVER_VERIFIED" | "CLIENT_FALLBACK";

export interface ClaimSource {
  url: string;
  title: string;
  snippet: string;
}

/** A claim still being checked (no id yet). */
export interface ClaimPayload {
  text: string;
  context: string;
  summary: string;
  reasoning: string;
  sources: ClaimSource[];
}

/** A flagged claim of a completed investigation. */
export interface Claim extends ClaimPayload {
  id: string;
}

export interface PriorInvestigationResult {
  oldClaims: Claim[];
  sourceInvestigationId: string;
}

export interface RegisterObservedVersionOutput {
  platform: Platform;
  externalId: string;
  versionHash: string;
  postVersionId: string;
  provenance: Provenance;
}

export interface NotInvestigatedStatus {
  investigationState: "NOT_INVESTIGATED";
  priorInvestigationResult: PriorInvestigationResult | null;
}

export interface InvestigatingStatus {
  investigationState: "INVESTIGATING";
  status: "PENDING" | "PROCESSING";
  provenance: Provenance;
  pendingClaims: ClaimPayload[];
  confirmedClaims: ClaimPayload[];
  priorInvestigationResult: PriorInvestigationResult | null;
}

export interface InvestigatedStatus {
  investigationState: "INVESTIGATED";
  provenance: Provenance;
  claims: Claim[];
}

export type ViewStatus = NotInvestigatedStatus | InvestigatingStatus | InvestigatedStatus;

export type InvestigationResult =
  | (NotInvestigatedStatus & { checkedAt?: string })
  | (InvestigatingStatus & { checkedAt?: string })
  | { investigationState: "FAILED"; provenance: Provenance; checkedAt?: string }
  | (InvestigatedStatus & { checkedAt: string });

export type InvestigateNowOutput =
  | { investigationId: string; status: "PENDING" | "PROCESSING"; provenance: Provenance }
  | { investigationId: string; status: "FAILED"; provenance: Provenance }
  | { investigationId: string; status: "COMPLETE"; provenance: Provenance; claims: Claim[] };

export type ValidateSettingsOutput =
  | { instanceApiKeyAccepted: boolean; openaiApiKeyStatus: "missing" | "valid" }
  | {
      instanceApiKeyAccepted: boolean;
      openaiApiKeyStatus: "format_invalid" | "authenticated_restricted" | "invalid" | "error";
      openaiApiKeyMessage: string;
    };

export interface BatchStatusInputPost {
  platform: Platform;
  externalId: string;
  versionHash: string;
}

export type BatchStatusEntry =
  | { platform: Platform; externalId: string; investigationState: "NOT_INVESTIGATED"; incorrectClaimCount: 0 }
  | { platform: Platform; externalId: string; investigationState: "INVESTIGATED"; incorrectClaimCount: number };

export interface BatchStatusOutput {
  statuses: BatchStatusEntry[];
}

// ---- validators -----------------------------------------------------------

const provenance: Validator<Provenance> = literal("SERVER_VERIFIED", "CLIENT_FALLBACK");
const platform: Validator<Platform> = literal(...PLATFORMS);
const versionHash = matching(/^[0-9a-f]{64}$/, "64 lowercase hex characters");
/** ISO-8601 UTC ending in Z. */
export const isoTimestamp = matching(
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/,
  "an ISO-8601 UTC timestamp ending in Z",
);

const claimSource: Validator<ClaimSource> = object({ url: absoluteHttpUrl, title: string, snippet: string });
const claimFields = {
  text: nonEmptyString,
  context: nonEmptyString,
  summary: nonEmptyString,
  reasoning: nonEmptyString,
  sources: array(claimSource, { min: 1 }),
};
const claimPayload: Validator<ClaimPayload> = object(claimFields);
const claim: Validator<Claim> = object({ id: nonEmptyString, ...claimFields });
const priorResult: Validator<PriorInvestigationResult | null> = nullable(
  object({ oldClaims: array(claim), sourceInvestigationId: nonEmptyString }),
);

export const registerObservedVersionOutput: Validator<RegisterObservedVersionOutput> = object({
  platform,
  externalId: nonEmptyString,
  versionHash,
  postVersionId: nonEmptyString,
  provenance,
});

const notInvestigatedFields = {
  investigationState: literal("NOT_INVESTIGATED"),
  priorInvestigationResult: priorResult,
};
const investigatingFields = {
  investigationState: literal("INVESTIGATING"),
  status: literal("PENDING", "PROCESSING"),
  provenance,
  pendingClaims: array(claimPayload),
  confirmedClaims: array(claimPayload),
  priorInvestigationResult: priorResult,
};
const investigatedFields = {
  investigationState: literal("INVESTIGATED"),
  provenance,
  claims: array(claim),
};

export const viewStatus: Validator<ViewStatus> = variants<ViewStatus>("investigationState", {
  NOT_INVESTIGATED: object(notInvestigatedFields),
  INVESTIGATING: object(investigatingFields),
  INVESTIGATED: object(investigatedFields),
});

const checkedAt = { checkedAt: isoTimestamp };
export const investigationResult: Validator<InvestigationResult> = variants<InvestigationResult>("investigationState", {
  NOT_INVESTIGATED: object(notInvestigatedFields, checkedAt),
  INVESTIGATING: object(investigatingFields, checkedAt),
  FAILED: object({ investigationState: literal("FAILED"), provenance }, checkedAt),
  INVESTIGATED: object({ ...investigatedFields, checkedAt: isoTimestamp }),
});

export const investigateNowOutput: Validator<InvestigateNowOutput> = variants<InvestigateNowOutput>("status", {
  PENDING: object({ investigationId: nonEmptyString, status: literal("PENDING", "PROCESSING"), provenance }),
  PROCESSING: object({ investigationId: nonEmptyString, status: literal("PENDING", "PROCESSING"), provenance }),
  FAILED: object({ investigationId: nonEmptyString, status: literal("FAILED"), provenance }),
  COMPLETE: object({ investigationId: nonEmptyString, status: literal("COMPLETE"), provenance, claims: array(claim) }),
});

const settingsWithoutMessage = object({
  instanceApiKeyAccepted: boolean,
  openaiApiKeyStatus: literal("missing", "valid"),
});
const settingsWithMessage = object({
  instanceApiKeyAccepted: boolean,
  openaiApiKeyStatus: literal("format_invalid", "authenticated_restricted", "invalid", "error"),
  openaiApiKeyMessage: nonEmptyString,
});
export const validateSettingsOutput: Validator<ValidateSettingsOutput> = variants<ValidateSettingsOutput>(
  "openaiApiKeyStatus",
  {
    missing: settingsWithoutMessage,
    valid: settingsWithoutMessage,
    format_invalid: settingsWithMessage,
    authenticated_restricted: settingsWithMessage,
    invalid: settingsWithMessage,
    error: settingsWithMessage,
  },
);

export const batchStatusOutput: Validator<BatchStatusOutput> = object({
  statuses: array(
    variants<BatchStatusEntry>("investigationState", {
      NOT_INVESTIGATED: object({
        platform,
        externalId: nonEmptyString,
        investigationState: literal("NOT_INVESTIGATED"),
        incorrectClaimCount: literal(0),
      }),
      INVESTIGATED: object({
        platform,
        externalId: nonEmptyString,
        investigationState: literal("INVESTIGATED"),
        incorrectClaimCount: nonNegativeInteger,
      }),
    }),
  ),
});

// ---- verdict.* (Errata's own namespace) ------------------------------------

/** factSocial's seven post labels. */
export const VERDICT_LABELS = ["True", "MostlyTrue", "Mixed", "Misleading", "False", "Unverifiable", "Opinion"] as const;
export type VerdictLabel = (typeof VERDICT_LABELS)[number];

/** FactHarbor's truth-percentage bands, truest first. */
export const VERDICT_BANDS = [
  "TRUE",
  "MOSTLY-TRUE",
  "LEANING-TRUE",
  "MIXED",
  "UNVERIFIED",
  "LEANING-FALSE",
  "MOSTLY-FALSE",
  "FALSE",
] as const;
export type VerdictBand = (typeof VERDICT_BANDS)[number];

export const TRIAGE_KINDS = ["FACTUAL", "OPINION", "PREDICTION", "NOT_A_CLAIM"] as const;
export type TriageKind = (typeof TRIAGE_KINDS)[number];

export type AnalysisStatus = "PENDING" | "RUNNING" | "COMPLETE" | "FAILED";

export interface VerdictRequestInput {
  platform: Platform;
  externalId: string;
  postVersionId: string;
}

export interface VerdictRequestOutput {
  analysisId: string;
  status: AnalysisStatus;
}

export interface AnalysisInputInfo {
  kind: string;
  url: string | null;
  title: string | null;
  platform: string | null;
  externalId: string | null;
  textLength: number;
}

export interface AnalysisVersions {
  prompts: Array<{ name: string; version: string; sha256: string }>;
  provider: string;
  model: string;
  registry: string;
  policy: string;
  rubric: string;
}

export interface ClaimTriage {
  kind: TriageKind;
  specificity: number;
  timeSensitive: boolean;
  currentEvents: boolean;
  numeric: boolean;
  researched: boolean;
  reason: string;
}

export interface SearchResult {
  url: string;
  title: string;
  snippet: string;
  publishedAt: string | null;
}

export interface ClaimQuery {
  query: string;
  kind: string;
  results: SearchResult[];
  error: string | null;
}

export interface AssessedSource {
  url: string;
  domain: string;
  tier: number;
  rule: string;
  origin: string;
  entail: number;
  contradict: number;
  neutral: number;
}

export interface ConfidenceCap {
  rule: string;
  cap: number;
  before: number;
}

export interface ClaimVerdict {
  engine: string | null;
  score: number;
  gate4: string | null;
  truthPercent: number;
  confidence: number;
  label: VerdictLabel;
  band: VerdictBand;
  caps: ConfidenceCap[];
  summary: string;
}

export interface AnalysisClaim {
  id: string;
  index: number;
  text: string;
  context: string;
  triage: ClaimTriage | null;
  queries: ClaimQuery[];
  sources: AssessedSource[];
  verdict: ClaimVerdict | null;
}

export interface VerdictSource {
  url: string;
  title: string;
  domain: string;
  tier: number;
  fromSearch: boolean;
}

export interface PostVerdict {
  label: VerdictLabel;
  band: VerdictBand;
  truthPercent: number;
  confidence: number;
  caps: ConfidenceCap[];
  summary: string;
  caveats: string[];
  sources: VerdictSource[];
}

/** The job JSON of a verdict analysis (verdict.get, and GET /api/v1/analyses/{id}). */
export interface VerdictJob {
  id: string;
  status: AnalysisStatus;
  input: AnalysisInputInfo;
  versions: AnalysisVersions;
  claims: AnalysisClaim[];
  verdict: PostVerdict | null;
  failure: string | null;
  createdAt: string;
  completedAt: string | null;
}

const analysisStatus: Validator<AnalysisStatus> = literal("PENDING", "RUNNING", "COMPLETE", "FAILED");
const percent = integerIn(0, 100);
const probability = numberIn(0, 1);
const tier = integerIn(1, 5);
const label: Validator<VerdictLabel> = literal(...VERDICT_LABELS);
const band: Validator<VerdictBand> = literal(...VERDICT_BANDS);
const cap: Validator<ConfidenceCap> = object({ rule: string, cap: percent, before: percent });

export const verdictRequestOutput: Validator<VerdictRequestOutput> = object({
  analysisId: nonEmptyString,
  status: analysisStatus,
});

const claimVerdict: Validator<ClaimVerdict> = object({
  engine: nullable(string),
  score: integerIn(-1_000_000, 1_000_000),
  gate4: nullable(string),
  truthPercent: percent,
  confidence: percent,
  label,
  band,
  caps: array(cap),
  summary: string,
});

const analysisClaim: Validator<AnalysisClaim> = object({
  id: nonEmptyString,
  index: nonNegativeInteger,
  text: string,
  context: string,
  triage: nullable(
    object({
      kind: literal(...TRIAGE_KINDS),
      specificity: probability,
      timeSensitive: boolean,
      currentEvents: boolean,
      numeric: boolean,
      researched: boolean,
      reason: string,
    }),
  ),
  queries: array(
    object({
      query: string,
      kind: string,
      results: array(object({ url: string, title: string, snippet: string, publishedAt: nullable(string) })),
      error: nullable(string),
    }),
  ),
  sources: array(
    object({
      url: string,
      domain: string,
      tier,
      rule: string,
      origin: string,
      entail: probability,
      contradict: probability,
      neutral: probability,
    }),
  ),
  verdict: nullable(claimVerdict),
});

export const verdictJob: Validator<VerdictJob> = object({
  id: nonEmptyString,
  status: analysisStatus,
  input: object({
    kind: string,
    url: nullable(string),
    title: nullable(string),
    platform: nullable(string),
    externalId: nullable(string),
    textLength: nonNegativeInteger,
  }),
  versions: object({
    prompts: array(object({ name: string, version: string, sha256: string })),
    provider: string,
    model: string,
    registry: string,
    policy: string,
    rubric: string,
  }),
  claims: array(analysisClaim),
  verdict: nullable(
    object({
      label,
      band,
      truthPercent: percent,
      confidence: percent,
      caps: array(cap),
      summary: string,
      caveats: array(string),
      sources: array(object({ url: string, title: string, domain: string, tier, fromSearch: boolean })),
    }),
  ),
  failure: nullable(string),
  createdAt: string,
  completedAt: nullable(string),
});

/** Whether a job has settled (no more polling). */
export function isSettled(job: Pick<VerdictJob, "status">): boolean {
  return job.status === "COMPLETE" || job.status === "FAILED";
}
