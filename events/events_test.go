package events_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

var update = flag.Bool("update", false, "rewrite golden files (only for NEW event versions; old ones are kept forever)")

func ptr[T any](v T) *T { return &v }

// samples holds one representative payload per event type version. Every
// registered type must have one, and a golden file under testdata/.
func samples() map[string]events.Payload {
	postID := events.PostID(events.PlatformLessWrong, "ioZxrP7BhS5ArK59w")
	versionHash := "381418fc592d521a9d28f314d75b3dcd12567dc7d95e0b43c87f35ab924cbf4e"
	m := map[string]events.Payload{
		events.TypePostVersionRegisteredV1: &events.PostVersionRegisteredV1{
			PostID:          postID,
			PostVersionID:   events.PostVersionID(postID, versionHash),
			Platform:        events.PlatformLessWrong,
			ExternalID:      "ioZxrP7BhS5ArK59w",
			URL:             "https://www.lesswrong.com/posts/ioZxrP7BhS5ArK59w/did-claude-3-opus-align-itself",
			VersionHash:     versionHash,
			ContentHash:     "396c5f0290d5380e60b6974b566afdf66124d64d345a7777c8aeec7204d7c863",
			OccurrencesHash: "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945",
			ContentText:     "Claude 3 Opus is unusually aligned <because> it's a friendly gradient hacker.",
			WordCount:       12,
			Provenance:      events.ProvenanceServerVerified,
			ImageURLs:       []string{"https://res.cloudinary.com/lesswrong-2-0/image/upload/a.png"},
			ImageOccurrences: []events.ImageOccurrenceV1{
				{OriginalIndex: 0, NormalizedTextOffset: 10, SourceURL: "https://res.cloudinary.com/lesswrong-2-0/image/upload/a.png", CaptionText: "Figure 1"},
			},
			ServerHTML:  "<blockquote><p>Claude 3 Opus is unusually aligned</p></blockquote>",
			ClientHTML:  "<blockquote><p>Claude 3 Opus is unusually aligned</p></blockquote>",
			Author:      &events.AuthorV1{PlatformUserID: "some-author", DisplayName: "Some Author"},
			ReporterKey: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			LessWrong: &events.LessWrongMetaV1{
				Slug: "did-claude-3-opus-align-itself", Title: "Did Claude 3 Opus align itself?",
				AuthorName: "Some Author", AuthorSlug: "some-author", Tags: []string{"AI"},
				Karma: ptr(42), PublishedAt: ptr(time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC)),
			},
		},
		events.TypePostIntegrityAnomalyRecordedV1: &events.PostIntegrityAnomalyRecordedV1{
			PostID:        postID,
			PostVersionID: events.PostVersionID(postID, versionHash),
			Platform:      events.PlatformLessWrong,
			ExternalID:    "ioZxrP7BhS5ArK59w",
			Kind:          events.AnomalyContentMismatch,
			Field:         "content_hash",
			ObservedValue: "0e0a8bfb0cecfedc405fd227d34033c1ea23bbe80de8d63fcfa066eb84f1477b",
			ServerValue:   "396c5f0290d5380e60b6974b566afdf66124d64d345a7777c8aeec7204d7c863",
		},
		events.TypeInvestigationCompletedV1: &events.InvestigationCompletedV1{
			InvestigationID: events.InvestigationID(events.PostVersionID(postID, versionHash)),
			PostID:          postID,
			PostVersionID:   events.PostVersionID(postID, versionHash),
			Provenance:      events.ProvenanceServerVerified,
			PromptVersion:   "investigator-1",
			Provider:        "OPENAI",
			Model:           "gpt-5",
			Claims: []events.ClaimV1{{
				ID:        events.ClaimID(events.InvestigationID(events.PostVersionID(postID, versionHash)), 0),
				Text:      "Claude 3 Opus was released in 2021",
				Context:   "As everyone knows, Claude 3 Opus was released in 2021 and quickly became",
				Summary:   "Claude 3 Opus was released in March 2024, not 2021.",
				Reasoning: "Anthropic's announcement is dated 4 March 2024 & lists <Opus> among the models.",
				Sources:   []events.SourceV1{{URL: "https://www.anthropic.com/news/claude-3-family", Title: "Introducing the next generation of Claude", Snippet: "Today, we're announcing the Claude 3 model family"}},
			}},
		},
		events.TypeInvestigationFailedV1: &events.InvestigationFailedV1{
			InvestigationID: events.InvestigationID(events.PostVersionID(postID, versionHash)),
			PostID:          postID,
			PostVersionID:   events.PostVersionID(postID, versionHash),
			Provenance:      events.ProvenanceClientFallback,
			Reason:          "provider rejected the request: 401 invalid api key",
			Attempts:        1,
		},
		events.TypeAPIKeyAddedV1: &events.APIKeyAddedV1{
			KeyID:     events.APIKeyID("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
			KeySHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			Label:     "ops laptop",
		},
		events.TypeAPIKeyRevokedV1: &events.APIKeyRevokedV1{
			KeyID:  events.APIKeyID("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
			Reason: "rotated",
		},
		events.TypeInvestigationRequestedV1: &events.InvestigationRequestedV1{
			InvestigationID: events.InvestigationID(events.PostVersionID(postID, versionHash)),
			PostID:          postID,
			PostVersionID:   events.PostVersionID(postID, versionHash),
			Platform:        events.PlatformLessWrong,
			ExternalID:      "ioZxrP7BhS5ArK59w",
			VersionHash:     versionHash,
			Source:          events.RequestSourceSelector,
			UniqueViewScore: 17,
		},
		events.TypePostViewRecordedV1: &events.PostViewRecordedV1{
			PostID:        postID,
			PostVersionID: events.PostVersionID(postID, versionHash),
			Platform:      events.PlatformLessWrong,
			ExternalID:    "ioZxrP7BhS5ArK59w",
			ViewerKey:     "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
			IPRangeKey:    "fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9",
			Authenticated: false,
		},
		events.TypePostViewRecordedV2: &events.PostViewRecordedV2{
			PostID:        postID,
			PostVersionID: events.PostVersionID(postID, versionHash),
			Platform:      events.PlatformLessWrong,
			ExternalID:    "ioZxrP7BhS5ArK59w",
			ViewerKey:     "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
			ViewerKind:    events.ViewerInstanceAPIKey,
			IPRangeKey:    "fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9",
		},
	}
	for typ, p := range lifecycleSamples(postID, versionHash) {
		m[typ] = p
	}
	for typ, p := range analysisSamples(postID, versionHash) {
		m[typ] = p
	}
	for typ, p := range controlSamples() {
		m[typ] = p
	}
	for typ, p := range appealSamples(postID, versionHash) {
		m[typ] = p
	}
	filed := m[events.TypeAppealFiledV1].(*events.AppealFiledV1)
	for typ, p := range appealReviewSamples(filed.AppealID, filed.ClaimID) {
		m[typ] = p
	}
	return m
}

func TestGoldenRoundTrip(t *testing.T) {
	reg := events.NewCatalogRegistry()
	byType := samples()
	for _, typ := range reg.Types() {
		t.Run(typ, func(t *testing.T) {
			p, ok := byType[typ]
			require.True(t, ok, "every event type needs a sample payload and a golden file")
			ev, err := reg.New(p, events.Meta{
				ID:            "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70",
				Time:          time.Date(2026, 11, 22, 10, 30, 0, 123456000, time.UTC),
				CorrelationID: "corr-1",
				CausationID:   "cause-1",
			})
			require.NoError(t, err)
			msg, err := reg.Encode(ev)
			require.NoError(t, err)

			golden := filepath.Join("testdata", typ+".json")
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, msg.Value, "", "  "))
			pretty.WriteByte('\n')
			if *update {
				if _, err := os.Stat(golden); err == nil {
					t.Fatalf("%s exists: golden files of released event versions never change; add a new version instead", golden)
				}
				require.NoError(t, os.WriteFile(golden, pretty.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing golden file; run go test ./events -update for a new type")
			require.Equal(t, string(want), pretty.String(), "encoding of %s changed: history would no longer match", typ)

			// Compact first: json.RawMessage fields keep the golden file's indentation.
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, want))
			decoded, err := reg.Decode(compact.Bytes())
			require.NoError(t, err)
			require.Equal(t, ev.ID, decoded.ID)
			require.Equal(t, ev.Subject, decoded.Subject)
			require.True(t, ev.Time.Equal(decoded.Time))
			require.Equal(t, ev.CorrelationID, decoded.CorrelationID)
			require.Equal(t, ev.CausationID, decoded.CausationID)
			if reg.Superseded(typ) {
				// Old versions decode to the current one (TestUpcastGolden).
				require.Equal(t, reg.CurrentType(typ), decoded.Type())
			} else {
				require.Equal(t, p, decoded.Payload)
			}
			require.Equal(t, typ, msg.Headers[events.HeaderType])
			require.Equal(t, ev.Subject, msg.Key)
		})
	}
}

