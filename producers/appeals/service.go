// Package appeals files appeals: a reader or an author disputes a
// published claim. Filing checks the appellant's untrusted input (the
// reason's length and characters, every URL syntactically and then its
// host's addresses under internal/httpsafe's rules), the claim (published,
// visible, not retracted), the limits (per client and rolling day, open
// appeals per claim), and appends appeal.filed. It writes no read model:
// what it knows of claims and appeals it reads from the serving
// projection, and the review (consumers/appeals) decides.
package appeals

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/producers"
)

// ErrNotFound is what a Reader returns for an unknown claim or appeal.
var ErrNotFound = errors.New("appeals: not found")

// Claim is a published claim as filing needs it (serving.ClaimRef).
type Claim struct {
	ClaimID, InvestigationID, PostID, PostVersionID string
	// Retracted says an appeal withdrew it; Visible that its investigation
	// is the one readers see.
	Retracted, Visible bool
}

// Appeal is an appeal as the serving projection has it (never its
// requester key).
type Appeal struct {
	ID, ClaimID, InvestigationID, PostVersionID, Role, Reason string
	URLs                                                      []string
	Status                                                    string
	FiledAt                                                   time.Time
	DecidedAt                                                 *time.Time
	DecisionReason, PolicyVersion                             string
}

// Reader reads claims and appeals (projections/serving.Reader, through
// an adapter). Both lookups return ErrNotFound for an unknown id.
type Reader interface {
	PublishedClaim(ctx context.Context, claimID string) (Claim, error)
	Appeal(ctx context.Context, id string) (Appeal, error)
	// AppealCounts are the claim's open appeals and the appeals the
	// requester filed since.
	AppealCounts(ctx context.Context, claimID, requesterKey string, since time.Time) (ofClaimOpen, ofRequesterSince int, err error)
}

// Appender appends events (producers.Appender).
type Appender interface {
	NewEventWithID(p events.Payload, id string, at time.Time, correlationID, causationID string) (events.Event, error)
	Append(ctx context.Context, evs ...events.Event) ([]producers.Position, error)
}

// Limits bound filing.
type Limits struct {
	// PerDay is the appeals one requester files in a rolling day.
	PerDay int
	// OpenPerClaim is the appeals of one claim open at once.
	OpenPerClaim int
}

// Window is the rolling window of Limits.PerDay.
const Window = 24 * time.Hour

// Request is one appeal as the caller sent it.
type Request struct {
	ClaimID, Role, Reason string
	URLs                  []string
	// RequesterKey is the keyed hash of the caller; CorrelationID its
	// request's.
	RequesterKey, CorrelationID string
}

// Filed is the outcome of filing: the appeal, its status now, and whether
// it was filed before (nothing was appended).
type Filed struct {
	AppealID  string
	Status    string
	Duplicate bool
	// Position is where the new appeal.filed landed (zero for a duplicate).
	Position producers.Position
}

// Kinds of refusal: the API maps each to its status.
const (
	KindInvalid     = "invalid"      // 400
	KindNotFound    = "not_found"    // 404
	KindConflict    = "conflict"     // 409
	KindRateLimited = "rate_limited" // 429
)

// Refusal is a request filing refuses; nothing was appended.
type Refusal struct {
	Kind, Message string
	// RetryAfter is when the requester may file again (KindRateLimited).
	RetryAfter time.Duration
}

func (r *Refusal) Error() string { return r.Message }

