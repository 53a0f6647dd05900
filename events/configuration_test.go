package events_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
)

func sampleConfiguration() events.AnalysisConfigurationV1 {
	return events.AnalysisConfigurationV1{Name: "prompt-v2-gpt5", Model: "gpt-5", InvestigatorPrompt: "v2",
		ValidatorPrompt: "v1", Policy: "strict-v1@a176a28a7d06", AuthorContext: true}
}

func controlSamples() map[string]events.Payload {
	cfg := sampleConfiguration()
	id := events.ConfigurationID(cfg)
	return map[string]events.Payload{
		events.TypeConfigurationDeclaredV1: &events.ConfigurationDeclaredV1{ConfigurationID: id, Configuration: cfg,
			Operator: "ops@example", Reason: "prompt v2 with author context"},
		events.TypeConfigurationPromotedV1: &events.ConfigurationPromotedV1{ConfigurationID: id,
			PreviousConfigurationID: events.DefaultConfigurationID, Operator: "ops@example", Reason: "experiment e1 won"},
		events.TypeExperimentStartedV1: &events.ExperimentStartedV1{ExperimentID: events.ExperimentID("e1"), Name: "e1",
			ControlConfigurationID: events.DefaultConfigurationID, CandidateConfigurationID: id, CandidateShareBP: 2000,
			Operator: "ops@example", Reason: "does author context help?"},
		events.TypeExperimentStoppedV1: &events.ExperimentStoppedV1{ExperimentID: events.ExperimentID("e1"),
			Operator: "ops@example", Reason: "enough data"},
	}
}

func appealSamples(postID, versionHash string) map[string]events.Payload {
	pv := events.PostVersionID(postID, versionHash)
	inv := events.InvestigationID(pv)
	claim := events.ClaimID(inv, 0)
	key := "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae"
	reason := "The cited report says 41%, not 14%; the claim misreads its table 2."
	urls := []string{"https://example.org/report.pdf"}
	appeal := events.AppealID(claim, key, reason, urls)
	return map[string]events.Payload{
		events.TypeAppealFiledV1: &events.AppealFiledV1{AppealID: appeal, ClaimID: claim, InvestigationID: inv,
			PostID: postID, PostVersionID: pv, Role: events.AppealRoleAuthor, Reason: reason, URLs: urls, RequesterKey: key},
		events.TypeAppealDecidedV1: &events.AppealDecidedV1{AppealID: appeal, ClaimID: claim, InvestigationID: inv,
			Outcome: events.AppealRetracted, Reason: "no source the policy accepts still contradicts the claim",
			PolicyVersion: "strict-v1@a176a28a7d06"},
	}
}

func TestAppealInputIsBounded(t *testing.T) {
	base := appealSamples(events.PostID(events.PlatformX, "1"), strings.Repeat("c", 64))[events.TypeAppealFiledV1].(*events.AppealFiledV1)
	require.NoError(t, base.Validate())
	tests := []struct {
		name   string
		reason string
		urls   []string
	}{
		{"reason too short", "wrong", nil},
		{"reason too long", strings.Repeat("é", events.AppealReasonMaxRunes+1), nil},
		{"reason with NUL", "this is wrong\x00 because", nil},
		{"reason with escape", "this is wrong \x1b[31m because", nil},
		{"invalid UTF-8", "this is wrong \xff because", nil},
		{"loopback url", "this is wrong because", []string{"http://127.0.0.1/admin"}},
		{"private url", "this is wrong because", []string{"https://10.0.0.7/"}},
		{"metadata url", "this is wrong because", []string{"http://169.254.169.254/latest/meta-data"}},
		{"mapped loopback", "this is wrong because", []string{"http://[::ffff:127.0.0.1]/"}},
		{"localhost", "this is wrong because", []string{"http://localhost:8080/"}},
		{"credentials", "this is wrong because", []string{"https://user:pw@example.org/"}},
		{"javascript", "this is wrong because", []string{"javascript:alert(1)"}},
		{"file", "this is wrong because", []string{"file:///etc/passwd"}},
		{"repeated", "this is wrong because", []string{"https://a.example/", "https://a.example/"}},
		{"too many", "this is wrong because", []string{"https://a.example/1", "https://a.example/2", "https://a.example/3",
			"https://a.example/4", "https://a.example/5", "https://a.example/6"}},
		{"too long", "this is wrong because", []string{"https://a.example/" + strings.Repeat("a", events.AppealURLMaxBytes)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := *base
			p.Reason = tt.reason
			p.URLs = tt.urls
			if p.URLs == nil {
				p.URLs = []string{}
			}
			p.AppealID = events.AppealID(p.ClaimID, p.RequesterKey, p.Reason, p.URLs)
			require.Error(t, p.Validate())
		})
	}
}

func TestConfigurationIdentity(t *testing.T) {
	a := sampleConfiguration()
	b := a
	b.AuthorContext = false
	require.NotEqual(t, events.ConfigurationID(a), events.ConfigurationID(b), "every field is part of the identity")
	c := a
	c.Name = "other"
	require.NotEqual(t, events.ConfigurationID(a), events.ConfigurationID(c))
	require.Equal(t, events.ConfigurationID(a), events.ConfigurationID(sampleConfiguration()))

	pv := events.PostVersionID(events.PostID(events.PlatformX, "1"), strings.Repeat("a", 64))
	require.Equal(t, events.InvestigationID(pv), events.InvestigationIDFor(pv, events.DefaultConfigurationID),
		"the default configuration keeps the ids written before configurations existed")
	require.NotEqual(t, events.InvestigationID(pv), events.InvestigationIDFor(pv, events.ConfigurationID(a)))
}

