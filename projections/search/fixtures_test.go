package search_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
)

// start is the time of the first fixture event.
var start = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// claimSpec is one published claim of a fixture post.
type claimSpec struct{ text, summary, reasoning, sourceTitle string }

// postSpec is one post, its registrations and its investigation.
type postSpec struct {
	name       string
	platform   string
	text       string
	author     string // platform user id; "" for none
	verified   bool   // a SERVER_VERIFIED registration follows the client's
	reporters  []string
	outcome    string // "complete", "failed", "requested"
	checkedDay int    // days after start
	claims     []claimSpec
}

// built is a fixture post's ids and events.
type built struct {
	spec            postSpec
	investigationID string
	postVersionID   string
	authorID        string
	checkedAt       time.Time
	posts           []events.Event // registrations (posts topic)
	investigation   []events.Event // requested, completed/failed (investigations topic)
}

type builder struct {
	reg *events.Registry
	n   int
}

func (b *builder) event(p events.Payload, at time.Time) events.Event {
	b.n++
	ev, err := b.reg.New(p, events.Meta{
		ID:   uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("search-test/%d", b.n))).String(),
		Time: at,
	})
	if err != nil {
		panic(err)
	}
	return ev
}

func registration(s postSpec) *events.PostVersionRegisteredV1 {
	ext := s.name
	id, err := content.ComputeVersionIdentity(s.text, nil)
	if err != nil {
		panic(err)
	}
	postID := events.PostID(s.platform, ext)
	r := &events.PostVersionRegisteredV1{
		PostID: postID, PostVersionID: events.PostVersionID(postID, id.VersionHash), Platform: s.platform, ExternalID: ext,
		VersionHash: id.VersionHash, ContentHash: id.ContentHash, OccurrencesHash: id.OccurrencesHash,
		ContentText: s.text, WordCount: content.WordCount(s.text), Provenance: events.ProvenanceClientFallback,
		ServerFetchError: "not verified in tests", ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
	}
	if s.author != "" {
		r.Author = &events.AuthorV1{PlatformUserID: s.author, DisplayName: "Display " + s.author}
	}
	switch s.platform {
	case events.PlatformX:
		r.URL = "https://x.com/someone/status/" + ext
		r.X = &events.XMetaV1{TweetID: ext, Text: s.text, AuthorHandle: "someone", MediaURLs: []string{}}
	case events.PlatformLessWrong:
		r.URL = "https://www.lesswrong.com/posts/" + ext + "/slug"
		r.LessWrong = &events.LessWrongMetaV1{Slug: "slug-" + ext, Title: "Title " + ext, Tags: []string{}}
	case events.PlatformSubstack:
		r.URL = "https://example.substack.com/p/" + ext
		r.Substack = &events.SubstackMetaV1{SubstackPostID: ext, PublicationSubdomain: "example", Slug: ext,
			Title: "Title " + ext, AuthorName: "Writer"}
	case events.PlatformWikipedia:
		r.URL = "https://en.wikipedia.org/wiki/" + ext
		r.Wikipedia = &events.WikipediaMetaV1{Language: "en", Title: ext, PageID: "1", RevisionID: "2"}
	}
	return r
}

