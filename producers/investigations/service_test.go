package investigations_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/keystore"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/investigations"
)

// clock is the service's and the appender's time in these tests.
var clock = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// recordingAppender builds events with the catalog registry, numbered ids
// and the fixed clock, and records each Append call as one batch. fail,
// when set, fails the next Append calls (counting down) without recording.
type recordingAppender struct {
	reg     *events.Registry
	next    int
	batches [][]events.Event
	fail    int
}

var errAppend = errors.New("injected append failure")

func newAppender() *recordingAppender { return &recordingAppender{reg: events.NewCatalogRegistry()} }

func (a *recordingAppender) NewEvent(p events.Payload, correlationID, causationID string) (events.Event, error) {
	a.next++
	return a.NewEventWithID(p, fmt.Sprintf("00000000-0000-7000-8000-%012d", a.next), clock, correlationID, causationID)
}

func (a *recordingAppender) NewEventWithID(p events.Payload, id string, at time.Time, correlationID, causationID string) (events.Event, error) {
	return a.reg.New(p, events.Meta{ID: id, Time: at, CorrelationID: correlationID, CausationID: causationID})
}

func (a *recordingAppender) Append(_ context.Context, evs ...events.Event) ([]producers.Position, error) {
	if a.fail > 0 {
		a.fail--
		return nil, errAppend
	}
	a.batches = append(a.batches, evs)
	pos := make([]producers.Position, len(evs))
	for i := range evs {
		pos[i] = producers.Position{Topic: "investigations", Partition: 1, Offset: int64(10*len(a.batches) + i)}
	}
	return pos, nil
}

// fakeKeys is the key store's contract in memory: the first unexpired key
// wins, Announce calls announce once per stored key until it succeeds.
// announceErr, when set, is what Announce answers without calling
// announce (another caller holds the row, the key is gone);
// recordErr, when set, is the failure to record a successful announcement.
type fakeKeys struct {
	attached    map[string]logging.Secret
	announced   map[string]bool
	attachErr   error
	announceErr error
	recordErr   error
	// nows are the times the service passed.
	nows []time.Time
}

func newKeys() *fakeKeys {
	return &fakeKeys{attached: map[string]logging.Secret{}, announced: map[string]bool{}}
}

func (k *fakeKeys) Attach(_ context.Context, id string, key logging.Secret, now time.Time) (keystore.AttachOutcome, error) {
	k.nows = append(k.nows, now)
	if k.attachErr != nil {
		return 0, k.attachErr
	}
	if _, ok := k.attached[id]; ok {
		return keystore.AlreadyAttached, nil
	}
	k.attached[id] = key
	return keystore.Attached, nil
}

