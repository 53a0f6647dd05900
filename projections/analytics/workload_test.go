package analytics_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/projections/analytics"
)

// simTopics are the topics of the simulated partitions.
var simTopics = events.Topics{Prefix: "sim."}

// workloadStart is the first event time: analysts' README examples query
// March 2026, so the workload lives there.
var workloadStart = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

// workload is a mixed, deterministic event log (several platforms and
// authors; complete investigations with and without claims, failed,
// requested-only, failed then retried and completed; views; re-registrations)
// laid out on simulated partitions, plus the facts an independent model
// needs.
type workload struct {
	events  []events.Event
	records []*kgo.Record
	topics  events.Topics
}

func hexOf(parts ...any) string {
	sum := sha256.Sum256([]byte(fmt.Sprint(parts...)))
	return hex.EncodeToString(sum[:])
}

func registration(platform, ext string, version int, author *events.AuthorV1, reporter bool) *events.PostVersionRegisteredV1 {
	if platform == events.PlatformBluesky { // a post's external id is its AT URI
		ext = events.BlueskyPostURI("did:plc:someone", ext)
	}
	postID := events.PostID(platform, ext)
	vh := hexOf("version", platform, ext, version)
	text := fmt.Sprintf("Post %s/%s version %d says the moon is made of cheese.", platform, ext, version)
	p := &events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, vh), Platform: platform, ExternalID: ext,
		VersionHash: vh, ContentHash: hexOf("content", vh), OccurrencesHash: hexOf("occ", vh),
		ContentText: text, WordCount: 11 + version, Provenance: events.ProvenanceClientFallback,
		ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{}, Author: author,
	}
	if reporter {
		p.ReporterKey = hexOf("reporter", ext)
		p.Provenance = events.ProvenanceServerVerified
	}
	switch platform {
	case events.PlatformX:
		p.URL = "https://x.com/someone/status/" + ext
		p.X = &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: "someone", MediaURLs: []string{}}
	case events.PlatformLessWrong:
		p.URL = "https://www.lesswrong.com/posts/" + ext + "/a-post"
		p.LessWrong = &events.LessWrongMetaV1{Slug: "a-post", Tags: []string{}}
	case events.PlatformSubstack:
		p.URL = "https://someone.substack.com/p/post-" + ext
		p.Substack = &events.SubstackMetaV1{SubstackPostID: ext, PublicationSubdomain: "someone", Slug: "post-" + ext,
			Title: "A post", AuthorName: "Someone"}
	case events.PlatformWikipedia:
		p.URL = "https://en.wikipedia.org/wiki/Page_" + ext
		p.Wikipedia = &events.WikipediaMetaV1{Language: "en", Title: "Page " + ext, PageID: ext, RevisionID: fmt.Sprint(version)}
	case events.PlatformBluesky:
		rkey := ext[strings.LastIndex(ext, "/")+1:]
		p.URL = "https://bsky.app/profile/someone.bsky.social/post/" + rkey
		p.Bluesky = &events.BlueskyMetaV1{DID: "did:plc:someone", RKey: rkey, Handle: "someone.bsky.social"}
	case events.PlatformThreads:
		p.URL = "https://www.threads.com/@someone/post/" + ext
		p.Threads = &events.ThreadsMetaV1{Code: ext, Username: "someone"}
	}
	return p
}

func completion(v *events.PostVersionRegisteredV1, claims int, model string) *events.InvestigationCompletedV1 {
	inv := events.InvestigationID(v.PostVersionID)
	c := &events.InvestigationCompletedV1{InvestigationID: inv, PostID: v.PostID, PostVersionID: v.PostVersionID,
		Provenance: v.Provenance, PromptVersion: "investigator-1", Provider: "OPENAI", Model: model, Claims: []events.ClaimV1{}}
	for i := 0; i < claims; i++ {
		c.Claims = append(c.Claims, events.ClaimV1{ID: events.ClaimID(inv, i),
			Text: fmt.Sprintf("claim %d of\t%s\n\"quoted\"", i, v.ExternalID), Context: "context", Summary: "the moon is rock",
			Reasoning: "samples", Sources: []events.SourceV1{{URL: "https://example.org/moon", Title: "Moon", Snippet: "rock"}}})
	}
	return c
}

