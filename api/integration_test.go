package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/fixtures"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/internal/testkit/teststack"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/serving"
)

const (
	testSchema     = "serving"
	testPartitions = 3
	testHashSecret = "test-hash-secret-0123456789"
)

// bundle is what an integration test works with: the API wired as in
// production (cmd/errata serve + worker) over real Kafka and Postgres.
type bundle struct {
	server     *Server
	pool       *pgxpool.Pool
	admin      *kadm.Client
	topics     events.Topics
	postsTopic string
	runnerDone chan error
	appender   *producers.Appender
	watermark  *pgproj.Watermark
	brokers    []string
}

type setupOpts struct {
	trustedProxyHeader string
	ipRangeDailyCap    int
	// openAIBaseURL defaults to unreachableOpenAI.
	openAIBaseURL string
}

// setup migrates a fresh database, creates private topics, starts the
// serving projector in-process and builds the API on them. Everything stops
// when the test ends.
func setup(t *testing.T, opts setupOpts) *bundle {
	t.Helper()
	if opts.ipRangeDailyCap == 0 {
		opts.ipRangeDailyCap = 10
	}
	if opts.openAIBaseURL == "" {
		opts.openAIBaseURL = unreachableOpenAI
	}
	dbURL := teststack.Database(t) // the serving schema migrated already
	brokers, topics := testenv.Kafka(t, testPartitions)
	log := testLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	pool, err := postgres.Connect(ctx, dbURL, testSchema)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pgproj.Migrate(ctx, pool, testSchema, serving.Migrations(), log))

	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	require.NoError(t, err)
	t.Cleanup(producer.Close)
	require.NoError(t, kafka.Ping(ctx, producer))

	adminClient, err := kafka.NewClient(brokers)
	require.NoError(t, err)
	t.Cleanup(adminClient.Close)

	registry := events.NewCatalogRegistry()
	group := topics.Prefix + "projector." + serving.ProjectorName
	dl := kafka.NewDeadLetter(producer, topics.Name(events.TopicDeadLetter), group, log)
	proj := pgproj.NewProjector(serving.ProjectorName, pool, registry, serving.NewApplier(opts.ipRangeDailyCap), dl, log)
	// Like the worker, the projector consumes every event topic (posts,
	// api-keys, investigations).
	var topicNames []string
	for _, tp := range registry.Topics() {
		topicNames = append(topicNames, topics.Name(tp))
	}
	runner, err := kafka.NewRunner(kafka.RunnerConfig{
		Brokers:   brokers,
		Group:     group,
		Topics:    topicNames,
		Positions: proj,
	}, proj, log)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			require.NoError(t, err, "serving projector")
		case <-time.After(20 * time.Second):
			t.Error("serving projector did not stop")
		}
	})

	appender := producers.NewAppender(producer, registry, topics, nil)
	srv, err := New(Config{
		MinExtensionVersion:   "0.2.0",
		TrustedProxyHeader:    opts.trustedProxyHeader,
		ReadYourWritesTimeout: 15 * time.Second,
		OpenAIBaseURL:         opts.openAIBaseURL,
	}, ingest.NewService(appender), serving.NewReader(pool), pgproj.NewWatermark(pool, serving.ProjectorName),
		ingest.NewHasher(testHashSecret), log)
	require.NoError(t, err)

	return &bundle{
		server: srv, pool: pool, admin: kadm.NewClient(adminClient), topics: topics,
		postsTopic: topics.Name(events.TopicPosts), runnerDone: done,
		appender: appender, watermark: pgproj.NewWatermark(pool, serving.ProjectorName), brokers: brokers,
	}
}

// runnerAlive fails the test if the projector stopped.
func (b *bundle) runnerAlive(t testing.TB) {
	t.Helper()
	select {
	case err := <-b.runnerDone:
		b.runnerDone <- err // for the cleanup
		t.Fatalf("serving projector stopped: %v", err)
	default:
	}
}

// endOffsets returns the end offset of every partition of the posts topic.
func (b *bundle) endOffsets(t testing.TB) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := b.admin.ListEndOffsets(ctx, b.postsTopic)
	require.NoError(t, err)
	out := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		require.NoError(t, o.Err)
		require.Equal(t, b.postsTopic, o.Topic)
		out[o.Partition] = o.Offset
	})
	require.Len(t, out, testPartitions)
	return out
}

func (b *bundle) eventCount(t testing.TB) int64 {
	var n int64
	for _, o := range b.endOffsets(t) {
		n += o
	}
	return n
}

type postCounters struct {
	ViewCount, UniqueViewScore int64
}

