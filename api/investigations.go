package api

import (
	"context"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/producers/investigations"
	"github.com/errata-dev/errata/projections/serving"
)

// Requester appends investigation requests (producers/investigations.Service).
type Requester interface {
	Request(ctx context.Context, r investigations.Request) (producers.Position, error)
}

// InvestigationReader finds the version of an investigation
// (projections/serving.Reader).
type InvestigationReader interface {
	VersionIDOfInvestigation(ctx context.Context, investigationID string) (string, error)
}

// Option configures optional parts of the API.
type Option func(*Server)

// WithInvestigations enables investigateNow and getInvestigation.
func WithInvestigations(req Requester, reader InvestigationReader) Option {
	return func(s *Server) { s.requester, s.invReader = req, reader }
}

// Assigner decides the configuration of a request
// (producers/investigations.Assigner over the serving projection).
type Assigner = investigations.Assigner

// WithAssigner makes investigateNow request new investigations under the
// configuration the serving projection assigns (the running experiment's
// arm, else the active configuration). Without it every investigation runs
// under the default configuration.
func WithAssigner(a Assigner) Option {
	return func(s *Server) { s.assigner = a }
}

// assignment is the configuration a request for version v runs under: the
// one of its visible investigation when it has one (requested again: a
// FAILED run restarted, a user's key for a PENDING one), else a new
// assignment.
func (s *Server) assignment(ctx context.Context, v serving.VersionStatus) (investigations.Assignment, error) {
	if s.assigner == nil {
		return investigations.Assignment{}, nil
	}
	if v.InvestigationID == "" {
		return s.assigner.Assign(ctx, v.ID)
	}
	a, err := s.assigner.Of(ctx, v.ID, v.InvestigationID)
	if err != nil {
		return a, err
	}
	if events.InvestigationIDFor(v.ID, a.ConfigurationID) != v.InvestigationID {
		return a, errors.New("investigateNow: the assignment does not name the version's investigation")
	}
	return a, nil
}

// isoMillis renders timestamps as ISO-8601 UTC with a Z.
const isoMillis = "2006-01-02T15:04:05.000Z"

// investigateNowOutput is investigateNow's output: claims only on COMPLETE.
type investigateNowOutput struct {
	InvestigationID string  `json:"investigationId"`
	Status          string  `json:"status"`
	Provenance      string  `json:"provenance"`
	Claims          []claim `json:"claims,omitempty"`
}

type investigateNowInput struct {
	PostVersionID string `json:"postVersionId"`
}