// The workload's evidence policies, investigator prompts and registries.
const (
	strictPolicy        = "strict-v1@0a0a0a0a0a0a"
	validatorOnlyPolicy = "validator-only-v1@0b0b0b0b0b0b"
	workloadRegistry    = "starter-v1@0c0c0c0c0c0c"
)

// assessmentOutcomes are the judgements the workload's assessments take,
// as the engine would make them; the first publishes under the strict
// policy, the others are withheld with their failed rules.
var assessmentOutcomes = []struct {
	verdict, gate4 string
	failed         []string
}{
	{events.EvidenceRefuted, "HIGH", nil},
	{events.EvidenceContested, "MEDIUM", []string{"contested"}},
	{events.EvidenceRefuted, "INSUFFICIENT", []string{"no_authoritative_contradiction", "gate4_below_minimum"}},
	{events.EvidenceNotEnough, "INSUFFICIENT", []string{"not_refuted", "no_authoritative_contradiction", "gate4_below_minimum"}},
	{events.EvidenceSupported, "HIGH", []string{"not_refuted", "no_authoritative_contradiction", "reliable_source_supports"}},
}

// assessedRun is a run of attempt 1 of series that ends complete with
// claims published claims: the attempt's start, the assessments of its
// approved submissions (the published ones first, then those withheld;
// under the validator-only policy every approved claim is published), at
// times a second assessment of the first submission (which changes
// nothing), and the completion. post and ver pick the prompt, policy and
// outcomes.
func assessedRun(v *events.PostVersionRegisteredV1, series, post, ver, claims int, model string) []events.Payload {
	inv := events.InvestigationID(v.PostVersionID)
	ref := events.AttemptRef{InvestigationID: inv, Series: series, Attempt: 1}
	prompt := []string{"v3", "v4"}[post%2]
	out := []events.Payload{&events.InvestigationAttemptStartedV1{AttemptRef: ref, Worker: "w",
		Prompt: events.PromptRefV1{Name: "investigator", Version: prompt, SHA256: hexOf("prompt", prompt)}, Provider: "OPENAI", Model: model,
		Instructions: "i", Tools: []events.ToolDefinitionV1{}, WebSearch: "NATIVE", RoundCap: 24, Credential: events.CredentialInstance,
		InputEventID: "0194f3a2-7c1e-7b3a-9a55-2f3c4d5e6f71"}}
	policy, withheld := strictPolicy, (post+ver)%3
	if post%5 == 4 {
		policy, withheld = validatorOnlyPolicy, 0
	}
	for seq := 0; seq < claims+withheld; seq++ {
		outcome := 0
		if seq >= claims {
			outcome = 1 + (post+seq)%(len(assessmentOutcomes)-1)
		} else if policy == validatorOnlyPolicy {
			outcome = (post + seq) % len(assessmentOutcomes)
		}
		out = append(out, assessment(ref, seq, policy, outcome, seq >= claims))
	}
	if claims+withheld > 0 && post%11 == 5 {
		again := assessment(ref, 0, policy, 3, true)
		out = append(out, again)
	}
	c := completion(v, claims, model)
	c.Series, c.Attempt = series, 1
	for k := range c.Claims {
		c.Claims[k].SubmissionID = events.SubmissionID(ref, k)
	}
	return append(out, c)
}

