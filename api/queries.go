package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

// queryInput returns the JSON input of a tRPC query: the url-decoded value
// of ?input=, or ok=false when the query has no input. A GET carries no
// body, Content-Type or signature, and none is looked at. Input that is not
// JSON is a PARSE_ERROR, for every query (as tRPC parses before routing).
func queryInput(c *fiber.Ctx) (raw []byte, ok bool, err error) {
	args := c.Context().QueryArgs()
	if !args.Has("input") {
		return nil, false, nil
	}
	raw = append([]byte(nil), args.Peek("input")...)
	if !json.Valid(raw) {
		// Let DecodeStrict word the problem, but it is a PARSE_ERROR whatever it says.
		var v any
		var se *ingest.SyntaxError
		if err := ingest.DecodeStrict(raw, &v, ""); errors.As(err, &se) {
			return nil, false, se
		}
		return nil, false, &ingest.SyntaxError{Err: errors.New("input is not valid JSON")}
	}
	return raw, true, nil
}

// settingsOutput is validateSettings' output. The message is present
// exactly for the statuses other than missing and valid.
type settingsOutput struct {
	InstanceAPIKeyAccepted bool   `json:"instanceApiKeyAccepted"`
	OpenAIAPIKeyStatus     string `json:"openaiApiKeyStatus"`
	OpenAIAPIKeyMessage    string `json:"openaiApiKeyMessage,omitempty"`
}

// validateSettings (query, no input) reports whether x-api-key is a valid
// instance key and checks the user's OpenAI key from x-openai-api-key:
// format locally, then live against the configured provider.
func (s *Server) validateSettings(c *fiber.Ctx, path string) (any, error) {
	// The procedure takes no input; one that is sent must still be JSON.
	if _, _, err := queryInput(c); err != nil {
		return nil, err
	}
	_, accepted, err := s.authenticate(c)
	if err != nil {
		return nil, err
	}
	status, msg := s.openai.check(c.UserContext(), c.Get(HeaderOpenAIAPIKey))
	return settingsOutput{InstanceAPIKeyAccepted: accepted, OpenAIAPIKeyStatus: status, OpenAIAPIKeyMessage: msg}, nil
}

// MaxBatchStatusPosts bounds a batchStatus call; each externalId is
// checked as registerObservedVersion checks it (ingest.CheckExternalID).
const MaxBatchStatusPosts = 100

var versionHashFormat = regexp.MustCompile(`^[0-9a-f]{64}$`)

type batchStatusInput struct {
	Posts *[]batchStatusPost `json:"posts"`
}

type batchStatusPost struct {
	Platform    *string `json:"platform"`
	ExternalID  *string `json:"externalId"`
	VersionHash *string `json:"versionHash"`
}

// batchStatusEntry is one status; incorrectClaimCount is 0 on NOT_INVESTIGATED.
type batchStatusEntry struct {
	Platform            string `json:"platform"`
	ExternalID          string `json:"externalId"`
	InvestigationState  string `json:"investigationState"`
	IncorrectClaimCount int    `json:"incorrectClaimCount"`
}

type batchStatusOutput struct {
	Statuses []batchStatusEntry `json:"statuses"`
}

func parseBatchStatusInput(raw []byte, present bool) ([]serving.BatchKey, error) {
	if !present {
		return nil, newError(CodeBadRequest, "input is required: {posts:[{platform, externalId, versionHash}]}")
	}
	var in batchStatusInput
	if err := ingest.DecodeStrict(raw, &in, ""); err != nil {
		return nil, err
	}
	if in.Posts == nil {
		return nil, newError(CodeBadRequest, "posts: required")
	}
	posts := *in.Posts
	if len(posts) < 1 || len(posts) > MaxBatchStatusPosts {
		return nil, newError(CodeBadRequest, fmt.Sprintf("posts: must hold 1 to %d entries, got %d", MaxBatchStatusPosts, len(posts)))
	}
	keys := make([]serving.BatchKey, len(posts))
	for i, p := range posts {
		field := func(name string) string { return fmt.Sprintf("posts[%d].%s", i, name) }
		switch {
		case p.Platform == nil:
			return nil, newError(CodeBadRequest, field("platform")+": required")
		case !events.ValidPlatform(*p.Platform):
			return nil, newError(CodeBadRequest, field("platform")+": must be one of "+strings.Join(events.Platforms, ", "))
		case p.ExternalID == nil:
			return nil, newError(CodeBadRequest, field("externalId")+": required")
		case p.VersionHash == nil:
			return nil, newError(CodeBadRequest, field("versionHash")+": required")
		case !versionHashFormat.MatchString(*p.VersionHash):
			return nil, newError(CodeBadRequest, field("versionHash")+": must be 64 lowercase hex characters")
		}
		// A NUL would reach the query and fail it (an internal error).
		if err := ingest.CheckExternalID(field("externalId"), *p.ExternalID); err != nil {
			return nil, err
		}
		keys[i] = serving.BatchKey{Platform: *p.Platform, ExternalID: *p.ExternalID, VersionHash: *p.VersionHash}
	}
	return keys, nil
}

// batchStatus (query) tells which of up to 100 exact versions have a
// completed investigation, in input order, with one read.
func (s *Server) batchStatus(c *fiber.Ctx, path string) (any, error) {
	raw, present, err := queryInput(c)
	if err != nil {
		return nil, err
	}
	keys, err := parseBatchStatusInput(raw, present)
	if err != nil {
		return nil, err
	}
	got, err := s.reader.BatchStatuses(c.UserContext(), keys)
	if err != nil {
		return nil, err
	}
	if len(got) != len(keys) {
		return nil, fmt.Errorf("batch status: %d answers for %d posts", len(got), len(keys))
	}
	out := batchStatusOutput{Statuses: make([]batchStatusEntry, len(keys))}
	for i, k := range keys {
		e := batchStatusEntry{Platform: k.Platform, ExternalID: k.ExternalID, InvestigationState: stateNotInvestigated}
		if got[i].Investigated {
			e.InvestigationState = stateInvestigated
			e.IncorrectClaimCount = got[i].IncorrectClaimCount
		}
		out.Statuses[i] = e
	}
	return out, nil
}
