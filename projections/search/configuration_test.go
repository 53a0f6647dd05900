package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/search"
)

// reprocessed adds, for the first fixture post, an investigation under a
// second configuration (one claim) and, for both investigations, appeals
// that retract claims: two appeals retract the default's claim (the one
// with the smaller appeal id gives the reason), one upholds nothing.
func reprocessed(t *testing.T, c []built) (extra []events.Event, configured string) {
	t.Helper()
	reg := events.NewCatalogRegistry()
	n := 0
	ev := func(p events.Payload, at time.Time) events.Event {
		n++
		e, err := reg.New(p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("search-config/%d", n))).String(), Time: at})
		require.NoError(t, err)
		return e
	}
	cfg := events.AnalysisConfigurationV1{Name: "prompt-v2", Model: "gpt-5", InvestigatorPrompt: "v2", ValidatorPrompt: "v1",
		Policy: "strict-v1@a176a28a7d06"}
	cfgID := events.ConfigurationID(cfg)
	eiffel := c[0]
	first := eiffel.posts[0].Payload.(*events.PostVersionRegisteredV1)
	configured = events.InvestigationIDFor(eiffel.postVersionID, cfgID)
	at := eiffel.checkedAt.Add(time.Hour)
	claim := events.ClaimV1{ID: events.ClaimID(configured, 0), Text: "completed in 1925", Context: "… completed in 1925 …",
		Summary: "It was completed in 1889.", Reasoning: "Finished for the 1889 World's Fair.",
		Sources: []events.SourceV1{{URL: "https://example.org/eiffel", Title: "Eiffel", Snippet: "1889"}}}
	extra = append(extra,
		ev(&events.InvestigationRequestedV1{InvestigationID: configured, PostID: first.PostID, PostVersionID: eiffel.postVersionID,
			Platform: first.Platform, ExternalID: first.ExternalID, VersionHash: first.VersionHash, Source: events.RequestSourceReprocess,
			ConfigurationID: cfgID, Configuration: &cfg, Supersedes: eiffel.investigationID}, at),
		ev(&events.InvestigationCompletedV1{InvestigationID: configured, PostID: first.PostID, PostVersionID: eiffel.postVersionID,
			Provenance: events.ProvenanceClientFallback, PromptVersion: "v2", Provider: "openai-responses", Model: "gpt-5",
			Claims: []events.ClaimV1{claim}, Series: 1, Attempt: 1, ConfigurationID: cfgID}, at.Add(time.Minute)))
	defaultClaim := events.ClaimID(eiffel.investigationID, 0)
	for i, reason := range []string{"the sources no longer hold", "retracted again by a second appeal"} {
		extra = append(extra, ev(&events.AppealDecidedV1{AppealID: events.AppealID(defaultClaim, hash("who"), reason, []string{}),
			ClaimID: defaultClaim, InvestigationID: eiffel.investigationID, Outcome: events.AppealRetracted, Reason: reason,
			PolicyVersion: "strict-v1@a176a28a7d06"}, at.Add(time.Duration(2+i)*time.Minute)))
	}
	boiling := c[1]
	// A second decision of an appeal that was upheld changes nothing.
	upheld := events.AppealID(events.ClaimID(boiling.investigationID, 1), hash("who"), "y", []string{})
	for i, outcome := range []string{events.AppealUpheld, events.AppealRetracted} {
		extra = append(extra, ev(&events.AppealDecidedV1{AppealID: upheld, ClaimID: events.ClaimID(boiling.investigationID, 1),
			InvestigationID: boiling.investigationID, Outcome: outcome, Reason: "decision " + outcome,
			PolicyVersion: "strict-v1@a176a28a7d06"}, at.Add(time.Duration(6+i)*time.Minute)))
	}
	extra = append(extra, ev(&events.AppealDecidedV1{AppealID: events.AppealID(events.ClaimID(boiling.investigationID, 0), hash("who"), "x", []string{}),
		ClaimID: events.ClaimID(boiling.investigationID, 0), InvestigationID: boiling.investigationID, Outcome: events.AppealUpheld,
		Reason: "the evidence still refutes it", PolicyVersion: "strict-v1@a176a28a7d06"}, at.Add(5*time.Minute)))
	return extra, configured
}