// assessment is the judgement of submission seq of ref: outcome of
// assessmentOutcomes, withheld or published, with 1 to 3 sources of
// cycling tiers.
func assessment(ref events.AttemptRef, seq int, policy string, outcome int, withheld bool) *events.InvestigationClaimAssessedV1 {
	o := assessmentOutcomes[outcome]
	a := &events.InvestigationClaimAssessedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq),
		Queries: []events.EvidenceQueryV1{{Query: "moon made of cheese", Kind: "keyword", Results: 3}}, Sources: []events.AssessedSourceV1{},
		Dropped: []events.DroppedSourceV1{}, EMax: 0.1, EMean3: 0.1, CMax: 0.9, RelAvg: 0.85, RecMax: 0.5, Raw: 0.1, Score: 7,
		Verdict: o.verdict, Gate4: o.gate4, Gate4Sources: 2, Gate4Quality: 0.85, Gate4Agreement: 1,
		RegistryVersion: workloadRegistry, PolicyVersion: policy, PublishMode: "strict", Published: true, Reason: "published", Failed: []string{}}
	if policy == validatorOnlyPolicy {
		a.PublishMode = "validator-only"
	} else if withheld {
		a.Published, a.Reason, a.Failed = false, o.failed[0], append([]string{}, o.failed...)
	}
	n := 1 + (seq+len(ref.InvestigationID)+int(ref.InvestigationID[0]))%3
	for j := 0; j < n; j++ {
		tier := 1 + (seq+j+int(ref.InvestigationID[1]))%5
		domain := fmt.Sprintf("tier%d-%d.example", tier, (seq+j)%4)
		a.Sources = append(a.Sources, events.AssessedSourceV1{URL: "https://www." + domain + "/moon/" + fmt.Sprint(j), Domain: domain,
			Tier: tier, Rule: "exact:" + domain, Title: "Moon", Snippet: "The moon is rock.", Origin: "search",
			Entail: 0.1, Contradict: 0.8, Neutral: 0.1, Recency: 0.5})
	}
	return a
}

func request(v *events.PostVersionRegisteredV1, source string) *events.InvestigationRequestedV1 {
	return &events.InvestigationRequestedV1{InvestigationID: events.InvestigationID(v.PostVersionID), PostID: v.PostID,
		PostVersionID: v.PostVersionID, Platform: v.Platform, ExternalID: v.ExternalID, VersionHash: v.VersionHash, Source: source}
}

func failure(v *events.PostVersionRegisteredV1, series int) *events.InvestigationFailedV1 {
	return &events.InvestigationFailedV1{InvestigationID: events.InvestigationID(v.PostVersionID), PostID: v.PostID,
		PostVersionID: v.PostVersionID, Provenance: v.Provenance, Reason: "provider said no", Attempts: 4, Series: series}
}

func view(v *events.PostVersionRegisteredV1, n int) *events.PostViewRecordedV2 {
	kind := events.ViewerAnonymousSession
	if n%3 == 0 {
		kind = events.ViewerInstanceAPIKey
	}
	return &events.PostViewRecordedV2{PostID: v.PostID, PostVersionID: v.PostVersionID, Platform: v.Platform,
		ExternalID: v.ExternalID, ViewerKey: hexOf("viewer", n), ViewerKind: kind, IPRangeKey: hexOf("range", n%5)}
}