func refuse(kind, format string, args ...any) *Refusal {
	return &Refusal{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// StatusOpen is an appeal not yet decided.
const StatusOpen = "OPEN"

// Service files appeals.
type Service struct {
	appender Appender
	reader   Reader
	resolver httpsafe.Resolver
	limits   Limits
	now      func() time.Time
}

// New returns a service. resolver resolves URL hosts (a *net.Resolver).
func New(appender Appender, reader Reader, resolver httpsafe.Resolver, limits Limits, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{appender: appender, reader: reader, resolver: resolver, limits: limits, now: now}
}

// resolveTimeout bounds the lookups of one appeal's URLs.
const resolveTimeout = 5 * time.Second

// File checks r and appends its appeal.filed, unless the same appeal was
// filed before (its id derives from the claim, requester, reason and URLs):
// then it reports that one, appending nothing. A *Refusal says why r is
// refused; any other error is the store's or the log's, and nothing was
// appended.
func (s *Service) File(ctx context.Context, r Request) (Filed, error) {
	if err := CheckInput(r.ClaimID, r.Role, r.Reason, r.URLs); err != nil {
		return Filed{}, err
	}
	claimID := strings.ToLower(r.ClaimID)
	id := events.AppealID(claimID, r.RequesterKey, r.Reason, r.URLs)
	if a, err := s.reader.Appeal(ctx, id); err == nil {
		return Filed{AppealID: id, Status: a.Status, Duplicate: true}, nil
	} else if !errors.Is(err, ErrNotFound) {
		return Filed{}, err
	}
	claim, err := s.reader.PublishedClaim(ctx, claimID)
	if errors.Is(err, ErrNotFound) || (err == nil && !claim.Visible) {
		return Filed{}, refuse(KindNotFound, "claimId: no such published claim")
	}
	if err != nil {
		return Filed{}, err
	}
	if claim.Retracted {
		return Filed{}, refuse(KindConflict, "the claim is already retracted")
	}
	now := s.now()
	open, mine, err := s.reader.AppealCounts(ctx, claimID, r.RequesterKey, now.Add(-Window))
	if err != nil {
		return Filed{}, err
	}
	if mine >= s.limits.PerDay {
		rf := refuse(KindRateLimited, "at most %d appeals a day from one client", s.limits.PerDay)
		rf.RetryAfter = time.Hour
		return Filed{}, rf
	}
	if open >= s.limits.OpenPerClaim {
		return Filed{}, refuse(KindConflict, "the claim has %d open appeals already; wait for their decisions", open)
	}
	if err := s.checkHosts(ctx, r.URLs); err != nil {
		return Filed{}, err
	}
	p := &events.AppealFiledV1{AppealID: id, ClaimID: claimID, InvestigationID: claim.InvestigationID, PostID: claim.PostID,
		PostVersionID: claim.PostVersionID, Role: r.Role, Reason: r.Reason, URLs: append([]string{}, r.URLs...),
		RequesterKey: r.RequesterKey}
	// The event id derives from the appeal: two identical appeals racing
	// append one event twice, which every fold takes once.
	ev, err := s.appender.NewEventWithID(p, events.AppealFiledEventID(id), now, r.CorrelationID, "")
	if err != nil {
		return Filed{}, fmt.Errorf("appeal %s: %w", id, err)
	}
	pos, err := s.appender.Append(ctx, ev)
	if err != nil {
		return Filed{}, fmt.Errorf("appeal %s: %w", id, err)
	}
	return Filed{AppealID: id, Status: StatusOpen, Position: pos[0]}, nil
}

// CheckInput checks an appeal's input without resolving anything: the
// claim id, the role, the reason and the URLs (events' rules), and each
// URL's port (httpsafe reaches 80 and 443 only).
func CheckInput(claimID, role, reason string, urls []string) error {
	if _, err := uuid.Parse(claimID); err != nil || len(claimID) != 36 {
		return refuse(KindInvalid, "claimId: must be a claim id")
	}
	if role != events.AppealRoleReader && role != events.AppealRoleAuthor {
		return refuse(KindInvalid, "role: must be READER or AUTHOR")
	}
	if err := events.ValidateAppealReason(reason); err != nil {
		return refuse(KindInvalid, "reason: %v", err)
	}
	if urls == nil {
		return refuse(KindInvalid, "urls: must be an array")
	}
	if err := events.ValidateAppealURLs(urls); err != nil {
		return refuse(KindInvalid, "urls: %v", err)
	}
	for i, raw := range urls {
		u, _ := url.Parse(raw) // parsed by ValidateAppealURLs
		if p := u.Port(); p != "" && p != "80" && p != "443" {
			return refuse(KindInvalid, "urls: url %d names port %s; only 80 and 443 are fetched", i, p)
		}
	}
	return nil
}

// checkHosts resolves every URL's host and refuses one that is, or
// resolves to, an address internal/httpsafe never connects to, or that
// does not resolve: such a source could never be read.
func (s *Service) checkHosts(ctx context.Context, urls []string) error {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	for i, raw := range urls {
		u, _ := url.Parse(raw)
		host := strings.TrimSuffix(u.Hostname(), ".")
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else {
			got, err := s.resolver.LookupNetIP(ctx, "ip", host)
			if err != nil || len(got) == 0 {
				return refuse(KindInvalid, "urls: url %d: its host does not resolve", i)
			}
			addrs = got
		}
		for _, a := range addrs {
			if httpsafe.IsBlockedAddr(a.Unmap()) {
				return refuse(KindInvalid, "urls: url %d: its host is a private or reserved address", i)
			}
		}
	}
	return nil
}
