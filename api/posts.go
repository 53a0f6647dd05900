package api

import (
	"context"
	"errors"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

// registerOutput is registerObservedVersion's output; no other keys.
type registerOutput struct {
	Platform      string `json:"platform"`
	ExternalID    string `json:"externalId"`
	VersionHash   string `json:"versionHash"`
	PostVersionID string `json:"postVersionId"`
	Provenance    string `json:"provenance"`
}

func (s *Server) registerObservedVersion(c *fiber.Ctx, path string) (any, error) {
	in, err := ingest.ParseRegisterInput(c.BodyRaw())
	if err != nil {
		return nil, err
	}
	ctx := c.UserContext()
	caller, err := s.caller(c)
	if err != nil {
		return nil, err
	}
	reg, err := s.ingest.Register(ctx, in, caller)
	if err != nil {
		return nil, err
	}
	// Read-your-writes: the next call (recordViewAndGetStatus) must find the
	// version. The event is durable either way; on timeout the projection is
	// lagging and the caller still gets the deterministic id.
	pos := reg.Position
	if err := s.watermark.WaitFor(ctx, pos.Topic, pos.Partition, pos.Offset, s.cfg.ReadYourWritesTimeout); err != nil {
		if !errors.Is(err, pgproj.ErrWatermarkTimeout) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		s.log.Warn("serving projection lagging behind registration", "post_version_id", reg.PostVersionID, "err", err)
	}
	return registerOutput{
		Platform: reg.Platform, ExternalID: reg.ExternalID, VersionHash: reg.VersionHash,
		PostVersionID: reg.PostVersionID, Provenance: reg.Provenance,
	}, nil
}

type recordViewInput struct {
	PostVersionID string `json:"postVersionId"`
}

// recordViewAndGetStatus records a view of a registered version and returns
// the state of that version's own investigation.
func (s *Server) recordViewAndGetStatus(c *fiber.Ctx, path string) (any, error) {
	var in recordViewInput
	if err := ingest.DecodeStrict(c.BodyRaw(), &in, ""); err != nil {
		return nil, err
	}
	if _, err := uuid.Parse(in.PostVersionID); err != nil || len(in.PostVersionID) != 36 {
		return nil, newError(CodeBadRequest, "postVersionId: must be an id returned by registerObservedVersion")
	}
	ctx := c.UserContext()
	v, err := s.reader.VersionStatusByID(ctx, in.PostVersionID)
	if errors.Is(err, serving.ErrNotFound) {
		// Never registered: nothing to count.
		return notInvestigated{InvestigationState: stateNotInvestigated}, nil
	}
	if err != nil {
		return nil, err
	}
	caller, err := s.caller(c)
	if err != nil {
		return nil, err
	}
	if _, err := s.ingest.RecordView(ctx, v.PostID, v.ID, v.Platform, v.ExternalID, caller); err != nil {
		return nil, err
	}
	return statusOf(v), nil
}