// newWorkload builds posts posts with their histories. Each aggregate's
// events are in time order; aggregates interleave.
func newWorkload(seed uint64, posts, partitions int) workload {
	rng := rand.New(rand.NewPCG(seed, seed^0x51ab))
	reg := events.NewCatalogRegistry()
	type timed struct {
		p  events.Payload
		at time.Time
	}
	var all []timed
	for i := 0; i < posts; i++ {
		platform := events.Platforms[i%len(events.Platforms)]
		ext := fmt.Sprintf("p%04d", i)
		var author *events.AuthorV1
		if i%9 != 8 { // some registrations name no author
			a := (i / len(events.Platforms)) % 5
			author = &events.AuthorV1{PlatformUserID: fmt.Sprintf("user-%d", a), DisplayName: fmt.Sprintf("User %d of %s", a, platform)}
		}
		// Each post's history starts on some day of March and moves forward.
		at := workloadStart.Add(time.Duration(rng.IntN(28*24)) * time.Hour).Add(time.Duration(i) * time.Millisecond)
		step := func() time.Time {
			at = at.Add(time.Duration(1+rng.IntN(40*60)) * time.Minute).Add(time.Duration(rng.IntN(1000)) * time.Microsecond)
			return at
		}
		versions := 1 + i%2
		for ver := 1; ver <= versions; ver++ {
			v := registration(platform, ext, ver, author, i%4 == 0)
			all = append(all, timed{v, step()})
			if i%7 == 0 { // a re-registration of the same version
				all = append(all, timed{v, step()})
			}
			for n := 0; n < rng.IntN(6); n++ {
				all = append(all, timed{view(v, i*100+ver*10+n), step()})
			}
			switch rng.IntN(7) {
			case 0: // never investigated
			case 1: // requested only
				all = append(all, timed{request(v, events.RequestSourceSelector), step()})
			case 2: // failed
				all = append(all, timed{request(v, events.RequestSourceSelector), step()}, timed{failure(v, 1), step()})
			case 3: // complete, no claims (some withheld by the evidence engine)
				all = append(all, timed{request(v, events.RequestSourceSelector), step()})
				for _, p := range assessedRun(v, 1, i, ver, 0, "gpt-5") {
					all = append(all, timed{p, step()})
				}
			case 4, 5: // complete with claims, requested twice
				all = append(all, timed{request(v, events.RequestSourceInvestigateNow), step()},
					timed{request(v, events.RequestSourceSelector), step()})
				for _, p := range assessedRun(v, 1, i, ver, 1+rng.IntN(3), "gpt-5") {
					all = append(all, timed{p, step()})
				}
			case 6: // failed, retried by investigateNow, then complete
				all = append(all, timed{request(v, events.RequestSourceSelector), step()}, timed{failure(v, 1), step()},
					timed{request(v, events.RequestSourceInvestigateNow), step()})
				for _, p := range assessedRun(v, 2, i, ver, rng.IntN(2), "gpt-5-mini") {
					all = append(all, timed{p, step()})
				}
			}
			for n := 0; n < rng.IntN(4); n++ {
				all = append(all, timed{view(v, i*100+ver*10+5+n), step()})
			}
		}
	}
	// Aggregates interleave in time; each keeps its own order.
	sort.SliceStable(all, func(a, b int) bool { return all[a].at.Before(all[b].at) })
	w := workload{topics: simTopics}
	next := map[string]int64{}
	for n, t := range all {
		ev, err := reg.New(t.p, events.Meta{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("metrics-%d-%d", seed, n))).String(), Time: t.at})
		if err != nil {
			panic(err)
		}
		msg, err := reg.Encode(ev)
		if err != nil {
			panic(err)
		}
		ev.Time = ev.Time.UTC().Truncate(time.Microsecond)
		w.events = append(w.events, ev)
		h := fnv.New32a()
		h.Write([]byte(msg.Key))
		part := int32(h.Sum32() % uint32(partitions))
		topic := w.topics.Name(msg.Topic)
		rec := &kgo.Record{Topic: topic, Partition: part, Key: []byte(msg.Key), Value: msg.Value, Timestamp: ev.Time,
			Offset: next[fmt.Sprint(topic, part)]}
		next[fmt.Sprint(topic, part)]++
		for k, v := range msg.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		sort.Slice(rec.Headers, func(a, b int) bool { return rec.Headers[a].Key < rec.Headers[b].Key })
		w.records = append(w.records, rec)
	}
	return w
}