func (k *fakeKeys) Announce(ctx context.Context, id string, now time.Time, announce func(context.Context, keystore.Attachment) error) (bool, error) {
	k.nows = append(k.nows, now)
	if k.announceErr != nil {
		return false, k.announceErr
	}
	if _, ok := k.attached[id]; !ok {
		return false, keystore.ErrNotFound
	}
	if k.announced[id] {
		return false, nil
	}
	a := keystore.Attachment{InvestigationID: id, KeyID: "ring-2",
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := announce(ctx, a); err != nil {
		return false, err
	}
	if k.recordErr != nil {
		return true, fmt.Errorf("%w: %v", keystore.ErrAnnouncementNotRecorded, k.recordErr)
	}
	k.announced[id] = true
	return true, nil
}

func version() investigations.Version {
	postID := events.PostID(events.PlatformLessWrong, "abc123")
	hash := "7d865e959b2466918c9863afca942d0fb89d7c9ac0c99bafc3749504ded97730"
	return investigations.Version{PostID: postID, PostVersionID: events.PostVersionID(postID, hash),
		Platform: events.PlatformLessWrong, ExternalID: "abc123", VersionHash: hash}
}

func request(userKey string) investigations.Request {
	return investigations.Request{Version: version(), Source: events.RequestSourceInvestigateNow,
		RequesterKey:  "0000000000000000000000000000000000000000000000000000000000000001",
		CorrelationID: "corr-1", UserKey: logging.Secret(userKey)}
}

// types lists the event types of each appended batch.
func types(batches [][]events.Event) [][]string {
	out := [][]string{}
	for _, b := range batches {
		var ts []string
		for _, ev := range b {
			ts = append(ts, ev.Type())
		}
		out = append(out, ts)
	}
	return out
}

// The request event names the investigation derived from the version, so
// repeated requests for one version are one investigation; it carries the
// request's fields and correlation id.
func TestRequestWithoutUserKey(t *testing.T) {
	t.Parallel()
	app := newAppender()
	svc := investigations.New(app, nil, func() time.Time { return clock })
	for range 2 {
		pos, err := svc.Request(context.Background(), request(""))
		require.NoError(t, err)
		require.Equal(t, producers.Position{Topic: "investigations", Partition: 1, Offset: int64(10 * len(app.batches))}, pos)
	}
	require.Equal(t, [][]string{{events.TypeInvestigationRequestedV1}, {events.TypeInvestigationRequestedV1}}, types(app.batches))
	v := version()
	want := &events.InvestigationRequestedV1{InvestigationID: events.InvestigationID(v.PostVersionID),
		PostID: v.PostID, PostVersionID: v.PostVersionID, Platform: v.Platform, ExternalID: v.ExternalID,
		VersionHash: v.VersionHash, Source: events.RequestSourceInvestigateNow,
		RequesterKey: "0000000000000000000000000000000000000000000000000000000000000001"}
	for _, b := range app.batches {
		require.Equal(t, want, b[0].Payload)
		require.Equal(t, "corr-1", b[0].CorrelationID)
		require.Equal(t, "", b[0].CausationID)
	}
	require.NotEqual(t, app.batches[0][0].ID, app.batches[1][0].ID, "each request is its own event")
}

// What each outcome of storing and announcing a user's key appends, and
// what the caller is told. The key's record and the request go in one
// append, the record last; the request alone otherwise.
func TestRequestWithUserKey(t *testing.T) {
	t.Parallel()
	errDB := errors.New("connection reset")
	for _, tc := range []struct {
		name  string
		setup func(*fakeKeys, *recordingAppender)
		// batches are the event types of each append, in order.
		batches [][]string
		wantErr error
		// offset of the returned position (when no error).
		offset int64
		// attached: the key is stored afterwards.
		attached bool
	}{
		{name: "stored and announced", setup: func(*fakeKeys, *recordingAppender) {},
			batches:  [][]string{{events.TypeInvestigationRequestedV1, events.TypeInvestigationKeyAttachedV1}},
			offset:   11,
			attached: true},
		{name: "announced before: the request alone",
			setup: func(k *fakeKeys, _ *recordingAppender) {
				k.attached[events.InvestigationID(version().PostVersionID)] = "sk-first"
				k.announced[events.InvestigationID(version().PostVersionID)] = true
			},
			batches: [][]string{{events.TypeInvestigationRequestedV1}}, offset: 10, attached: true},
		{name: "stored earlier but never announced (a retry): both",
			setup: func(k *fakeKeys, _ *recordingAppender) {
				k.attached[events.InvestigationID(version().PostVersionID)] = "sk-first"
			},
			batches:  [][]string{{events.TypeInvestigationRequestedV1, events.TypeInvestigationKeyAttachedV1}},
			offset:   11,
			attached: true},
		{name: "another request is announcing: the request alone",
			setup:   func(k *fakeKeys, _ *recordingAppender) { k.announceErr = keystore.ErrAnnouncing },
			batches: [][]string{{events.TypeInvestigationRequestedV1}}, offset: 10, attached: true},
		{name: "the key is gone again: the request alone",
			setup:   func(k *fakeKeys, _ *recordingAppender) { k.announceErr = keystore.ErrNotFound },
			batches: [][]string{{events.TypeInvestigationRequestedV1}}, offset: 10, attached: true},
		{name: "announced but not recorded: both in the log, no error",
			setup:    func(k *fakeKeys, _ *recordingAppender) { k.recordErr = errDB },
			batches:  [][]string{{events.TypeInvestigationRequestedV1, events.TypeInvestigationKeyAttachedV1}},
			offset:   11,
			attached: true},
		{name: "the append fails: nothing in the log, the key stays stored",
			setup:   func(_ *fakeKeys, a *recordingAppender) { a.fail = 1 },
			batches: [][]string{}, wantErr: errAppend, attached: true},
		{name: "the key store fails to announce: nothing appended",
			setup:   func(k *fakeKeys, _ *recordingAppender) { k.announceErr = errDB },
			batches: [][]string{}, wantErr: errDB, attached: true},
		{name: "the key store fails to attach: nothing appended",
			setup:   func(k *fakeKeys, _ *recordingAppender) { k.attachErr = errDB },
			batches: [][]string{}, wantErr: errDB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			keys, app := newKeys(), newAppender()
			tc.setup(keys, app)
			svc := investigations.New(app, keys, func() time.Time { return clock })
			pos, err := svc.Request(context.Background(), request("sk-user"))
			require.Equal(t, tc.batches, types(app.batches))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Equal(t, producers.Position{}, pos)
			} else {
				require.NoError(t, err)
				require.Equal(t, producers.Position{Topic: "investigations", Partition: 1, Offset: tc.offset}, pos)
			}
			_, stored := keys.attached[events.InvestigationID(version().PostVersionID)]
			require.Equal(t, tc.attached, stored)
			for _, now := range keys.nows {
				require.Equal(t, clock, now, "the key store works on the service's clock")
			}
		})
	}
}

// The first key attached wins: a second request's key is not stored and
// the record already in the log is not appended again.
func TestRequestFirstUserKeyWins(t *testing.T) {
	t.Parallel()
	keys, app := newKeys(), newAppender()
	svc := investigations.New(app, keys, func() time.Time { return clock })
	_, err := svc.Request(context.Background(), request("sk-first"))
	require.NoError(t, err)
	_, err = svc.Request(context.Background(), request("sk-second"))
	require.NoError(t, err)
	require.Equal(t, logging.Secret("sk-first"), keys.attached[events.InvestigationID(version().PostVersionID)])
	require.Equal(t, [][]string{
		{events.TypeInvestigationRequestedV1, events.TypeInvestigationKeyAttachedV1},
		{events.TypeInvestigationRequestedV1},
	}, types(app.batches))
}