func TestEveryGoldenFileDecodes(t *testing.T) {
	reg := events.NewCatalogRegistry()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = reg.Decode(raw)
		require.NoError(t, err, f)
	}
}

// TestUpcastGolden decodes the golden file of every superseded version,
// kept unchanged from its release, and compares what consumers see (the
// upcast event, re-encoded) with testdata/upcast/<type>.json. Only the
// payload changes: id, subject, time and causality are those of the record.
func TestUpcastGolden(t *testing.T) {
	reg := events.NewCatalogRegistry()
	n := 0
	for _, typ := range reg.Types() {
		if !reg.Superseded(typ) {
			continue
		}
		n++
		t.Run(typ, func(t *testing.T) {
			stored, err := os.ReadFile(filepath.Join("testdata", typ+".json"))
			require.NoError(t, err)
			ev, err := reg.Decode(stored)
			require.NoError(t, err)
			require.Equal(t, reg.CurrentType(typ), ev.Type())
			require.False(t, reg.Superseded(ev.Type()), "consumers only see current types")

			var env events.Envelope
			require.NoError(t, json.Unmarshal(stored, &env))
			require.Equal(t, env.ID, ev.ID)
			require.Equal(t, env.Subject, ev.Subject)
			require.True(t, env.Time.Equal(ev.Time))
			require.Equal(t, env.CorrelationID, ev.CorrelationID)
			require.Equal(t, env.CausationID, ev.CausationID)

			msg, err := reg.Encode(ev)
			require.NoError(t, err)
			var pretty bytes.Buffer
			require.NoError(t, json.Indent(&pretty, msg.Value, "", "  "))
			pretty.WriteByte('\n')
			golden := filepath.Join("testdata", "upcast", typ+".json")
			if *update {
				if _, err := os.Stat(golden); err == nil {
					t.Fatalf("%s exists: an upcast's result never changes", golden)
				}
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, pretty.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing upcast golden; run go test ./events -update once")
			require.Equal(t, string(want), pretty.String(), "upcast of %s changed: replays would differ", typ)
		})
	}
	require.NotZero(t, n, "the catalog has an upcast path")
}

func TestUpcastViewRecorded(t *testing.T) {
	reg := events.NewCatalogRegistry()
	base := samples()[events.TypePostViewRecordedV1].(*events.PostViewRecordedV1)
	tests := []struct {
		authenticated bool
		want          string
	}{
		{true, events.ViewerInstanceAPIKey},
		{false, events.ViewerAnonymousSession},
	}
	for _, tc := range tests {
		v1 := *base
		v1.Authenticated = tc.authenticated
		ev, err := reg.New(&v1, events.Meta{ID: "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
		require.NoError(t, err)
		msg, err := reg.Encode(ev)
		require.NoError(t, err)
		require.Equal(t, events.TypePostViewRecordedV1, msg.Headers[events.HeaderType], "the record keeps its stored type")
		got, err := reg.Decode(msg.Value)
		require.NoError(t, err)
		require.Equal(t, &events.PostViewRecordedV2{
			PostID: v1.PostID, PostVersionID: v1.PostVersionID, Platform: v1.Platform, ExternalID: v1.ExternalID,
			ViewerKey: v1.ViewerKey, ViewerKind: tc.want, IPRangeKey: v1.IPRangeKey,
		}, got.Payload)
	}
	require.Equal(t, events.TypePostViewRecordedV2, reg.CurrentType(events.TypePostViewRecordedV1))
	require.Equal(t, events.TypePostViewRecordedV2, reg.CurrentType(events.TypePostViewRecordedV2))
	require.Equal(t, "no.such.v1", reg.CurrentType("no.such.v1"))
	require.Equal(t, []string{events.TypePostViewRecordedV1, events.TypePostViewRecordedV2}, reg.StoredTypes(events.TypePostViewRecordedV2))
}

func TestRegistryRejectsBrokenUpcasts(t *testing.T) {
	base := func() []events.Definition { return events.Catalog() }
	find := func(defs []events.Definition, typ string) int {
		for i, d := range defs {
			if d.Type == typ {
				return i
			}
		}
		t.Fatalf("%s not in catalog", typ)
		return -1
	}
	tests := []struct {
		name    string
		edit    func([]events.Definition) []events.Definition
		wantErr string
	}{
		{"target missing", func(d []events.Definition) []events.Definition {
			return append(d[:find(d, events.TypePostViewRecordedV2)], d[find(d, events.TypePostViewRecordedV2)+1:]...)
		}, "unregistered"},
		{"function without target", func(d []events.Definition) []events.Definition {
			d[find(d, events.TypePostViewRecordedV1)].UpcastTo = ""
			return d
		}, "go together"},
		{"cycle", func(d []events.Definition) []events.Definition {
			i := find(d, events.TypePostViewRecordedV2)
			d[i].UpcastTo, d[i].Upcast = events.TypePostViewRecordedV1, func(p events.Payload) (events.Payload, error) { return p, nil }
			return d
		}, "cycle"},
		{"other topic", func(d []events.Definition) []events.Definition {
			d[find(d, events.TypePostViewRecordedV1)].UpcastTo = events.TypeAPIKeyAddedV1
			return d
		}, "another topic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := events.NewRegistry(tc.edit(base())...)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	reg := events.NewCatalogRegistry()
	good, err := os.ReadFile(filepath.Join("testdata", events.TypePostViewRecordedV1+".json"))
	require.NoError(t, err)
	tests := []struct {
		name    string
		value   string
		wantErr string
	}{
		{"not json", "{", "decode envelope"},
		{"unknown envelope field", strings.Replace(string(good), `"subject"`, `"extra": 1, "subject"`, 1), "unknown field"},
		{"unknown type", strings.Replace(string(good), events.TypePostViewRecordedV1, "post.view_recorded.v9", 1), "unknown event type"},
		{"bad type format", strings.Replace(string(good), events.TypePostViewRecordedV1, "PostViewRecorded", 1), "not <aggregate>"},
		{"unknown payload field", strings.Replace(string(good), `"viewer_key"`, `"surprise": true, "viewer_key"`, 1), "unknown field"},
		{"invalid payload", strings.Replace(string(good), `"platform": "LESSWRONG"`, `"platform": "MYSPACE"`, 1), "platform"},
		{"subject mismatch", strings.Replace(string(good), `"subject": "`, `"subject": "x`, 1), "subject"},
		{"missing id", strings.Replace(string(good), `"id": "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70"`, `"id": ""`, 1), "not a UUID"},
		{"id not a uuid", strings.Replace(string(good), `"id": "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70"`, `"id": "event-1"`, 1), "not a UUID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reg.Decode([]byte(tc.value))
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestEncodeRejectsInvalidPayload(t *testing.T) {
	reg := events.NewCatalogRegistry()
	p := samples()[events.TypePostVersionRegisteredV1].(*events.PostVersionRegisteredV1)
	bad := *p
	bad.VersionHash = "ABC"
	_, err := reg.New(&bad, events.Meta{ID: "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f70", Time: time.Now()})
	require.ErrorContains(t, err, "version_hash")

	bad = *p
	bad.X = &events.XMetaV1{TweetID: "1"}
	_, err = reg.New(&bad, events.Meta{ID: "x", Time: time.Now()})
	require.ErrorContains(t, err, "metadata")
}

func TestRegistryRejectsDuplicates(t *testing.T) {
	defs := events.Catalog()
	_, err := events.NewRegistry(append(defs, defs[0])...)
	require.ErrorContains(t, err, "defined twice")
}

func TestDerivedIDsAreStable(t *testing.T) {
	// These values are part of the contract: clients hold post version ids.
	postID := events.PostID("X", "1")
	require.Equal(t, "40797e5f-f0b7-5da2-8288-d0e2f466ba90", postID)
	require.Equal(t, "08fa2b1f-353a-5042-a156-5a0c8c9fe236",
		events.PostVersionID(postID, "381418fc592d521a9d28f314d75b3dcd12567dc7d95e0b43c87f35ab924cbf4e"))
	require.NotEqual(t, postID, events.PostID("X", "2"))
	require.NotEqual(t, postID, events.PostID("X\x001", ""), "separator must keep parts apart")
}

// A payload's validation errors come in one order, whatever the run: a
// parked event's stored reason must be the same on every replay.
func TestValidationErrorsAreInAFixedOrder(t *testing.T) {
	reg := *samples()[events.TypePostVersionRegisteredV1].(*events.PostVersionRegisteredV1)
	reg.ContentHash, reg.OccurrencesHash = "X", "Y"
	done := *samples()[events.TypeInvestigationCompletedV1].(*events.InvestigationCompletedV1)
	claim := done.Claims[0]
	claim.Text, claim.Context, claim.Summary, claim.Reasoning = "", "", "", ""
	done.Claims = []events.ClaimV1{claim}
	for _, tc := range []struct {
		name  string
		p     events.Payload
		order []string
	}{
		{"registration hashes", reg, []string{"content_hash is not", "occurrences_hash is not"}},
		{"claim fields", done, []string{"text is empty", "context is empty", "summary is empty", "reasoning is empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := tc.p.Validate()
			require.Error(t, first)
			at := -1
			for _, want := range tc.order {
				i := strings.Index(first.Error(), want)
				require.Greater(t, i, at, "%q out of order in %q", want, first)
				at = i
			}
			for range 50 {
				require.Equal(t, first.Error(), tc.p.Validate().Error())
			}
		})
	}
}