// batches cuts the records into per-partition batches of at most size, in
// an order that interleaves partitions (each partition's batches in order),
// as a runner would deliver them.
func (w workload) batches(size int, seed uint64) []kafka.Batch {
	byPart := map[string][]*kgo.Record{}
	var keys []string
	for _, r := range w.records {
		k := fmt.Sprint(r.Topic, "/", r.Partition)
		if _, ok := byPart[k]; !ok {
			keys = append(keys, k)
		}
		byPart[k] = append(byPart[k], r)
	}
	queues := map[string][]kafka.Batch{}
	for _, k := range keys {
		recs := byPart[k]
		for s := 0; s < len(recs); s += size {
			e := min(s+size, len(recs))
			queues[k] = append(queues[k], kafka.Batch{Topic: recs[0].Topic, Partition: recs[0].Partition, Records: recs[s:e]})
		}
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []kafka.Batch
	for len(keys) > 0 {
		i := rng.IntN(len(keys))
		k := keys[i]
		out = append(out, queues[k][0])
		queues[k] = queues[k][1:]
		if len(queues[k]) == 0 {
			keys = append(keys[:i], keys[i+1:]...)
		}
	}
	return out
}

// model is the expected read model, computed from the events by a direct
// reading of the definitions, without ClickHouse.
type model struct {
	// per investigation: complete or not, latest completion time and claims
	invs map[string]*modelInv
	// per version: platform and author of its latest registration
	versions map[string]modelVersion
	views    []modelView
	names    map[string]modelName
	// assessments by submission, in log order of their first assessment
	assessments []modelAssessment
}

type modelInv struct {
	postID, versionID string
	complete          bool
	completedAt       time.Time
	claims            int
}

// modelAssessment is the first assessment of a submission, with the
// platform of its investigation and the prompt and model of its attempt.
type modelAssessment struct {
	platform, prompt, model string
	p                       *events.InvestigationClaimAssessedV1
	at                      time.Time
}

type modelVersion struct{ platform, authorID string }

type modelView struct {
	day      time.Time
	platform string
}

type modelName struct {
	at                    time.Time
	id                    string
	platform, displayName string
}

func buildModel(evs []events.Event) model {
	m := model{invs: map[string]*modelInv{}, versions: map[string]modelVersion{}, names: map[string]modelName{}}
	type attemptKey struct {
		inv             string
		series, attempt int
	}
	attempts := map[attemptKey][2]string{}
	platforms := map[string]string{}
	assessed := map[string]bool{}
	for _, ev := range evs {
		at := ev.Time.Truncate(time.Millisecond)
		switch p := ev.Payload.(type) {
		case *events.PostVersionRegisteredV1:
			author := ""
			if p.Author != nil {
				author = events.AuthorID(p.Platform, p.Author.PlatformUserID)
				n, ok := m.names[author]
				if !ok || at.After(n.at) || (at.Equal(n.at) && ev.ID > n.id) {
					m.names[author] = modelName{at: at, id: ev.ID, platform: p.Platform, displayName: p.Author.DisplayName}
				}
			}
			m.versions[p.PostVersionID] = modelVersion{platform: p.Platform, authorID: author}
		case *events.PostViewRecordedV2:
			m.views = append(m.views, modelView{day: at.Truncate(24 * time.Hour), platform: p.Platform})
		case *events.InvestigationCompletedV1:
			inv := m.inv(p.InvestigationID, p.PostID, p.PostVersionID)
			inv.complete, inv.completedAt, inv.claims = true, at, len(p.Claims)
		case *events.InvestigationRequestedV1:
			m.inv(p.InvestigationID, p.PostID, p.PostVersionID)
			platforms[p.InvestigationID] = p.Platform
		case *events.InvestigationAttemptStartedV1:
			k := attemptKey{p.InvestigationID, p.Series, p.Attempt}
			if _, ok := attempts[k]; !ok {
				attempts[k] = [2]string{p.Prompt.Name + "@" + p.Prompt.Version, p.Model}
			}
		case *events.InvestigationClaimAssessedV1:
			if assessed[p.SubmissionID] {
				continue // the first assessment of a submission counts
			}
			assessed[p.SubmissionID] = true
			a := attempts[attemptKey{p.InvestigationID, p.Series, p.Attempt}]
			m.assessments = append(m.assessments, modelAssessment{platform: platforms[p.InvestigationID], prompt: a[0], model: a[1], p: p, at: at})
		case *events.InvestigationFailedV1:
			m.inv(p.InvestigationID, p.PostID, p.PostVersionID)
		}
	}
	return m
}

func (m model) inv(id, post, version string) *modelInv {
	if m.invs[id] == nil {
		m.invs[id] = &modelInv{postID: post, versionID: version}
	}
	return m.invs[id]
}

// incidence counts per the definition: posts with >= 1 COMPLETE
// investigation matching f, and those with >= 1 such investigation with a claim.
func (m model) incidence(f analytics.Filter) analytics.Incidence {
	flagged := map[string]bool{}
	for _, inv := range m.invs {
		v := m.versions[inv.versionID]
		if !inv.complete || (f.Platform != "" && v.platform != f.Platform) || (f.AuthorID != "" && v.authorID != f.AuthorID) ||
			(f.WindowStart != nil && inv.completedAt.Before(f.WindowStart.Truncate(time.Millisecond))) ||
			(f.WindowEnd != nil && !inv.completedAt.Before(f.WindowEnd.Truncate(time.Millisecond))) {
			continue
		}
		flagged[inv.postID] = flagged[inv.postID] || inv.claims > 0
	}
	out := analytics.Incidence{TotalInvestigatedPosts: int64(len(flagged))}
	for _, f := range flagged {
		if f {
			out.InvestigatedPostsWithFlags++
		}
	}
	if out.TotalInvestigatedPosts > 0 {
		out.FactCheckIncidence = float64(out.InvestigatedPostsWithFlags) / float64(out.TotalInvestigatedPosts)
	}
	return out
}

// authorStats is every author's all-time counts, ordered as AuthorStats.
func (m model) authorStats() []analytics.AuthorStat {
	type acc struct {
		posts, flagged map[string]bool
		claims         int64
	}
	by := map[string]*acc{}
	for _, inv := range m.invs {
		a := m.versions[inv.versionID].authorID
		if !inv.complete || a == "" {
			continue
		}
		if by[a] == nil {
			by[a] = &acc{posts: map[string]bool{}, flagged: map[string]bool{}}
		}
		by[a].posts[inv.postID] = true
		if inv.claims > 0 {
			by[a].flagged[inv.postID] = true
		}
		by[a].claims += int64(inv.claims)
	}
	var out []analytics.AuthorStat
	for id, a := range by {
		s := analytics.AuthorStat{AuthorID: id, Platform: m.names[id].platform, DisplayName: m.names[id].displayName,
			InvestigatedPosts: int64(len(a.posts)), FlaggedPosts: int64(len(a.flagged)), FlaggedClaims: a.claims}
		s.FactCheckIncidence = float64(s.FlaggedPosts) / float64(s.InvestigatedPosts)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].FlaggedClaims != out[j].FlaggedClaims {
			return out[i].FlaggedClaims > out[j].FlaggedClaims
		}
		if out[i].InvestigatedPosts != out[j].InvestigatedPosts {
			return out[i].InvestigatedPosts > out[j].InvestigatedPosts
		}
		return out[i].AuthorID < out[j].AuthorID
	})
	return out
}

// daily is the daily series, ordered by day and platform.
func (m model) daily() []analytics.Day {
	type key struct {
		day      time.Time
		platform string
	}
	by := map[key]*analytics.Day{}
	flagged := map[key]map[string]bool{}
	get := func(k key) *analytics.Day {
		if by[k] == nil {
			by[k] = &analytics.Day{Day: k.day, Platform: k.platform}
			flagged[k] = map[string]bool{}
		}
		return by[k]
	}
	for _, inv := range m.invs {
		if !inv.complete {
			continue
		}
		k := key{inv.completedAt.Truncate(24 * time.Hour), m.versions[inv.versionID].platform}
		d := get(k)
		d.InvestigationsCompleted++
		d.Claims += int64(inv.claims)
		if inv.claims > 0 {
			flagged[k][inv.postID] = true
		}
	}
	for _, v := range m.views {
		get(key(v)).Views++
	}
	var out []analytics.Day
	for k, d := range by {
		d.PostsFlagged = int64(len(flagged[k]))
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Day.Equal(out[j].Day) {
			return out[i].Day.Before(out[j].Day)
		}
		return out[i].Platform < out[j].Platform
	})
	return out
}