// TestConfigurationsAndRetractionsInAnyOrder: an investigation under a
// second configuration gets its own document (with configuration_id and
// its version's registration data), a retracted claim leaves its
// document, an upheld one stays, and revisions and documents are the same
// whatever the order the three kinds of events arrive in.
func TestConfigurationsAndRetractionsInAnyOrder(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	es := esClient(t)
	pfx := prefix(t, es)
	dbURL := testenv.Postgres(t)
	c := corpus()
	extra, configured := reprocessed(t, c)

	// 1: posts, investigations, then the new events.
	idx1 := search.IndexName(pfx, 1)
	require.NoError(t, search.CreateIndex(ctx, es, idx1))
	a1 := search.NewApplierFor(es, idx1)
	p1 := state(t, dbURL, "search_cfg_one")
	apply(t, p1, a1, allPosts(c))
	apply(t, p1, a1, allInvestigations(c))
	apply(t, p1, a1, extra)

	// 2: the new events first, then investigations, then posts.
	idx2 := search.IndexName(pfx, 2)
	require.NoError(t, search.CreateIndex(ctx, es, idx2))
	a2 := search.NewApplierFor(es, idx2)
	p2 := state(t, dbURL, "search_cfg_two")
	for _, e := range reverseKeepingKeys(extra) {
		apply(t, p2, a2, []events.Event{e})
	}
	apply(t, p2, a2, allInvestigations(c))
	apply(t, p2, a2, allPosts(c))

	// 3: one event at a time, shuffled across the streams.
	idx3 := search.IndexName(pfx, 3)
	require.NoError(t, search.CreateIndex(ctx, es, idx3))
	a3 := search.NewApplierFor(es, idx3)
	p3 := state(t, dbURL, "search_cfg_three")
	streams := [][]events.Event{allPosts(c), allInvestigations(c), extra}
	rng := rand.New(rand.NewPCG(3, 5))
	for len(streams[0])+len(streams[1])+len(streams[2]) > 0 {
		s := rng.IntN(3)
		if len(streams[s]) == 0 {
			continue
		}
		apply(t, p3, a3, streams[s][:1])
		streams[s] = streams[s][1:]
	}

	d1, err := search.Dump(ctx, es, idx1)
	require.NoError(t, err)
	for _, idx := range []string{idx2, idx3} {
		d, err := search.Dump(ctx, es, idx)
		require.NoError(t, err)
		require.Equal(t, string(d1), string(d), idx)
	}
	require.Equal(t, 8, countLines(d1), "the seven complete investigations and the re-processed one")

	s1, err := search.ReadAll(ctx, es, idx1)
	require.NoError(t, err)
	byID := map[string]search.Stored{}
	for _, d := range s1 {
		byID[d.ID] = d
	}
	for _, idx := range []string{idx2, idx3} {
		s, err := search.ReadAll(ctx, es, idx)
		require.NoError(t, err)
		for _, d := range s {
			require.Equal(t, byID[d.ID].Version, d.Version, "revision of %s in %s", d.ID, idx)
		}
	}
	eiffel := c[0]
	var def, cfg search.Source
	require.NoError(t, json.Unmarshal(byID[eiffel.investigationID].Source, &def))
	require.NoError(t, json.Unmarshal(byID[configured].Source, &cfg))
	require.Empty(t, def.Claims, "the default's only claim was retracted")
	require.Zero(t, def.ClaimCount)
	require.Empty(t, def.ConfigurationID)
	require.NotContains(t, string(byID[eiffel.investigationID].Source), "configuration_id",
		"documents of the default configuration are unchanged")
	require.Equal(t, int64(len(eiffel.posts)+1+1), byID[eiffel.investigationID].Version,
		"registrations, the completion and one retracted claim (two appeals retracting it count once)")
	require.NotEmpty(t, cfg.ConfigurationID)
	require.Len(t, cfg.Claims, 1)
	require.Equal(t, eiffel.postVersionID, cfg.PostVersionID)
	require.Equal(t, 2, cfg.CorroborationCount, "the configured investigation's document carries its version's data")
	require.Equal(t, int64(len(eiffel.posts)+1), byID[configured].Version)
	var boiling search.Source
	require.NoError(t, json.Unmarshal(byID[c[1].investigationID].Source, &boiling))
	require.Len(t, boiling.Claims, 2, "an upheld appeal changes nothing, nor does a later decision of the same appeal")

	var reason string
	require.NoError(t, p3.QueryRow(ctx, `SELECT reason FROM retracted_claims`).Scan(&reason))
	first, second := events.AppealID(events.ClaimID(eiffel.investigationID, 0), hash("who"), "the sources no longer hold", []string{}),
		events.AppealID(events.ClaimID(eiffel.investigationID, 0), hash("who"), "retracted again by a second appeal", []string{})
	want := "the sources no longer hold"
	if second < first {
		want = "retracted again by a second appeal"
	}
	require.Equal(t, want, reason, "the smallest appeal id keeps the retraction, in any order")
}

// reverseKeepingKeys reverses the order of evs' aggregates while keeping
// each aggregate's events in their order, as any partitioning of the log
// does.
func reverseKeepingKeys(evs []events.Event) []events.Event {
	var subjects []string
	by := map[string][]events.Event{}
	for _, e := range evs {
		if _, ok := by[e.Subject]; !ok {
			subjects = append(subjects, e.Subject)
		}
		by[e.Subject] = append(by[e.Subject], e)
	}
	var out []events.Event
	for i := len(subjects) - 1; i >= 0; i-- {
		out = append(out, by[subjects[i]]...)
	}
	return out
}