func TestExperimentArmIsDeterministicAndSplitsByShare(t *testing.T) {
	exp := events.ExperimentID("e1")
	candidates := 0
	const n = 20000
	for i := 0; i < n; i++ {
		pv := events.PostVersionID(events.PostID(events.PlatformX, "p"), strings.Repeat("0", 60)+string(rune('a'+i%6))+itoa(i))
		arm := events.ExperimentArm(exp, pv, 2500)
		require.Equal(t, arm, events.ExperimentArm(exp, pv, 2500))
		if arm == events.ArmCandidate {
			candidates++
		}
	}
	// 25% of 20,000 is 5,000 with a standard deviation of about 61.
	require.InDelta(t, 5000, candidates, 400)
	pv := events.PostVersionID(events.PostID(events.PlatformX, "p"), "v")
	require.Equal(t, events.ArmControl, events.ExperimentArm(exp, pv, 0))
	require.Equal(t, events.ArmCandidate, events.ExperimentArm(exp, pv, events.MaxShareBasisPoints))
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}

func TestConfiguredInvestigationRequest(t *testing.T) {
	cfg := sampleConfiguration()
	cfgID := events.ConfigurationID(cfg)
	postID := events.PostID(events.PlatformLessWrong, "x1")
	pv := events.PostVersionID(postID, strings.Repeat("b", 64))
	good := func() events.InvestigationRequestedV1 {
		return events.InvestigationRequestedV1{InvestigationID: events.InvestigationIDFor(pv, cfgID), PostID: postID,
			PostVersionID: pv, Platform: events.PlatformLessWrong, ExternalID: "x1", VersionHash: strings.Repeat("b", 64),
			Source: events.RequestSourceReprocess, ConfigurationID: cfgID, Configuration: &cfg,
			Supersedes: events.InvestigationID(pv)}
	}
	require.NoError(t, good().Validate())
	other := cfg
	other.Model = "gpt-4.1"
	tests := []struct {
		name   string
		mutate func(*events.InvestigationRequestedV1)
	}{
		{"id of the default configuration", func(p *events.InvestigationRequestedV1) { p.InvestigationID = events.InvestigationID(pv) }},
		{"configuration missing", func(p *events.InvestigationRequestedV1) { p.Configuration = nil }},
		{"configuration that is not the id's", func(p *events.InvestigationRequestedV1) { p.Configuration = &other }},
		{"default with a configuration", func(p *events.InvestigationRequestedV1) {
			p.ConfigurationID, p.InvestigationID = "", events.InvestigationID(pv)
		}},
		{"supersedes itself", func(p *events.InvestigationRequestedV1) { p.Supersedes = p.InvestigationID }},
		{"supersedes garbage", func(p *events.InvestigationRequestedV1) { p.Supersedes = "x" }},
		{"arm without experiment", func(p *events.InvestigationRequestedV1) { p.Arm = events.ArmCandidate }},
		{"unknown arm", func(p *events.InvestigationRequestedV1) { p.ExperimentID, p.Arm = events.ExperimentID("e"), "B" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good()
			tt.mutate(&p)
			require.Error(t, p.Validate())
		})
	}
}

func TestControlEventsRefuseBadInput(t *testing.T) {
	cfg := sampleConfiguration()
	tests := []struct {
		name string
		p    events.Payload
	}{
		{"declared with a foreign id", &events.ConfigurationDeclaredV1{ConfigurationID: events.ExperimentID("x"), Configuration: cfg, Operator: "o", Reason: "r"}},
		{"declared as default", func() events.Payload {
			c := cfg
			c.Name = events.DefaultConfigurationName
			return &events.ConfigurationDeclaredV1{ConfigurationID: events.ConfigurationID(c), Configuration: c, Operator: "o", Reason: "r"}
		}()},
		{"name with spaces", func() events.Payload {
			c := cfg
			c.Name = "Prompt V2"
			return &events.ConfigurationDeclaredV1{ConfigurationID: events.ConfigurationID(c), Configuration: c, Operator: "o", Reason: "r"}
		}()},
		{"policy that is no version", func() events.Payload {
			c := cfg
			c.Policy = "strict-v1"
			return &events.ConfigurationDeclaredV1{ConfigurationID: events.ConfigurationID(c), Configuration: c, Operator: "o", Reason: "r"}
		}()},
		{"promotion without reason", &events.ConfigurationPromotedV1{ConfigurationID: events.ConfigurationID(cfg), Operator: "o"}},
		{"promotion of garbage", &events.ConfigurationPromotedV1{ConfigurationID: "nope", Operator: "o", Reason: "r"}},
		{"operator with NUL", &events.ConfigurationPromotedV1{Operator: "o\x00", Reason: "r"}},
		{"share 100%", &events.ExperimentStartedV1{ExperimentID: events.ExperimentID("e"), Name: "e",
			CandidateConfigurationID: events.ConfigurationID(cfg), CandidateShareBP: events.MaxShareBasisPoints, Operator: "o", Reason: "r"}},
		{"candidate is control", &events.ExperimentStartedV1{ExperimentID: events.ExperimentID("e"), Name: "e",
			ControlConfigurationID: events.ConfigurationID(cfg), CandidateConfigurationID: events.ConfigurationID(cfg),
			CandidateShareBP: 10, Operator: "o", Reason: "r"}},
		{"experiment id not from its name", &events.ExperimentStartedV1{ExperimentID: events.ExperimentID("f"), Name: "e",
			CandidateConfigurationID: events.ConfigurationID(cfg), CandidateShareBP: 10, Operator: "o", Reason: "r"}},
		{"stop of garbage", &events.ExperimentStoppedV1{ExperimentID: "e", Operator: "o", Reason: "r"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Error(t, tt.p.Validate()) })
	}
}
