package api

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/producers/appeals"
	"github.com/errata-dev/errata/producers/ingest"
)

// The appeal namespace: a reader or an author disputes a published claim.
// It is Errata's own, outside the OpenErrata contract.

// AppealFiler files appeals (producers/appeals.Service).
type AppealFiler interface {
	File(ctx context.Context, r appeals.Request) (appeals.Filed, error)
}

// AppealReader reads appeals (the serving projection, through
// producers/appeals' Reader).
type AppealReader interface {
	Appeal(ctx context.Context, id string) (appeals.Appeal, error)
	AppealsOfClaim(ctx context.Context, claimID string) ([]appeals.Appeal, error)
}

// appealAPI is the namespace's collaborators.
type appealAPI struct {
	filer  AppealFiler
	reader AppealReader
}

// WithAppeals enables appeal.file, appeal.get and appeal.ofClaim.
func WithAppeals(filer AppealFiler, reader AppealReader) Option {
	return func(s *Server) { s.appeals = &appealAPI{filer: filer, reader: reader} }
}

func (s *Server) appealRoutes() {
	s.app.Post("/trpc/appeal.file", s.procedure("appeal.file", s.fileAppeal))
	s.app.Get("/trpc/appeal.get", s.procedure("appeal.get", s.getAppeal))
	s.app.Get("/trpc/appeal.ofClaim", s.procedure("appeal.ofClaim", s.appealsOfClaim))
}

type fileAppealInput struct {
	ClaimID string   `json:"claimId"`
	Role    string   `json:"role"`
	Reason  string   `json:"reason"`
	URLs    []string `json:"urls"`
}

type fileAppealOutput struct {
	AppealID  string `json:"appealId"`
	Status    string `json:"status"`
	Duplicate bool   `json:"duplicate"`
}

// fileAppeal files an appeal of a published claim. The same appeal again
// (same caller, claim, reason and URLs) is the same appeal: it is
// reported with duplicate true and nothing is appended.
func (s *Server) fileAppeal(c *fiber.Ctx, _ string) (any, error) {
	var in fileAppealInput
	if err := ingest.DecodeStrict(c.BodyRaw(), &in, ""); err != nil {
		return nil, err
	}
	if in.URLs == nil {
		in.URLs = []string{}
	}
	// The cheap checks first: a malformed appeal costs no lookup.
	if err := appeals.CheckInput(in.ClaimID, in.Role, in.Reason, in.URLs); err != nil {
		return nil, appealError(c, err)
	}
	caller, err := s.caller(c)
	if err != nil {
		return nil, err
	}
	ctx := c.UserContext()
	filed, err := s.appeals.filer.File(ctx, appeals.Request{ClaimID: in.ClaimID, Role: in.Role, Reason: in.Reason,
		URLs: in.URLs, RequesterKey: caller.ViewerKey, CorrelationID: caller.CorrelationID})
	if err != nil {
		return nil, appealError(c, err)
	}
	if !filed.Duplicate {
		// Read your writes: appeal.get and the limits see the appeal next.
		p := filed.Position
		if err := s.watermark.WaitFor(ctx, p.Topic, p.Partition, p.Offset, s.cfg.ReadYourWritesTimeout); err != nil {
			s.log.Warn("appeal.file: serving projection behind", "err", err)
		}
	}
	return fileAppealOutput{AppealID: filed.AppealID, Status: filed.Status, Duplicate: filed.Duplicate}, nil
}

// appealError maps a refusal to its code (429 with Retry-After); any
// other error is the server's.
func appealError(c *fiber.Ctx, err error) error {
	var rf *appeals.Refusal
	if !errors.As(err, &rf) {
		return err
	}
	switch rf.Kind {
	case appeals.KindNotFound:
		return newError(CodeNotFound, rf.Message)
	case appeals.KindConflict:
		return newError(CodeConflict, rf.Message)
	case appeals.KindRateLimited:
		secs := int(rf.RetryAfter / time.Second)
		if secs < 1 {
			secs = 1
		}
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
		return newError(CodeTooManyRequests, rf.Message)
	}
	return newError(CodeBadRequest, rf.Message)
}

// appealOutput is an appeal as the API shows it: never the requester.
type appealOutput struct {
	AppealID       string  `json:"appealId"`
	ClaimID        string  `json:"claimId"`
	Status         string  `json:"status"`
	Role           string  `json:"role"`
	FiledAt        string  `json:"filedAt"`
	DecidedAt      *string `json:"decidedAt"`
	DecisionReason *string `json:"decisionReason"`
}

func appealOf(a appeals.Appeal) appealOutput {
	out := appealOutput{AppealID: a.ID, ClaimID: a.ClaimID, Status: a.Status, Role: a.Role,
		FiledAt: a.FiledAt.UTC().Format(isoMillis)}
	if a.DecidedAt != nil {
		at := a.DecidedAt.UTC().Format(isoMillis)
		out.DecidedAt = &at
		reason := a.DecisionReason
		out.DecisionReason = &reason
	}
	return out
}

type getAppealInput struct {
	AppealID string `json:"appealId"`
}

func (s *Server) getAppeal(c *fiber.Ctx, _ string) (any, error) {
	var in getAppealInput
	if err := decodeQueryInput(c, &in, "appealId"); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(in.AppealID); err != nil || len(in.AppealID) != 36 {
		return nil, newError(CodeBadRequest, "appealId: must be an id returned by appeal.file")
	}
	a, err := s.appeals.reader.Appeal(c.UserContext(), strings.ToLower(in.AppealID))
	if errors.Is(err, appeals.ErrNotFound) {
		return nil, newError(CodeNotFound, "appealId: no such appeal")
	}
	if err != nil {
		return nil, err
	}
	return appealOf(a), nil
}

type appealsOfClaimInput struct {
	ClaimID string `json:"claimId"`
}

type appealsOfClaimOutput struct {
	Appeals []appealOutput `json:"appeals"`
}

func (s *Server) appealsOfClaim(c *fiber.Ctx, _ string) (any, error) {
	var in appealsOfClaimInput
	if err := decodeQueryInput(c, &in, "claimId"); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(in.ClaimID); err != nil || len(in.ClaimID) != 36 {
		return nil, newError(CodeBadRequest, "claimId: must be a claim id")
	}
	as, err := s.appeals.reader.AppealsOfClaim(c.UserContext(), strings.ToLower(in.ClaimID))
	if err != nil {
		return nil, err
	}
	out := appealsOfClaimOutput{Appeals: make([]appealOutput, len(as))}
	for i, a := range as {
		out.Appeals[i] = appealOf(a)
	}
	return out, nil
}

// decodeQueryInput reads a query's ?input= strictly into v; field names
// what a missing input lacks.
func decodeQueryInput(c *fiber.Ctx, v any, field string) error {
	raw, ok, err := queryInput(c)
	if err != nil {
		return err
	}
	if !ok {
		return newError(CodeBadRequest, "input: "+field+" is required")
	}
	return ingest.DecodeStrict(raw, v, "")
}