// A user key on an instance without a key store, or on a request that is
// not valid, is refused before anything is stored or appended.
func TestRequestRefusedBeforeStoringTheKey(t *testing.T) {
	t.Parallel()
	app := newAppender()
	_, err := investigations.New(app, nil, nil).Request(context.Background(), request("sk-user"))
	require.ErrorIs(t, err, investigations.ErrUserKeysDisabled)
	require.Empty(t, app.batches)

	keys := newKeys()
	bad := request("sk-user")
	bad.Source = "SOMEONE"
	_, err = investigations.New(app, keys, nil).Request(context.Background(), bad)
	require.ErrorContains(t, err, `source "SOMEONE" is unknown`)
	bad = request("sk-user")
	bad.PostVersionID = events.PostVersionID(bad.PostID, "ffff")
	bad.VersionHash = "0000"
	_, err = investigations.New(app, keys, nil).Request(context.Background(), bad)
	require.ErrorContains(t, err, "post_version_id does not derive from post_id and version_hash")
	require.Empty(t, app.batches)
	require.Empty(t, keys.attached)
	require.Empty(t, keys.nows)
}

// The record of an attached key derives its id and time from the key
// store's row, so every appender of it appends one event; it names the
// key ring entry and the expiry in UTC, never the key.
func TestKeyAttached(t *testing.T) {
	t.Parallel()
	app := newAppender()
	invID := events.InvestigationID(version().PostVersionID)
	created := time.Date(2026, 3, 4, 6, 0, 0, 123456000, time.FixedZone("CET", 3600))
	a := keystore.Attachment{InvestigationID: invID, KeyID: "ring-2", CreatedAt: created, ExpiresAt: created.Add(90 * time.Minute)}
	ev, err := investigations.KeyAttached(app, a, "corr-9")
	require.NoError(t, err)
	require.Equal(t, &events.InvestigationKeyAttachedV1{InvestigationID: invID, KeyID: "ring-2",
		ExpiresAt: "2026-03-04T06:30:00.123456Z"}, ev.Payload)
	require.Equal(t, events.KeyAttachedEventID(invID, "ring-2", "2026-03-04T06:30:00.123456Z"), ev.ID)
	require.Equal(t, created.UTC(), ev.Time)
	require.Equal(t, "corr-9", ev.CorrelationID)

	again, err := investigations.KeyAttached(app, a, "corr-other")
	require.NoError(t, err)
	require.Equal(t, ev.ID, again.ID, "the same attachment is the same event")
	require.Equal(t, ev.Time, again.Time)

	a.KeyID = ""
	_, err = investigations.KeyAttached(app, a, "corr-9")
	require.ErrorContains(t, err, "key_id is required")
}

// A request under an assigned configuration names the investigation of
// (version, configuration), records the configuration and the experiment
// arm, and attaches a user's key to that investigation.
func TestRequestUnderAnAssignment(t *testing.T) {
	t.Parallel()
	spec := events.AnalysisConfigurationV1{Name: "mini", Model: "gpt-5-mini", InvestigatorPrompt: "v1",
		ValidatorPrompt: "v1", Policy: "strict-v1@0123456789ab"}
	a := investigations.Assignment{ConfigurationID: events.ConfigurationID(spec), Configuration: &spec,
		ExperimentID: events.ExperimentID("mini-test"), Arm: events.ArmCandidate}
	v := version()
	wantID := events.InvestigationIDFor(v.PostVersionID, a.ConfigurationID)
	require.NotEqual(t, events.InvestigationID(v.PostVersionID), wantID)

	keys, app := newKeys(), newAppender()
	svc := investigations.New(app, keys, func() time.Time { return clock })
	r := request("sk-user")
	r.Assignment = a
	_, err := svc.Request(context.Background(), r)
	require.NoError(t, err)
	require.Equal(t, [][]string{{events.TypeInvestigationRequestedV1, events.TypeInvestigationKeyAttachedV1}}, types(app.batches))
	got := app.batches[0][0].Payload.(*events.InvestigationRequestedV1)
	require.Equal(t, &events.InvestigationRequestedV1{InvestigationID: wantID, PostID: v.PostID,
		PostVersionID: v.PostVersionID, Platform: v.Platform, ExternalID: v.ExternalID, VersionHash: v.VersionHash,
		Source: events.RequestSourceInvestigateNow, RequesterKey: r.RequesterKey, ConfigurationID: a.ConfigurationID,
		Configuration: &spec, ExperimentID: a.ExperimentID, Arm: events.ArmCandidate}, got)
	require.Equal(t, wantID, app.batches[0][1].Payload.(*events.InvestigationKeyAttachedV1).InvestigationID)
	_, stored := keys.attached[wantID]
	require.True(t, stored, "the key belongs to the assigned investigation")
}
