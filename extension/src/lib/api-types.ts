// Output types of the extension-facing API and their strict validators
// (CONTRACT.md, "Output strictness" and "Output shapes per procedure").

import { PLATFORMS, type Platform } from "./platform";
import {
  type Validator,
  absoluteHttpUrl,
  array,
  boolean,
  literal,
  matching,
  nonEmptyString,
  nonNegativeInteger,
  nullable,
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