// build makes the events of each spec. Post i's events happen on day
// checkedDay, an hour apart per post so checked_at values differ.
func build(specs ...postSpec) []built {
	b := &builder{reg: events.NewCatalogRegistry()}
	out := make([]built, 0, len(specs))
	for i, s := range specs {
		at := start.Add(time.Duration(s.checkedDay)*24*time.Hour + time.Duration(i)*time.Hour)
		r := registration(s)
		f := built{spec: s, postVersionID: r.PostVersionID, investigationID: events.InvestigationID(r.PostVersionID)}
		if s.author != "" {
			f.authorID = events.AuthorID(s.platform, s.author)
		}
		f.posts = append(f.posts, b.event(r, at))
		if s.verified {
			v := *r
			v.Provenance, v.ServerFetchError = events.ProvenanceServerVerified, ""
			f.posts = append(f.posts, b.event(&v, at.Add(time.Second)))
		}
		for j, who := range s.reporters {
			again := *r
			again.ReporterKey = hash("reporter:" + who)
			f.posts = append(f.posts, b.event(&again, at.Add(time.Duration(2+j)*time.Second)))
		}
		provenance := events.ProvenanceClientFallback
		if s.verified {
			provenance = events.ProvenanceServerVerified
		}
		f.investigation = append(f.investigation, b.event(&events.InvestigationRequestedV1{
			InvestigationID: f.investigationID, PostID: r.PostID, PostVersionID: r.PostVersionID, Platform: r.Platform,
			ExternalID: r.ExternalID, VersionHash: r.VersionHash, Source: events.RequestSourceSelector, UniqueViewScore: 5,
		}, at.Add(10*time.Second)))
		f.checkedAt = at.Add(20 * time.Minute)
		switch s.outcome {
		case "complete":
			claims := make([]events.ClaimV1, len(s.claims))
			for n, c := range s.claims {
				claims[n] = events.ClaimV1{ID: events.ClaimID(f.investigationID, n), Text: c.text,
					Context: "… " + c.text + " …", Summary: c.summary, Reasoning: c.reasoning,
					Sources: []events.SourceV1{{URL: "https://example.org/evidence/" + s.name, Title: c.sourceTitle, Snippet: "Evidence for " + c.summary}}}
			}
			f.investigation = append(f.investigation, b.event(&events.InvestigationCompletedV1{
				InvestigationID: f.investigationID, PostID: r.PostID, PostVersionID: r.PostVersionID, Provenance: provenance,
				PromptVersion: "v3", Provider: "openai-responses", Model: "gpt-5", Claims: claims, Series: 1, Attempt: 1,
			}, f.checkedAt))
		case "failed":
			f.investigation = append(f.investigation, b.event(&events.InvestigationFailedV1{
				InvestigationID: f.investigationID, PostID: r.PostID, PostVersionID: r.PostVersionID, Provenance: provenance,
				Reason: "the provider refused", Attempts: 1, Series: 1,
			}, f.checkedAt))
		}
		out = append(out, f)
	}
	return out
}

// corpus is the researcher scenario: seven complete investigations on four
// platforms, one failed and one only requested.
func corpus() []built {
	return build(
		postSpec{name: "eiffel", platform: events.PlatformX, author: "alice", verified: false, reporters: []string{"r1", "r2"},
			outcome: "complete", checkedDay: 0,
			text: "Fun fact: the Eiffel Tower was completed in 1925, long after the World's Fair it was built for.",
			claims: []claimSpec{{
				text:        `the <b>Eiffel Tower</b> was completed in 1925 & "later"`,
				summary:     "The Eiffel Tower was completed in 1889.",
				reasoning:   "The wrought-iron lattice was finished in March 1889 for the Exposition Universelle, not in 1925.",
				sourceTitle: "History of the tower",
			}}},
		postSpec{name: "boiling", platform: events.PlatformLessWrong, author: "bob", verified: true, reporters: []string{"r1"},
			outcome: "complete", checkedDay: 1,
			text: "Water boils at 90 degrees Celsius at sea level, which is why pasta takes so long.",
			claims: []claimSpec{
				{text: "Water boils at 90 degrees Celsius at sea level", summary: "Water boils at 100 °C at sea level.",
					reasoning: "At standard atmospheric pressure pure water boils at 100 degrees Celsius.", sourceTitle: "Boiling point"},
				{text: "pasta takes so long", summary: "Cooking time is not explained by a low boiling point.",
					reasoning: "Pasta cooking time depends on starch gelatinization.", sourceTitle: "Cooking science"},
			}},
		postSpec{name: "wall", platform: events.PlatformWikipedia, author: "carol", verified: true,
			outcome: "complete", checkedDay: 2,
			text: "The Great Wall of China is the only man-made object visible from the Moon with the naked eye.",
			claims: []claimSpec{{text: "visible from the Moon with the naked eye", summary: "It is not visible from the Moon.",
				reasoning: "Astronauts report the wall cannot be distinguished from lunar distance; it is too narrow.", sourceTitle: "Space myths"}}},
		postSpec{name: "goldfish", platform: events.PlatformSubstack, author: "alice",
			outcome: "complete", checkedDay: 3,
			text: "Goldfish only have a three second memory, so the bowl always feels new.",
			claims: []claimSpec{
				{text: "three second memory", summary: "Goldfish remember for months.",
					reasoning: "Experiments trained goldfish to respond to sounds and remembered them for months.", sourceTitle: "Fish cognition"},
				{text: "the bowl always feels new", summary: "Unsupported.", reasoning: "Follows from the false premise.", sourceTitle: "Fish cognition 2"},
				{text: "Goldfish only have", summary: "Overgeneralization.", reasoning: "Memory spans vary; the Eiffel Tower is irrelevant here.", sourceTitle: "Fish cognition 3"},
			}},
		postSpec{name: "1860000000000000001", platform: events.PlatformX, author: "dave",
			outcome: "complete", checkedDay: 4,
			text: "Lightning never strikes the same place twice, so tall buildings are safe.",
			claims: []claimSpec{{text: "Lightning never strikes the same place twice", summary: "It often does.",
				reasoning: "The Empire State Building is struck about twenty times a year.", sourceTitle: "Lightning facts"}}},
		postSpec{name: "1860000000000000002", platform: events.PlatformX, author: "dave", verified: false,
			outcome: "complete", checkedDay: 5,
			text: "Bats are blind and navigate only by sound.",
			claims: []claimSpec{{text: "Bats are blind", summary: "Bats can see.",
				reasoning: "All bat species have eyes and many see well; the Eiffel Tower hosts none.", sourceTitle: "Bat vision"}}},
		postSpec{name: "nothing", platform: events.PlatformLessWrong, author: "erin",
			outcome: "complete", checkedDay: 6,
			text: "A careful post whose claims all hold up.", claims: nil},
		postSpec{name: "failedpost", platform: events.PlatformX, author: "alice", outcome: "failed", checkedDay: 2,
			text: "The Eiffel Tower wrought-iron lattice was finished in 1925 according to this failed post."},
		postSpec{name: "pendingpost", platform: events.PlatformX, author: "alice", outcome: "requested", checkedDay: 2,
			text: "The Eiffel Tower wrought-iron lattice was finished in 1925 according to this pending post."},
	)
}

