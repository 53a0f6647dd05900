package api

import (
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/projections/serving"
)

// Investigation states of the status outputs.
const (
	stateNotInvestigated = "NOT_INVESTIGATED"
	stateInvestigating   = "INVESTIGATING"
	stateInvestigated    = "INVESTIGATED"
)

// claimSource is a claim's source: {url, title, snippet}.
type claimSource struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// claim is a flagged claim as the client draws it (CONTRACT.md: every string
// non-empty, at least one source; events.ClaimV1 enforces both).
type claim struct {
	ID        string        `json:"id"`
	Text      string        `json:"text"`
	Context   string        `json:"context"`
	Summary   string        `json:"summary"`
	Reasoning string        `json:"reasoning"`
	Sources   []claimSource `json:"sources"`
}

// claimPayload is a claim of a running investigation: a claim without id.
type claimPayload struct {
	Text      string        `json:"text"`
	Context   string        `json:"context"`
	Summary   string        `json:"summary"`
	Reasoning string        `json:"reasoning"`
	Sources   []claimSource `json:"sources"`
}

// priorInvestigationResult offers a prior verified version's claims as
// interim context.
type priorInvestigationResult struct {
	OldClaims             []claim `json:"oldClaims"`
	SourceInvestigationID string  `json:"sourceInvestigationId"`
}

// notInvestigated is the NOT_INVESTIGATED status variant.
type notInvestigated struct {
	InvestigationState       string                    `json:"investigationState"`
	PriorInvestigationResult *priorInvestigationResult `json:"priorInvestigationResult"`
}

// investigating is the INVESTIGATING status variant; the claim lists are
// always arrays, never null.
type investigating struct {
	InvestigationState       string                    `json:"investigationState"`
	Status                   string                    `json:"status"`
	Provenance               string                    `json:"provenance"`
	PendingClaims            []claimPayload            `json:"pendingClaims"`
	ConfirmedClaims          []claimPayload            `json:"confirmedClaims"`
	PriorInvestigationResult *priorInvestigationResult `json:"priorInvestigationResult"`
}

// investigated is the INVESTIGATED status variant of recordViewAndGetStatus
// (no checkedAt there).
type investigated struct {
	InvestigationState string  `json:"investigationState"`
	Provenance         string  `json:"provenance"`
	Claims             []claim `json:"claims"`
}

// provenanceOf is the version's provenance: SERVER_VERIFIED once any
// observation of it was verified by the server.
func provenanceOf(v serving.Version) string {
	if v.ServerVerifiedAt != nil {
		return events.ProvenanceServerVerified
	}
	return events.ProvenanceClientFallback
}

// statusOf renders the investigation state of exactly this version (strict
// version rule: another version's investigation is never served as its
// result, only as the interim priorInvestigationResult). A FAILED
// investigation reads as NOT_INVESTIGATED: recordViewAndGetStatus never
// returns FAILED.
func statusOf(v serving.VersionStatus) any {
	switch v.InvestigationStatus {
	case events.StatusPending, events.StatusProcessing:
		return investigating{
			InvestigationState: stateInvestigating, Status: v.InvestigationStatus, Provenance: investigationProvenance(v),
			PendingClaims: payloadsOf(v.PendingClaims), ConfirmedClaims: payloadsOf(v.ConfirmedClaims),
			PriorInvestigationResult: priorOf(v.Prior),
		}
	case events.StatusComplete:
		return investigated{InvestigationState: stateInvestigated, Provenance: investigationProvenance(v), Claims: claimsOf(v.Claims)}
	default: // none, or FAILED
		return notInvestigated{InvestigationState: stateNotInvestigated, PriorInvestigationResult: priorOf(v.Prior)}
	}
}

// investigationProvenance is the provenance of what the investigation read,
// or, before it has read anything, of the version.
func investigationProvenance(v serving.VersionStatus) string {
	if v.InvestigationProvenance != "" {
		return v.InvestigationProvenance
	}
	return provenanceOf(v.Version)
}

func claimsOf(in []serving.Claim) []claim {
	out := make([]claim, len(in))
	for i, c := range in {
		sources := make([]claimSource, len(c.Sources))
		for j, s := range c.Sources {
			sources[j] = claimSource{URL: s.URL, Title: s.Title, Snippet: s.Snippet}
		}
		out[i] = claim{ID: c.ID, Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning, Sources: sources}
	}
	return out
}

func priorOf(p *serving.Prior) *priorInvestigationResult {
	if p == nil {
		return nil
	}
	return &priorInvestigationResult{OldClaims: claimsOf(p.Claims), SourceInvestigationID: p.InvestigationID}
}

// payloadsOf renders claims of a running investigation (no ids); never null.
func payloadsOf(in []serving.Claim) []claimPayload {
	out := make([]claimPayload, len(in))
	for i, c := range claimsOf(in) {
		out[i] = claimPayload{Text: c.Text, Context: c.Context, Summary: c.Summary, Reasoning: c.Reasoning, Sources: c.Sources}
	}
	return out
}
