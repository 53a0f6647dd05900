package api

// The tRPC namespace verdict: the verdict analysis of a registered post
// version, for Errata's own extension (the verdict card on Bluesky and
// Threads, the popup's "Verdict for this post"). It is not part of the
// OpenErrata contract, which has only post.* procedures; OpenErrata's
// extension never calls it (contract_test.go). Procedures share the
// contract's envelopes and version gate.
//
//	verdict.request (mutation) {"platform","externalId","postVersionId"} → {"analysisId","status"}
//	verdict.get     (query)    {"analysisId"} → the job JSON of GET /api/v1/analyses/{id}

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers/analyses"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

type verdictRequestInput struct {
	Platform      string `json:"platform"`
	ExternalID    string `json:"externalId"`
	PostVersionID string `json:"postVersionId"`
}

type verdictRequestOutput struct {
	AnalysisID string `json:"analysisId"`
	Status     string `json:"status"`
}

// verdictRequest asks for the verdict analysis of a registered version:
// its canonical text as the serving projection has it. The analysis id
// derives from the version, so repeated and concurrent calls name one
// analysis; an existing one is reported as it stands.
func (s *Server) verdictRequest(c *fiber.Ctx, path string) (any, error) {
	var in verdictRequestInput
	if err := ingest.DecodeStrict(c.BodyRaw(), &in, ""); err != nil {
		return nil, err
	}
	if !events.ValidPlatform(in.Platform) {
		return nil, newError(CodeBadRequest, "platform: must be one of "+strings.Join(events.Platforms, ", "))
	}
	if in.ExternalID == "" || len(in.ExternalID) > 256 || !utf8.ValidString(in.ExternalID) {
		return nil, newError(CodeBadRequest, "externalId: must be 1 to 256 characters")
	}
	if _, err := uuid.Parse(in.PostVersionID); err != nil || len(in.PostVersionID) != 36 {
		return nil, newError(CodeBadRequest, "postVersionId: must be an id returned by registerObservedVersion")
	}
	caller, err := s.caller(c)
	if err != nil {
		return nil, err
	}
	charge := func() error {
		if ok, secs := s.submitAllowed(c, caller); !ok {
			e := newError(CodeTooManyRequests, fmt.Sprintf("too many verdict requests; retry in %d s", secs))
			e.Extra = map[string]any{"retryAfterSeconds": secs}
			c.Set(fiber.HeaderRetryAfter, fmt.Sprint(secs))
			return e
		}
		return nil
	}
	ctx := c.UserContext()
	src, err := s.analyses.Versions.Source(ctx, strings.ToLower(in.PostVersionID))
	if errors.Is(err, serving.ErrNotFound) {
		return nil, newError(CodeNotFound, "postVersionId: no such version; register it with registerObservedVersion first")
	}
	if err != nil {
		return nil, err
	}
	if src.Platform != in.Platform || src.ExternalID != in.ExternalID {
		return nil, newError(CodeBadRequest, "platform and externalId: the version belongs to another post")
	}
	if src.Text == "" {
		return nil, newError(CodeBadRequest, "the post has no text to check")
	}
	if n := utf8.RuneCountInString(src.Text); n > events.MaxAnalysisTextRunes {
		return nil, newError(CodeBadRequest, fmt.Sprintf("the post has %d characters; verdicts are given for posts of at most %d",
			n, events.MaxAnalysisTextRunes))
	}
	input := analyses.Input{Kind: events.AnalysisInputPost, Text: src.Text, URL: src.URL,
		Platform: src.Platform, ExternalID: src.ExternalID, PostID: src.PostID, PostVersionID: src.ID}
	id, _, err := s.requestAnalysis(ctx, input, analyses.Requester{Source: events.AnalysisSourceExtension,
		RequesterKey: caller.ViewerKey, CorrelationID: caller.CorrelationID}, charge)
	if err != nil {
		return nil, err
	}
	status := events.StatusPending
	if a, err := s.analyses.Reader.Analysis(ctx, id); err == nil && a.Status != "" {
		status = a.Status
	}
	return verdictRequestOutput{AnalysisID: id, Status: status}, nil
}

type verdictGetInput struct {
	AnalysisID string `json:"analysisId"`
}

// verdictGet (query) returns the job JSON of an analysis.
func (s *Server) verdictGet(c *fiber.Ctx, path string) (any, error) {
	raw, ok, err := queryInput(c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, newError(CodeBadRequest, "input: analysisId is required")
	}
	var in verdictGetInput
	if err := ingest.DecodeStrict(raw, &in, ""); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(in.AnalysisID); err != nil || len(in.AnalysisID) != 36 {
		return nil, newError(CodeBadRequest, "analysisId: must be an id returned by verdict.request")
	}
	a, err := s.analyses.Reader.Analysis(c.UserContext(), strings.ToLower(in.AnalysisID))
	if errors.Is(err, serving.ErrNotFound) {
		return nil, newError(CodeNotFound, "analysisId: no such analysis")
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}