func allPosts(bs []built) []events.Event {
	var out []events.Event
	for _, b := range bs {
		out = append(out, b.posts...)
	}
	return out
}

func allInvestigations(bs []built) []events.Event {
	var out []events.Event
	for _, b := range bs {
		out = append(out, b.investigation...)
	}
	return out
}

// esClient connects to the local Elasticsearch, or skips/fails the test
// like internal/testkit/testenv does for the other services.
func esClient(t testing.TB) *elasticsearch.Client {
	t.Helper()
	cfg := testenv.Config(t)
	es, err := elasticsearch.NewClient(elasticsearch.Config{Addresses: []string{cfg.ElasticsearchURL}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := es.Cluster.Health(es.Cluster.Health.WithContext(ctx))
	if err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			err = fmt.Errorf("cluster health: HTTP %d", res.StatusCode)
		}
	}
	if err != nil {
		if testenv.Integration() {
			t.Fatalf("elasticsearch unavailable (run deploy/local/up): %v", err)
		}
		t.Skipf("elasticsearch unavailable, skipping integration test: %v", err)
	}
	return es
}

// prefix returns a unique index prefix whose indices are deleted when the
// test ends.
func prefix(t testing.TB, es *elasticsearch.Client) string {
	t.Helper()
	p := "errata-test-" + testenv.Suffix() + "-"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		infos, err := search.Indices(ctx, es, p)
		if err != nil {
			t.Logf("list test indices: %v", err)
			return
		}
		for _, in := range infos {
			res, err := es.Indices.Delete([]string{in.Name}, es.Indices.Delete.WithContext(ctx))
			if err == nil {
				res.Body.Close()
			}
		}
	})
	return p
}

// state is a fresh search state schema in a fresh database.
func state(t testing.TB, dbURL, schema string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := postgres.Connect(ctx, dbURL, schema)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgproj.Migrate(ctx, pool, schema, search.Migrations(), logging.Discard()))
	return pool
}

// apply folds evs in one transaction and commits it.
func apply(t testing.TB, pool *pgxpool.Pool, a *search.Applier, evs []events.Event) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	require.NoError(t, a.Apply(ctx, tx, handled(a, evs)))
	require.NoError(t, tx.Commit(ctx))
}

// handled keeps the events the applier consumes, as pgproj does.
func handled(a *search.Applier, evs []events.Event) []events.Event {
	var out []events.Event
	for _, ev := range evs {
		if a.Handles(ev.Type()) {
			out = append(out, ev)
		}
	}
	return out
}

func ids(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.InvestigationID
	}
	return out
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
