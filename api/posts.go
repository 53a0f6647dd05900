package api

import (
	"context"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
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
	if s.backlog != nil {
		s.backlog.Add(serving.VersionRef{PostVersionID: reg.PostVersionID, PostID: events.PostID(reg.Platform, reg.ExternalID),
			Platform: reg.Platform, ExternalID: reg.ExternalID, Partition: pos.Partition, Offset: pos.Offset})
	}
	if s.versionKnown(ctx, reg.PostVersionID) {
		return registerOutput{
			Platform: reg.Platform, ExternalID: reg.ExternalID, VersionHash: reg.VersionHash,
			PostVersionID: reg.PostVersionID, Provenance: reg.Provenance,
		}, nil
	}
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

// KnownVersions tells whether the serving projection already holds a
// version (projections/serving.Reader).
type KnownVersions interface {
	VersionKnown(ctx context.Context, postVersionID string) (bool, error)
}

// WithKnownVersions lets registerObservedVersion answer the registration of
// a version the serving projection already holds without waiting for its
// new event to be applied: the next status call finds the version either
// way, so read-your-writes holds, and a re-registration costs an append and
// a primary-key read, like a view. The version id it checks is the one
// Register derived (after server verification), never the client's.
func WithKnownVersions(k KnownVersions) Option {
	return func(s *Server) { s.known = k }
}

// versionKnown: is the version visible to the next status call already?
// A failed read answers no, so the caller waits as it would without it.
func (s *Server) versionKnown(ctx context.Context, postVersionID string) bool {
	if s.known == nil {
		return false
	}
	known, err := s.known.VersionKnown(ctx, postVersionID)
	if err != nil {
		s.log.Warn("known version check failed; waiting for the projection instead", "post_version_id", postVersionID, "err", err)
		return false
	}
	return known
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
	status, ref, found, err := s.locate(ctx, in.PostVersionID)
	if err != nil {
		return nil, err
	}
	if !found {
		// Never registered: nothing to count.
		return notInvestigated{InvestigationState: stateNotInvestigated}, nil
	}
	caller, err := s.caller(c)
	if err != nil {
		return nil, err
	}
	if _, err := s.ingest.RecordView(ctx, ref.PostID, ref.PostVersionID, ref.Platform, ref.ExternalID, caller); err != nil {
		return nil, err
	}
	return status, nil
}

// Backlog knows the registrations on the log that the serving projection
// has not applied yet (serving.Backlog).
type Backlog interface {
	// Lookup finds a registered version the projection lacks; found is
	// false when none was on the log when the lookup began.
	Lookup(ctx context.Context, postVersionID string) (ref serving.VersionRef, found bool, err error)
	// Add records a registration this process appended.
	Add(ref serving.VersionRef)
}

// WithBacklog makes recordViewAndGetStatus count views of versions the
// serving projection has not applied yet. Without it such views are lost
// while the projection lags.
func WithBacklog(b Backlog) Option {
	return func(s *Server) { s.backlog = b }
}

// locate finds the version a view is of, with the status to answer: in the
// serving projection, or else among the registrations on the log it has not
// applied yet. A view keyed by the version's post lands after the
// registration in the same partition, so the projector counts it once the
// registration is applied, however late; until then nothing is known of an
// investigation of the version (NOT_INVESTIGATED).
func (s *Server) locate(ctx context.Context, id string) (status any, ref serving.VersionRef, found bool, err error) {
	statuses := s.statusReader()
	v, err := statuses.VersionStatusByID(ctx, id)
	if err == nil {
		return statusOf(v), refOf(v), true, nil
	}
	if !errors.Is(err, serving.ErrNotFound) || s.backlog == nil {
		return nil, serving.VersionRef{}, false, ignoreNotFound(err)
	}
	ref, found, err = s.backlog.Lookup(ctx, id)
	switch {
	case errors.Is(err, serving.ErrBacklogBehind):
		s.log.Warn("view not recorded: registrations not read up to the end of the log in time",
			"post_version_id", id, "err", err)
		return nil, serving.VersionRef{}, false, nil
	case err != nil:
		return nil, serving.VersionRef{}, false, err
	case found:
		return notInvestigated{InvestigationState: stateNotInvestigated}, ref, true, nil
	}
	// The backlog drops a registration once the projection has applied it,
	// so the projection may have the version since the first read.
	v, err = statuses.VersionStatusByID(ctx, id)
	if err != nil {
		return nil, serving.VersionRef{}, false, ignoreNotFound(err)
	}
	return statusOf(v), refOf(v), true, nil
}

// StatusCache answers the view path's status reads from memory, kept
// current by the serving projection's commits
// (projections/serving.StatusCache).
type StatusCache interface {
	// VersionStatusByID is Reader.VersionStatusByID.
	VersionStatusByID(ctx context.Context, id string) (serving.VersionStatus, error)
	// VersionKnown is KnownVersions.VersionKnown, from memory when it can.
	VersionKnown(ctx context.Context, postVersionID string) (bool, error)
	// Sync returns once every serving commit before it reached the cache.
	Sync(ctx context.Context) error
}

// WithStatusCache makes recordViewAndGetStatus read statuses, and
// registerObservedVersion ask whether a version is known, through c.
// Read-your-writes holds: every wait for the serving projection to apply
// this API's write is followed by c.Sync, so the cache has dropped what
// the write changed before the caller's next call reads it.
func WithStatusCache(c StatusCache) Option {
	return func(s *Server) {
		s.statuses, s.known = c, c
		s.watermark = syncedWatermark{wm: s.watermark, cache: c}
	}
}

// versionStatuses answers VersionStatusByID (Reader, StatusCache).
type versionStatuses interface {
	VersionStatusByID(ctx context.Context, id string) (serving.VersionStatus, error)
}

// statusReader is what the view path reads statuses through.
func (s *Server) statusReader() versionStatuses {
	if s.statuses != nil {
		return s.statuses
	}
	return s.reader
}

// syncedWatermark is a Watermark whose successful wait also syncs the
// status cache (WithStatusCache).
type syncedWatermark struct {
	wm    Watermark
	cache StatusCache
}

func (w syncedWatermark) WaitFor(ctx context.Context, topic string, partition int32, offset int64, timeout time.Duration) error {
	if err := w.wm.WaitFor(ctx, topic, partition, offset, timeout); err != nil {
		return err
	}
	return w.cache.Sync(ctx)
}

func refOf(v serving.VersionStatus) serving.VersionRef {
	return serving.VersionRef{PostVersionID: v.ID, PostID: v.PostID, Platform: v.Platform, ExternalID: v.ExternalID}
}

func ignoreNotFound(err error) error {
	if errors.Is(err, serving.ErrNotFound) {
		return nil
	}
	return err
}