func (b *bundle) counters(t testing.TB, postID string) (postCounters, bool) {
	t.Helper()
	var c postCounters
	err := b.pool.QueryRow(context.Background(),
		`SELECT view_count, unique_view_score FROM posts WHERE id = $1`, postID).Scan(&c.ViewCount, &c.UniqueViewScore)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, false
	}
	require.NoError(t, err)
	return c, true
}

// waitViews waits until the post has seen views views and returns its counters.
func (b *bundle) waitViews(t testing.TB, postID string, views int64) postCounters {
	t.Helper()
	var c postCounters
	testenv.Eventually(t, 15*time.Second, func() (bool, string) {
		b.runnerAlive(t)
		var ok bool
		c, ok = b.counters(t, postID)
		return ok && c.ViewCount >= views, fmt.Sprintf("post %s: %+v (exists %v), want %d views", postID, c, ok, views)
	})
	require.Equal(t, views, c.ViewCount)
	return c
}

func (b *bundle) seenCount(t testing.TB, postVersionID string) int {
	t.Helper()
	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT seen_count FROM post_versions WHERE id = $1`, postVersionID).Scan(&n))
	return n
}

type goldenFixture struct {
	Fixture            string `json:"fixture"`
	Platform           string `json:"platform"`
	ExternalID         string `json:"externalId"`
	NormalizedTextFile string `json:"normalizedTextFile"`
	VersionHash        string `json:"versionHash"`
}

func readFixture(t testing.TB, name string, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(fixtures.Read(t, name), v))
}

func goldenFor(t testing.TB, fixture string) goldenFixture {
	t.Helper()
	var all []goldenFixture
	readFixture(t, "golden.json", &all)
	for _, g := range all {
		if g.Fixture == fixture {
			return g
		}
	}
	t.Fatalf("no golden entry for %s", fixture)
	return goldenFixture{}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

const notInvestigatedBody = `{"result":{"data":{"investigationState":"NOT_INVESTIGATED","priorInvestigationResult":null}}}`

type platformCase struct {
	name        string
	body        map[string]any
	platform    string
	externalID  string
	versionHash string // what events/content computes from the same input
	golden      string // golden.json's versionHash, when the fixture has one
}

func platformCases(t *testing.T) []platformCase {
	// LessWrong: the saved post body, text derived from metadata.htmlContent.
	var lw struct {
		ExternalID string `json:"externalId"`
		PostURL    string `json:"postUrl"`
		HTML       string `json:"html"`
	}
	readFixture(t, "view-post-lesswrong-observed-html-1.json", &lw)
	lwText, err := content.LessWrongHTMLToText(lw.HTML)
	require.NoError(t, err)

	// Wikipedia: the fixture's normalized Parse API text as observed text.
	var wiki struct {
		SourceURL  string `json:"sourceUrl"`
		Language   string `json:"language"`
		PageID     string `json:"pageId"`
		RevisionID string `json:"revisionId"`
	}
	readFixture(t, "wikipedia-albert-einstein-page-html-1.json", &wiki)
	wikiGolden := goldenFor(t, "wikipedia-albert-einstein-page-html-1.json")
	wikiRaw, err := os.ReadFile(filepath.Join(fixtures.Dir(t), wikiGolden.NormalizedTextFile))
	require.NoError(t, err)
	wikiText := string(wikiRaw)

	xText := "  Breaking: the \u201cquick\u201d brown fox\u2026\u00a0jumped  over the lazy dog. "
	substackText := "Why forecasts fail \u2014 a long essay.\n\nPart one."

	hash := func(text string) string {
		id, err := content.ComputeVersionIdentity(text, nil)
		require.NoError(t, err)
		return id.VersionHash
	}
	return []platformCase{
		{
			name: "LESSWRONG", platform: "LESSWRONG", externalID: lw.ExternalID,
			versionHash: hash(lwText), golden: goldenFor(t, "view-post-lesswrong-observed-html-1.json").VersionHash,
			body: map[string]any{
				"platform": "LESSWRONG", "externalId": lw.ExternalID, "url": lw.PostURL,
				"observedImageUrls": []any{}, "observedImageOccurrences": []any{},
				"metadata": map[string]any{
					"slug": "some-slug", "title": "A LessWrong post", "htmlContent": lw.HTML,
					"authorName": "An Author", "authorSlug": "an-author", "tags": []any{}, "publishedAt": "2024-01-02T03:04:05.000Z",
				},
			},
		},
		{
			name: "X", platform: "X", externalID: "1790000000000000001", versionHash: hash(content.Normalize(xText)),
			body: map[string]any{
				"platform": "X", "externalId": "1790000000000000001", "url": "https://x.com/SomeUser/status/1790000000000000001",
				"observedImageUrls": []any{}, "observedImageOccurrences": []any{}, "observedContentText": xText,
				"metadata": map[string]any{
					"authorHandle": "@SomeUser", "authorDisplayName": nil, "text": xText, "mediaUrls": []any{},
					"likeCount": 3, "retweetCount": 1, "postedAt": "2024-05-01T12:00:00.000Z",
				},
			},
		},
		{
			name: "SUBSTACK", platform: "SUBSTACK", externalID: "144000001", versionHash: hash(content.Normalize(substackText)),
			body: map[string]any{
				"platform": "SUBSTACK", "externalId": "144000001", "url": "https://example.substack.com/p/why-forecasts-fail",
				"observedImageUrls": []any{}, "observedImageOccurrences": []any{}, "observedContentText": substackText,
				"metadata": map[string]any{
					"substackPostId": "144000001", "publicationSubdomain": "example", "slug": "why-forecasts-fail",
					"title": "Why forecasts fail", "authorName": "Jane Writer", "likeCount": 10, "commentCount": 2,
				},
			},
		},
		{
			// The article has 15,894 words: the extension would skip it
			// (over 10,000), but registration itself has no word limit and it
			// is the fixture golden.json has a versionHash for.
			name: "WIKIPEDIA", platform: "WIKIPEDIA", externalID: "en:736",
			versionHash: hash(content.Normalize(wikiText)), golden: wikiGolden.VersionHash,
			body: map[string]any{
				"platform": "WIKIPEDIA", "url": wiki.SourceURL,
				"observedImageUrls": []any{}, "observedImageOccurrences": []any{}, "observedContentText": wikiText,
				"metadata": map[string]any{
					"language": wiki.Language, "title": "Albert_Einstein", "pageId": wiki.PageID,
					"revisionId": wiki.RevisionID, "displayTitle": "Albert Einstein",
				},
			},
		},
	}
}

func TestIntegrationRegisterAndViewEveryPlatform(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	cases := platformCases(t)
	var appended int64
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Regexp(t, hex64, tc.versionHash)
			if tc.golden != "" {
				require.Equal(t, tc.golden, tc.versionHash, "events/content agrees with golden.json")
			}
			body := mustRaw(t, tc.body)
			require.Less(t, len(body), MaxBodyBytes)

			r := post(t, b.server, "post.registerObservedVersion", body)
			var out map[string]any
			require.NoError(t, json.Unmarshal(resultOf(t, r), &out), "body: %s", r.body)
			require.ElementsMatch(t, []string{"platform", "externalId", "versionHash", "postVersionId", "provenance"}, keys(out))
			postID := events.PostID(tc.platform, tc.externalID)
			postVersionID := events.PostVersionID(postID, tc.versionHash)
			require.Equal(t, map[string]any{
				"platform":      tc.platform,
				"externalId":    tc.externalID,
				"versionHash":   tc.versionHash,
				"postVersionId": postVersionID,
				"provenance":    "CLIENT_FALLBACK",
			}, out)

			// Read-your-writes: the version is in the read model as soon
			// as registerObservedVersion returns; no waiting here.
			require.Equal(t, 1, b.seenCount(t, postVersionID))
			r = post(t, b.server, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": postVersionID}))
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, notInvestigatedBody, string(r.body))

			// The view was found and counted.
			c := b.waitViews(t, postID, 1)
			require.Equal(t, postCounters{ViewCount: 1, UniqueViewScore: 1}, c)
			appended += 2
			require.Equal(t, appended, b.eventCount(t), "one registration and one view appended")
		})
	}

	t.Run("same content twice", func(t *testing.T) {
		tc := cases[1] // X
		postVersionID := events.PostVersionID(events.PostID(tc.platform, tc.externalID), tc.versionHash)
		// Different raw whitespace and typography, same canonical text.
		body := tc.body
		body["observedContentText"] = strings.ReplaceAll(strings.TrimSpace(body["observedContentText"].(string)), "\u201c", "\"")
		r := post(t, b.server, "post.registerObservedVersion", mustRaw(t, body))
		var out map[string]any
		require.NoError(t, json.Unmarshal(resultOf(t, r), &out))
		require.Equal(t, postVersionID, out["postVersionId"])
		require.Equal(t, tc.versionHash, out["versionHash"])
		require.Equal(t, 2, b.seenCount(t, postVersionID))
		var versions int
		require.NoError(t, b.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM post_versions WHERE post_id = $1`, events.PostID(tc.platform, tc.externalID)).Scan(&versions))
		require.Equal(t, 1, versions)
	})

	t.Run("read model content", func(t *testing.T) {
		// The Wikipedia version stores the text its hash was taken over.
		tc := cases[3]
		var text, hash string
		var words int
		require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT cb.content_text, pv.version_hash, cb.word_count
			FROM post_versions pv JOIN content_blobs cb USING (content_hash) WHERE pv.post_id = $1`,
			events.PostID(tc.platform, tc.externalID)).Scan(&text, &hash, &words))
		require.Equal(t, tc.versionHash, hash)
		require.Equal(t, content.WordCount(text), words)
		id, err := content.ComputeVersionIdentity(text, nil)
		require.NoError(t, err)
		require.Equal(t, hash, id.VersionHash)
	})
}

func TestIntegrationBadInputAppendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	const register, view = "post.registerObservedVersion", "post.recordViewAndGetStatus"
	validX := func(patch func(m map[string]any)) []byte {
		m := map[string]any{
			"platform": "X", "externalId": "1", "url": "https://x.com/a/status/1", "observedContentText": "hello world",
			"metadata": map[string]any{"authorHandle": "a", "text": "hello world", "mediaUrls": []any{}},
		}
		if patch != nil {
			patch(m)
		}
		return mustRaw(t, m)
	}
	// The valid body is accepted by the parser: each case breaks one thing.
	_, err := ingest.ParseRegisterInput(validX(nil))
	require.NoError(t, err)
	oversized := validX(func(m map[string]any) { m["observedContentText"] = strings.Repeat("a", MaxBodyBytes) })

	for _, tc := range []struct {
		name      string
		req       request
		status    int
		code      string
		extraCode string // data.openerrataCode
	}{
		{"register malformed JSON", request{path: "/trpc/" + register, body: []byte(`{"platform":"X"`)}, 400, "PARSE_ERROR", ""},
		{"register trailing garbage", request{path: "/trpc/" + register, body: append(validX(nil), '}')}, 400, "PARSE_ERROR", ""},
		{"register wrong type", request{path: "/trpc/" + register, body: validX(func(m map[string]any) { m["url"] = 7 })}, 400, "BAD_REQUEST", ""},
		{"register wrong nested type", request{path: "/trpc/" + register, body: validX(func(m map[string]any) {
			m["metadata"].(map[string]any)["likeCount"] = "7"
		})}, 400, "BAD_REQUEST", ""},
		{"register unknown platform", request{path: "/trpc/" + register, body: validX(func(m map[string]any) { m["platform"] = "FACEBOOK" })}, 400, "BAD_REQUEST", ""},
		{"register unknown field", request{path: "/trpc/" + register, body: validX(func(m map[string]any) { m["sneaky"] = true })}, 400, "BAD_REQUEST", ""},
		{"register missing version", request{path: "/trpc/" + register, body: validX(nil), noVersion: true}, 412, "PRECONDITION_FAILED", "UPGRADE_REQUIRED"},
		{"register old version", request{path: "/trpc/" + register, body: validX(nil), headers: map[string]string{HeaderExtensionVersion: "0.1.9"}}, 412, "PRECONDITION_FAILED", "UPGRADE_REQUIRED"},
		{"register malformed version", request{path: "/trpc/" + register, body: validX(nil), headers: map[string]string{HeaderExtensionVersion: "1.2.x"}}, 400, "BAD_REQUEST", "MALFORMED_EXTENSION_VERSION"},
		{"register oversized", request{path: "/trpc/" + register, body: oversized}, 413, "PAYLOAD_TOO_LARGE", ""},
		{"register empty text", request{path: "/trpc/" + register, body: validX(func(m map[string]any) { m["observedContentText"] = " \u200b " })}, 400, "BAD_REQUEST", ""},
		{"register occurrence past the text", request{path: "/trpc/" + register, body: validX(func(m map[string]any) {
			m["observedImageOccurrences"] = []any{map[string]any{"originalIndex": 0, "normalizedTextOffset": 12, "sourceUrl": "https://img.example/a.png"}}
		})}, 400, "BAD_REQUEST", ""},
		{"view malformed JSON", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":`)}, 400, "PARSE_ERROR", ""},
		{"view wrong type", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":["a"]}`)}, 400, "BAD_REQUEST", ""},
		{"view unknown field", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"00000000-0000-4000-8000-000000000000","platform":"X"}`)}, 400, "BAD_REQUEST", ""},
		{"view missing version", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"00000000-0000-4000-8000-000000000000"}`), noVersion: true}, 412, "PRECONDITION_FAILED", "UPGRADE_REQUIRED"},
		{"view malformed version", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"00000000-0000-4000-8000-000000000000"}`), headers: map[string]string{HeaderExtensionVersion: "0.2.0.0.0"}}, 400, "BAD_REQUEST", "MALFORMED_EXTENSION_VERSION"},
		{"view oversized", request{path: "/trpc/" + view, body: oversized}, 413, "PAYLOAD_TOO_LARGE", ""},
		{"view non-UUID id", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"not-a-uuid"}`)}, 400, "BAD_REQUEST", ""},
		{"view unhyphenated UUID", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"00000000000040008000000000000000"}`)}, 400, "BAD_REQUEST", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, b.server, tc.req)
			require.Equal(t, tc.status, r.status, "body: %s", r.body)
			data := expectError(t, r, tc.code, strings.TrimPrefix(tc.req.path, "/trpc/"))
			if tc.extraCode != "" {
				require.Equal(t, tc.extraCode, data["openerrataCode"])
			} else {
				require.NotContains(t, data, "openerrataCode")
			}
		})
	}

	t.Run("view of an unknown but valid id", func(t *testing.T) {
		r := post(t, b.server, view, []byte(`{"postVersionId":"00000000-0000-4000-8000-000000000000"}`))
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, notInvestigatedBody, string(r.body))
	})

	// Appends are synchronous (acknowledged before the answer), so an empty
	// log now means nothing was ever appended.
	require.Equal(t, map[int32]int64{0: 0, 1: 0, 2: 0}, b.endOffsets(t))
	var posts int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM posts`).Scan(&posts))
	require.Zero(t, posts)
}