// investigateNow asks for the investigation of a registered version. The
// caller needs a valid instance key or its own OpenAI key (which pays for
// the run and is sealed in the key store, never written to the log). The
// request is idempotent: the investigation id derives from the version, so
// concurrent calls name one investigation; an existing one is reported as
// it stands, and only a FAILED one is started again (a new attempt series).
func (s *Server) investigateNow(c *fiber.Ctx, path string) (any, error) {
	if s.requester == nil {
		return nil, newError(CodeNotFound, "investigations are not enabled on this instance")
	}
	var in investigateNowInput
	if err := ingest.DecodeStrict(c.BodyRaw(), &in, ""); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(in.PostVersionID); err != nil || len(in.PostVersionID) != 36 {
		return nil, newError(CodeBadRequest, "postVersionId: must be an id returned by registerObservedVersion")
	}
	_, instanceOK, err := s.authenticate(c)
	if err != nil {
		return nil, err
	}
	userKey := strings.TrimSpace(c.Get(HeaderOpenAIAPIKey))
	if !instanceOK && userKey == "" {
		return nil, newError(CodeUnauthorized, "investigateNow needs a valid instance API key (x-api-key) or your OpenAI API key (x-openai-api-key)")
	}
	if userKey != "" && len(userKey) > 512 {
		return nil, newError(CodeBadRequest, "x-openai-api-key: too long")
	}
	ctx := c.UserContext()
	v, err := s.reader.VersionStatusByID(ctx, strings.ToLower(in.PostVersionID))
	if errors.Is(err, serving.ErrNotFound) {
		return nil, newError(CodeNotFound, "postVersionId: no such version; register it with registerObservedVersion first")
	}
	if err != nil {
		return nil, err
	}
	if v.WordCount > content.WordCountLimit {
		return nil, newError(CodeBadRequest, "the post has more than 10,000 words; posts that long are not investigated")
	}
	// The visible investigation, when the version has one (design rule 3:
	// then nothing new is requested, it is answered with).
	invID := v.InvestigationID
	switch v.InvestigationStatus {
	case events.StatusComplete:
		return investigateNowOutput{InvestigationID: invID, Status: v.InvestigationStatus,
			Provenance: investigationProvenance(v), Claims: claimsOf(v.Claims)}, nil
	case events.StatusProcessing:
		return investigateNowOutput{InvestigationID: invID, Status: v.InvestigationStatus, Provenance: investigationProvenance(v)}, nil
	case events.StatusPending:
		if userKey == "" {
			return investigateNowOutput{InvestigationID: invID, Status: v.InvestigationStatus, Provenance: investigationProvenance(v)}, nil
		}
		// Still PENDING: the user's key may be attached (first key wins).
	}
	caller, err := s.caller(c)
	if err != nil {
		return nil, err
	}
	assignment, err := s.assignment(ctx, v)
	if err != nil {
		return nil, err
	}
	invID = events.InvestigationIDFor(v.ID, assignment.ConfigurationID)
	req := investigations.Request{
		Version: investigations.Version{PostID: v.PostID, PostVersionID: v.ID, Platform: v.Platform,
			ExternalID: v.ExternalID, VersionHash: v.VersionHash},
		Assignment: assignment,
		Source:     events.RequestSourceInvestigateNow, RequesterKey: caller.ViewerKey,
		CorrelationID: caller.CorrelationID, UserKey: logging.Secret(userKey),
	}
	pos, err := s.requester.Request(ctx, req)
	if errors.Is(err, investigations.ErrUserKeysDisabled) && instanceOK {
		req.UserKey = "" // the instance pays
		pos, err = s.requester.Request(ctx, req)
	}
	if errors.Is(err, investigations.ErrUserKeysDisabled) {
		return nil, newError(CodePreconditionFailed, "this instance does not accept OpenAI keys of users; use an instance API key")
	}
	if err != nil {
		return nil, err
	}
	// Read your writes: the status the caller polls next includes the request.
	if err := s.watermark.WaitFor(ctx, pos.Topic, pos.Partition, pos.Offset, s.cfg.ReadYourWritesTimeout); err != nil {
		s.log.Warn("investigateNow: serving projection behind", "err", err)
	}
	status := events.StatusPending
	if v.InvestigationStatus == events.StatusPending || v.InvestigationStatus == events.StatusProcessing {
		status = v.InvestigationStatus
	}
	if now, err := s.reader.VersionStatusByID(ctx, v.ID); err == nil && now.InvestigationStatus != "" {
		status = now.InvestigationStatus
		if status == events.StatusComplete {
			return investigateNowOutput{InvestigationID: invID, Status: status, Provenance: investigationProvenance(now),
				Claims: claimsOf(now.Claims)}, nil
		}
	}
	return investigateNowOutput{InvestigationID: invID, Status: status, Provenance: investigationProvenance(v)}, nil
}

type getInvestigationInput struct {
	InvestigationID string `json:"investigationId"`
}

// failedOutput is getInvestigation's FAILED variant.
type failedOutput struct {
	InvestigationState string `json:"investigationState"`
	Provenance         string `json:"provenance"`
	CheckedAt          string `json:"checkedAt,omitempty"`
}

// investigatedAt is getInvestigation's INVESTIGATED variant (checkedAt required).
type investigatedAt struct {
	InvestigationState string  `json:"investigationState"`
	Provenance         string  `json:"provenance"`
	Claims             []claim `json:"claims"`
	CheckedAt          string  `json:"checkedAt"`
}

// getInvestigation (query) reports an investigation by id: the polling
// target of investigateNow.
func (s *Server) getInvestigation(c *fiber.Ctx, path string) (any, error) {
	if s.invReader == nil {
		return nil, newError(CodeNotFound, "investigations are not enabled on this instance")
	}
	raw, ok, err := queryInput(c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, newError(CodeBadRequest, "input: investigationId is required")
	}
	var in getInvestigationInput
	if err := ingest.DecodeStrict(raw, &in, ""); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(in.InvestigationID); err != nil || len(in.InvestigationID) != 36 {
		return nil, newError(CodeBadRequest, "investigationId: must be an id returned by investigateNow")
	}
	ctx := c.UserContext()
	versionID, err := s.invReader.VersionIDOfInvestigation(ctx, strings.ToLower(in.InvestigationID))
	if errors.Is(err, serving.ErrNotFound) {
		return nil, newError(CodeNotFound, "investigationId: no such investigation")
	}
	if err != nil {
		return nil, err
	}
	v, err := s.reader.VersionStatusByID(ctx, versionID)
	if err != nil {
		return nil, err
	}
	checkedAt := ""
	if v.CheckedAt != nil {
		checkedAt = v.CheckedAt.UTC().Format(isoMillis)
	}
	switch v.InvestigationStatus {
	case events.StatusComplete:
		return investigatedAt{InvestigationState: stateInvestigated, Provenance: investigationProvenance(v),
			Claims: claimsOf(v.Claims), CheckedAt: checkedAt}, nil
	case events.StatusFailed:
		return failedOutput{InvestigationState: "FAILED", Provenance: investigationProvenance(v), CheckedAt: checkedAt}, nil
	}
	return statusOf(v), nil
}