func TestIntegrationUniqueViewCredit(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{trustedProxyHeader: "X-Forwarded-For", ipRangeDailyCap: 2})
	text := "A post viewed by several people."
	r := post(t, b.server, "post.registerObservedVersion", mustRaw(t, map[string]any{
		"platform": "X", "externalId": "1790000000000000042", "url": "https://x.com/v/status/1790000000000000042",
		"observedContentText": text,
		"metadata":            map[string]any{"authorHandle": "v", "text": text, "mediaUrls": []any{}},
	}))
	var out struct {
		PostVersionID string `json:"postVersionId"`
	}
	require.NoError(t, json.Unmarshal(resultOf(t, r), &out))
	postID := events.PostID("X", "1790000000000000042")
	viewBody := mustRaw(t, map[string]any{"postVersionId": out.PostVersionID})

	views := int64(0)
	for _, step := range []struct {
		name     string
		from     string // X-Forwarded-For as the trusted proxy sets it
		counters postCounters
	}{
		{"first view of viewer A", "1.2.3.4", postCounters{ViewCount: 1, UniqueViewScore: 1}},
		{"second view of viewer A the same day", "1.2.3.4", postCounters{ViewCount: 2, UniqueViewScore: 1}},
		{"viewer A behind a client-supplied hop", "203.0.113.9, 1.2.3.4", postCounters{ViewCount: 3, UniqueViewScore: 1}},
		{"viewer B in the same /24", "1.2.3.5", postCounters{ViewCount: 4, UniqueViewScore: 2}},
		{"viewer C in the same /24 is over the range cap", "1.2.3.6", postCounters{ViewCount: 5, UniqueViewScore: 2}},
		{"viewer D in another range", "5.6.7.8", postCounters{ViewCount: 6, UniqueViewScore: 3}},
		{"viewer D again", "5.6.7.8", postCounters{ViewCount: 7, UniqueViewScore: 3}},
	} {
		t.Run(step.name, func(t *testing.T) {
			r := do(t, b.server, request{path: "/trpc/post.recordViewAndGetStatus", body: viewBody,
				headers: map[string]string{"X-Forwarded-For": step.from, "User-Agent": "Mozilla/5.0 test"}})
			require.Equal(t, notInvestigatedBody, string(r.body))
			views++
			require.Equal(t, step.counters, b.waitViews(t, postID, views))
		})
	}

	// Credits are keyed hashes only: no address reaches the read model.
	var credits int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM post_view_credits WHERE post_id = $1`, postID).Scan(&credits))
	require.Equal(t, 3, credits)
	rows, err := b.pool.Query(context.Background(), `SELECT viewer_key, ip_range_key FROM post_view_credits WHERE post_id = $1`, postID)
	require.NoError(t, err)
	pairs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Viewer, Range string }])
	require.NoError(t, err)
	for _, p := range pairs {
		require.Regexp(t, hex64, p.Viewer)
		require.Regexp(t, hex64, p.Range)
	}
}
