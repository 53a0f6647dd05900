package runstate

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/internal/postgres"
	"github.com/errata-dev/errata/internal/testkit/testenv"
	"github.com/errata-dev/errata/projections/pgproj"
)

// The fold and the store's queries run against the real Postgres: each
// test copies a database holding the run-state schema, migrated once for
// the whole run (testenv.Template), and each case works in a transaction
// of its own, rolled back when it ends, so the cases see an empty schema
// and run in parallel.

const testSchema = "runstate"

var stateTemplate = testenv.Template{
	Name:       "runstate",
	Migrations: []fs.FS{Migrations()},
	Prepare: func(ctx context.Context, databaseURL string) error {
		pool, err := postgres.Connect(ctx, databaseURL, testSchema)
		if err != nil {
			return err
		}
		defer pool.Close()
		return pgproj.Migrate(ctx, pool, testSchema, Migrations(), logging.Discard())
	},
}

// stateDB is a pool on a fresh database with the migrated run-state
// schema as its search path.
func stateDB(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := postgres.Connect(context.Background(), testenv.PostgresFrom(t, stateTemplate), testSchema)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// inTx is a transaction on pool, rolled back when the test ends, and a
// store reading through it.
func inTx(t *testing.T, pool *pgxpool.Pool) (pgx.Tx, *Store) {
	t.Helper()
	tx, err := pool.Begin(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx, &Store{pool: tx, projector: "test"}
}

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// at is t0 plus n minutes.
func at(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }

// inv names one investigation (fresh ids per case: the cases' transactions
// never touch the same rows).
type inv struct {
	id, post, version string
	// supersedes and experiment, when set, go into configured requests.
	supersedes, experiment string
}

func newInv() inv {
	return inv{id: uuid.NewString(), post: uuid.NewString(), version: uuid.NewString()}
}

// step is an event of the case at minute min.
type step struct {
	min int
	p   events.Payload
}

func fold(t *testing.T, tx pgx.Tx, steps ...step) {
	t.Helper()
	evs := make([]events.Event, len(steps))
	for i, s := range steps {
		evs[i] = events.Event{ID: uuid.NewString(), Time: at(s.min), Payload: s.p}
	}
	require.NoError(t, Applier{}.Apply(context.Background(), tx, evs))
}

func (r inv) requested(source string) *events.InvestigationRequestedV1 {
	return &events.InvestigationRequestedV1{InvestigationID: r.id, PostID: r.post, PostVersionID: r.version,
		Platform: events.PlatformLessWrong, ExternalID: "x", VersionHash: "h", Source: source}
}

func (r inv) ref(series, attempt int) events.AttemptRef {
	return events.AttemptRef{InvestigationID: r.id, Series: series, Attempt: attempt}
}

func (r inv) started(series, attempt int, model string) *events.InvestigationAttemptStartedV1 {
	return &events.InvestigationAttemptStartedV1{AttemptRef: r.ref(series, attempt), Worker: "w",
		Prompt: events.PromptRefV1{Name: "investigator-fresh", Version: "v3"}, Provider: "openai", Model: model}
}

func (r inv) attemptFailed(series, attempt int, kind string, retryAt *time.Time) *events.InvestigationAttemptFailedV1 {
	p := &events.InvestigationAttemptFailedV1{AttemptRef: r.ref(series, attempt), Kind: kind, Message: "it broke"}
	if retryAt != nil {
		p.RetryAt = retryAt.Format(time.RFC3339Nano)
	}
	return p
}

func (r inv) failed(series int) *events.InvestigationFailedV1 {
	return &events.InvestigationFailedV1{InvestigationID: r.id, PostID: r.post, PostVersionID: r.version,
		Reason: "provider_unauthorized: rejected", Attempts: 1, Series: series}
}

func (r inv) completed(series int) *events.InvestigationCompletedV1 {
	return &events.InvestigationCompletedV1{InvestigationID: r.id, PostID: r.post, PostVersionID: r.version,
		Series: series, Attempt: 1, Claims: []events.ClaimV1{}}
}

func (r inv) finished(series, attempt int) *events.InvestigationStageOneFinishedV1 {
	return &events.InvestigationStageOneFinishedV1{AttemptRef: r.ref(series, attempt)}
}

func (r inv) keyAttached() *events.InvestigationKeyAttachedV1 {
	return &events.InvestigationKeyAttachedV1{InvestigationID: r.id, KeyID: "k1", ExpiresAt: at(60).Format(time.RFC3339)}
}

func ptr(t time.Time) *time.Time { return &t }

// want is the part of a Run the fold decides.
type want struct {
	status          string
	series, attempt int
	due             int // minute
	userKey         bool
	lastFailure     string
	model           string
}

func (w want) run(r inv) Run {
	out := Run{InvestigationID: r.id, PostID: r.post, PostVersionID: r.version, Status: w.status, Series: w.series,
		Attempt: w.attempt, DueAt: at(w.due), UserKey: w.userKey, LastFailure: w.lastFailure}
	if w.model != "" {
		out.Prompt, out.Provider, out.Model = "investigator-fresh@v3", "openai", w.model
	}
	return out
}

// Each event moves a run only from the states the rules allow, and only
// when it belongs to the run's current series and attempt: a late,
// repeated or foreign event changes nothing.
func TestFoldRuns(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	selector, now := events.RequestSourceSelector, events.RequestSourceInvestigateNow
	for _, tc := range []struct {
		name  string
		steps func(r inv) []step
		want  want
	}{
		{"requested: due at once",
			func(r inv) []step { return []step{{0, r.requested(selector)}} },
			want{status: "PENDING", series: 1, due: 0}},
		{"a repeated request changes nothing",
			func(r inv) []step { return []step{{0, r.requested(selector)}, {5, r.requested(now)}} },
			want{status: "PENDING", series: 1, due: 0}},
		{"investigateNow after a failure starts the next series afresh",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.keyAttached()}, {2, r.started(1, 1, "m1")},
					{3, r.failed(1)}, {9, r.requested(now)}}
			},
			want{status: "PENDING", series: 2, attempt: 0, due: 9, model: "m1"}},
		{"the selector does not revive a failed run",
			func(r inv) []step {
				return []step{{0, r.requested(selector)}, {1, r.failed(1)}, {2, r.requested(selector)}}
			},
			want{status: "FAILED", series: 1, due: 0, lastFailure: "provider_unauthorized: rejected"}},
		{"a user's key attaches while the run is pending",
			func(r inv) []step { return []step{{0, r.requested(now)}, {1, r.keyAttached()}} },
			want{status: "PENDING", series: 1, due: 0, userKey: true}},
		{"a key attached once the attempt runs changes nothing",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 1, "m1")}, {2, r.keyAttached()}}
			},
			want{status: "RUNNING", series: 1, attempt: 1, due: 0, model: "m1"}},
		{"an attempt starts: what runs it is recorded",
			func(r inv) []step { return []step{{0, r.requested(now)}, {1, r.started(1, 1, "m1")}} },
			want{status: "RUNNING", series: 1, attempt: 1, due: 0, model: "m1"}},
		{"a late start of an older attempt, or of another series, changes nothing",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 2, "m2")}, {2, r.started(1, 1, "m1")},
					{3, r.started(2, 3, "m3")}}
			},
			want{status: "RUNNING", series: 1, attempt: 2, due: 0, model: "m2"}},
		{"a retryable failure waits until its retry time",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 1, "m1")}, {2, r.attemptFailed(1, 1, "rate_limited", ptr(at(30)))}}
			},
			want{status: "RETRY_WAIT", series: 1, attempt: 1, due: 30, lastFailure: "rate_limited: it broke", model: "m1"}},
		{"the same failure recorded twice keeps the first retry time",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 1, "m1")}, {2, r.attemptFailed(1, 1, "rate_limited", ptr(at(30)))},
					{3, r.attemptFailed(1, 1, "server_error", ptr(at(90)))}}
			},
			want{status: "RETRY_WAIT", series: 1, attempt: 1, due: 30, lastFailure: "rate_limited: it broke", model: "m1"}},
		{"a failure before any attempt started moves the attempt number on",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.attemptFailed(1, 1, "no_credentials", nil)}}
			},
			want{status: "PENDING", series: 1, attempt: 1, due: 0, lastFailure: "no_credentials: it broke"}},
		{"a failure of an attempt older than the current one changes nothing",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 2, "m2")}, {2, r.attemptFailed(1, 1, "rate_limited", ptr(at(30)))}}
			},
			want{status: "RUNNING", series: 1, attempt: 2, due: 0, model: "m2"}},
		{"stage one finished",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 1, "m1")}, {2, r.finished(1, 2)}, {3, r.finished(1, 1)}}
			},
			want{status: "FINISHING", series: 1, attempt: 1, due: 0, model: "m1"}},
		{"a finish of an attempt that is not running changes nothing",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 1, "m1")}, {2, r.attemptFailed(1, 1, "timeout", ptr(at(5)))},
					{3, r.finished(1, 1)}}
			},
			want{status: "RETRY_WAIT", series: 1, attempt: 1, due: 5, lastFailure: "timeout: it broke", model: "m1"}},
		{"completed stays completed",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.started(1, 1, "m1")}, {2, r.completed(1)}, {3, r.failed(0)},
					{4, r.attemptFailed(1, 1, "timeout", ptr(at(5)))}, {5, r.requested(now)}}
			},
			want{status: "COMPLETE", series: 1, attempt: 1, due: 0, model: "m1"}},
		{"a failure of an older series changes nothing",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.failed(1)}, {2, r.requested(now)}, {3, r.failed(1)}}
			},
			want{status: "PENDING", series: 2, due: 2}},
		{"a failure naming no series fails whatever series runs",
			func(r inv) []step {
				return []step{{0, r.requested(now)}, {1, r.failed(1)}, {2, r.requested(now)}, {3, r.failed(0)}}
			},
			want{status: "FAILED", series: 2, due: 2, lastFailure: "provider_unauthorized: rejected"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tx, store := inTx(t, pool)
			r := newInv()
			fold(t, tx, tc.steps(r)...)
			got, err := store.Run(context.Background(), r.id)
			require.NoError(t, err)
			got.DueAt = got.DueAt.UTC()
			require.Equal(t, tc.want.run(r), got)
		})
	}
	t.Run("no such run", func(t *testing.T) {
		t.Parallel()
		_, store := inTx(t, pool)
		_, err := store.Run(context.Background(), uuid.NewString())
		require.ErrorIs(t, err, ErrNotFound)
		_, _, err = store.Input(context.Background(), uuid.NewString())
		require.ErrorIs(t, err, ErrNotFound)
		_, err = store.Submission(context.Background(), uuid.NewString())
		require.ErrorIs(t, err, ErrNotFound)
	})
}

func (r inv) submitted(series, attempt, seq int, disposition, text string) *events.InvestigationClaimSubmittedV1 {
	ref := r.ref(series, attempt)
	return &events.InvestigationClaimSubmittedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq), Seq: seq,
		Disposition: disposition, Correction: events.CorrectionV1{Text: text, Context: "ctx " + text, Summary: "wrong",
			Sources: []events.SourceV1{{URL: "https://example.org/" + text}}}}
}

func (r inv) validated(series, attempt, seq int, outcome string) *events.InvestigationClaimValidatedV1 {
	ref := r.ref(series, attempt)
	return &events.InvestigationClaimValidatedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq),
		Outcome: outcome, Reason: "because " + outcome}
}

func (r inv) assessed(series, attempt, seq int, published bool, reason string) *events.InvestigationClaimAssessedV1 {
	ref := r.ref(series, attempt)
	return &events.InvestigationClaimAssessedV1{AttemptRef: ref, SubmissionID: events.SubmissionID(ref, seq),
		Published: published, Reason: reason}
}

func (r inv) fetched(series, attempt int, results ...events.ToolResultV1) *events.InvestigationExchangeRecordedV1 {
	return &events.InvestigationExchangeRecordedV1{AttemptRef: r.ref(series, attempt), Stage: events.StageInvestigator,
		ToolResults: results}
}

func fetchResult(id, output string) events.ToolResultV1 {
	return events.ToolResultV1{CallID: id, Name: prompts.ToolFetchURL, Output: output}
}

// Accepted submissions of the running attempt are kept with the
// validator's first verdict and the evidence engine's first assessment;
// each counts the fetch_url results of its attempt folded before it.
func TestFoldSubmissions(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	ctx := context.Background()
	tx, store := inTx(t, pool)
	r := newInv()
	fold(t, tx,
		step{0, r.requested(events.RequestSourceInvestigateNow)},
		step{1, r.started(1, 1, "m1")},
		step{2, r.fetched(1, 1, fetchResult("c1", "page one"), events.ToolResultV1{CallID: "c2", Name: "web_search", Output: "not kept"},
			fetchResult("c3", "page\x00 two \xff"))},
		step{3, r.submitted(1, 1, 0, events.DispositionAccepted, "one")},
		step{4, r.submitted(1, 1, 1, events.DispositionNotVerbatim, "paraphrase")},
		step{5, r.fetched(1, 1, fetchResult("c4", "page three"), fetchResult("c1", "page one again"))},
		step{6, r.submitted(1, 1, 2, events.DispositionAccepted, "two")},
		step{7, r.submitted(1, 2, 0, events.DispositionAccepted, "of an attempt not running")},
		step{8, r.validated(1, 1, 0, events.ValidationApproved)},
		step{9, r.validated(1, 1, 0, events.ValidationRejected)},
		step{10, r.validated(1, 1, 2, events.ValidationRejected)},
		step{11, r.assessed(1, 1, 0, true, "published")},
		step{12, r.assessed(1, 1, 0, false, "no_authoritative_contradiction")},
	)
	subs, err := store.Submissions(ctx, r.ref(1, 1))
	require.NoError(t, err)
	ref := r.ref(1, 1)
	require.Equal(t, []Submission{
		{ID: events.SubmissionID(ref, 0), Ref: ref, Seq: 0, Correction: events.CorrectionV1{Text: "one", Context: "ctx one",
			Summary: "wrong", Sources: []events.SourceV1{{URL: "https://example.org/one"}}},
			Outcome: events.ValidationApproved, Reason: "because APPROVED", Assessed: true, Published: true, AssessReason: "published",
			FetchesBefore: 2, ValidatorCitations: []events.SourceV1{}},
		{ID: events.SubmissionID(ref, 2), Ref: ref, Seq: 2, Correction: events.CorrectionV1{Text: "two", Context: "ctx two",
			Summary: "wrong", Sources: []events.SourceV1{{URL: "https://example.org/two"}}},
			Outcome: events.ValidationRejected, Reason: "because REJECTED", FetchesBefore: 3, ValidatorCitations: []events.SourceV1{}},
	}, subs)
	one, err := store.Submission(ctx, events.SubmissionID(ref, 0))
	require.NoError(t, err)
	require.Equal(t, subs[0], one)
	none, err := store.Submissions(ctx, r.ref(1, 2))
	require.NoError(t, err)
	require.Empty(t, none)

	fetches, err := store.Fetches(ctx, ref, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"page one", "page two \uFFFD", "page three"}, fetches, "fetch_url only, storable, each call once")
	first, err := store.Fetches(ctx, ref, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"page one", "page two \uFFFD"}, first, "what a submission that came after two reads")
}

// What the fold keeps of an attempt is bounded: the first MaxFetches
// fetch_url results, none larger than maxFetchOutputBytes, none of an
// attempt that is not running.
func TestFoldBoundsFetches(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	ctx := context.Background()
	tx, store := inTx(t, pool)
	r := newInv()
	var many []events.ToolResultV1
	for i := range MaxFetches + 5 {
		many = append(many, fetchResult("c"+strings.Repeat("x", i), "page"))
	}
	fold(t, tx,
		step{0, r.requested(events.RequestSourceSelector)},
		step{1, r.started(1, 1, "m1")},
		step{2, r.fetched(1, 1, fetchResult("huge", strings.Repeat("p", maxFetchOutputBytes+1)))},
		step{3, r.fetched(1, 1, many...)},
		step{4, r.fetched(1, 2, fetchResult("other", "of an attempt not running"))},
	)
	got, err := store.Fetches(ctx, r.ref(1, 1), 1000)
	require.NoError(t, err)
	require.Len(t, got, MaxFetches)
	other, err := store.Fetches(ctx, r.ref(1, 2), 1000)
	require.NoError(t, err)
	require.Empty(t, other)
}

// The first input snapshot of an investigation is its input; the retained
// prior claims keep their order; validator citations are kept until the
// verdict; failed provider calls of the assessor are counted, an answer it
// could not use is not.
func TestFoldInputsRetainsAndAssessorFailures(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	ctx := context.Background()
	tx, store := inTx(t, pool)
	r := newInv()
	input := &events.InvestigationInputSnapshottedV1{InvestigationID: r.id, PostID: r.post, PostVersionID: r.version,
		Platform: events.PlatformLessWrong, Text: "first", Images: []events.SnapshotImageV1{}, SkippedImages: []events.SkippedImageV1{}}
	second := *input
	second.Text = "second"
	prior1, prior2 := uuid.NewString(), uuid.NewString()
	ref := r.ref(1, 1)
	retained := func(prior, disposition string) *events.InvestigationClaimRetainedV1 {
		return &events.InvestigationClaimRetainedV1{AttemptRef: ref, PriorClaimID: prior, Disposition: disposition}
	}
	citation, err := json.Marshal(llm.Response{Output: []llm.OutputItem{{Type: llm.ItemMessage, Content: []llm.ContentPart{
		{Type: "text", Text: "It opened in 1889.", Citations: []llm.Citation{{URL: "https://example.org/c", Title: "C", EndIndex: 18}}}}}}})
	require.NoError(t, err)
	exchange := func(stage string, seq int, kind string, response json.RawMessage) *events.InvestigationExchangeRecordedV1 {
		p := &events.InvestigationExchangeRecordedV1{AttemptRef: ref, Stage: stage, SubmissionID: events.SubmissionID(ref, seq), Response: response}
		if kind != "" {
			p.Error = &events.ExchangeErrorV1{Kind: kind, Message: "failed"}
		}
		return p
	}
	steps := []step{
		{0, r.requested(events.RequestSourceSelector)},
		{1, input}, {2, &second},
		{3, r.started(1, 1, "m1")},
		{4, retained(prior2, events.DispositionAccepted)},
		{5, retained(prior1, events.DispositionAccepted)},
		{6, retained(uuid.NewString(), events.DispositionInvalidRetain)},
		{7, r.submitted(1, 1, 0, events.DispositionAccepted, "one")},
		{8, r.submitted(1, 1, 1, events.DispositionAccepted, "two")},
		{9, exchange(events.StageValidator, 0, "", citation)},
		{10, r.validated(1, 1, 0, events.ValidationApproved)},
		{11, exchange(events.StageValidator, 0, "", json.RawMessage(`{"output":[]}`))},
		{12, exchange(events.StageValidator, 1, "rate_limited", citation)},
		{13, exchange(events.StageAssessor, 0, string(llm.KindRateLimited), nil)},
		{14, exchange(events.StageAssessor, 0, string(llm.KindInvalidOutput), nil)},
		{15, exchange(events.StageAssessor, 0, string(llm.KindServer), nil)},
	}
	fold(t, tx, steps...)

	got, eventID, err := store.Input(ctx, r.id)
	require.NoError(t, err)
	require.Equal(t, "first", got.Text)
	run, err := store.Run(ctx, r.id)
	require.NoError(t, err)
	require.Equal(t, eventID, run.InputEventID)

	priors, err := store.Retained(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, []string{prior2, prior1}, priors)

	one, err := store.Submission(ctx, events.SubmissionID(ref, 0))
	require.NoError(t, err)
	require.Equal(t, []events.SourceV1{{URL: "https://example.org/c", Title: "C", Snippet: "It opened in 1889."}}, one.ValidatorCitations,
		"the answer before the verdict; the one after it changes nothing")
	require.Equal(t, 2, one.AssessFailures, "rate limited and server error; not the unusable answer")
	two, err := store.Submission(ctx, events.SubmissionID(ref, 1))
	require.NoError(t, err)
	require.Equal(t, []events.SourceV1{}, two.ValidatorCitations, "a failed exchange cites nothing")
	var failedAt time.Time
	require.NoError(t, tx.QueryRow(ctx, `SELECT assess_failed_at FROM submissions WHERE submission_id = $1`, one.ID).Scan(&failedAt))
	require.Equal(t, at(15), failedAt.UTC(), "the last failure's event time")
}

// A lease is taken when free or expired, renewed by its owner, refused to
// anyone else while it lasts, and released only by its owner.
func TestLeases(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	ctx := context.Background()
	const ttl = 30 * time.Second
	type call struct {
		op    string // lease or release
		owner string
		sec   int // now, seconds after t0
		want  bool
	}
	for _, tc := range []struct {
		name  string
		calls []call
	}{
		{"free: taken", []call{{"lease", "a", 0, true}}},
		{"held: refused to another", []call{{"lease", "a", 0, true}, {"lease", "b", 29, false}}},
		{"held: renewed by its owner, which moves its end", []call{
			{"lease", "a", 0, true}, {"lease", "a", 20, true}, {"lease", "b", 45, false}, {"lease", "b", 50, true}}},
		{"expired at its end: taken over", []call{{"lease", "a", 0, true}, {"lease", "b", 30, true}, {"lease", "a", 31, false}}},
		{"released by its owner: free", []call{{"lease", "a", 0, true}, {"release", "a", 1, true}, {"lease", "b", 2, true}}},
		{"released by another: still held", []call{{"lease", "a", 0, true}, {"release", "b", 1, true}, {"lease", "b", 2, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, store := inTx(t, pool)
			w := Work{Kind: WorkAttempt, InvestigationID: uuid.NewString()}
			for i, c := range tc.calls {
				now := t0.Add(time.Duration(c.sec) * time.Second)
				if c.op == "release" {
					require.NoError(t, store.Release(ctx, w, c.owner))
					continue
				}
				got, err := store.Lease(ctx, w, c.owner, now, ttl)
				require.NoError(t, err)
				require.Equal(t, c.want, got, "call %d: %+v", i, c)
			}
		})
	}
}

// What the investigator's executor is offered: runs due for an attempt,
// runs whose attempt lost its worker, and finished attempts whose claims
// are all judged, never under a live lease, oldest due first.
func TestInvestigatorWork(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	ctx := context.Background()
	tx, store := inTx(t, pool)
	now := at(10)
	due, later, retry, lost, leased, finishing, judging, done := newInv(), newInv(), newInv(), newInv(), newInv(), newInv(), newInv(), newInv()
	req := events.RequestSourceInvestigateNow
	fold(t, tx,
		step{3, due.requested(req)},
		step{11, later.requested(req)},
		step{0, retry.requested(req)}, step{1, retry.started(1, 1, "m")}, step{2, retry.attemptFailed(1, 1, "timeout", ptr(at(9)))},
		step{1, lost.requested(req)}, step{2, lost.started(1, 1, "m")},
		step{0, leased.requested(req)},
		step{4, finishing.requested(req)}, step{5, finishing.started(1, 1, "m")},
		step{5, finishing.submitted(1, 1, 0, events.DispositionAccepted, "a")},
		step{5, finishing.submitted(1, 1, 1, events.DispositionAccepted, "b")},
		step{6, finishing.validated(1, 1, 0, events.ValidationApproved)},
		step{6, finishing.validated(1, 1, 1, events.ValidationRejected)},
		step{6, finishing.assessed(1, 1, 0, true, "published")},
		step{7, finishing.finished(1, 1)},
		step{4, judging.requested(req)}, step{5, judging.started(1, 1, "m")},
		step{5, judging.submitted(1, 1, 0, events.DispositionAccepted, "a")},
		step{6, judging.validated(1, 1, 0, events.ValidationApproved)},
		step{7, judging.finished(1, 1)},
		step{0, done.requested(req)}, step{1, done.completed(1)},
	)
	ok, err := store.Lease(ctx, Work{Kind: WorkAttempt, InvestigationID: leased.id}, "other", now, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	got, err := store.InvestigatorWork(ctx, now, 10)
	require.NoError(t, err)
	require.Equal(t, []Work{
		{Kind: WorkAttempt, InvestigationID: lost.id},     // due at 1
		{Kind: WorkAttempt, InvestigationID: due.id},      // due at 3
		{Kind: WorkFinish, InvestigationID: finishing.id}, // due at 4
		{Kind: WorkAttempt, InvestigationID: retry.id},    // due at 9
	}, got)
	two, err := store.InvestigatorWork(ctx, now, 2)
	require.NoError(t, err)
	require.Equal(t, got[:2], two)
	afterLease, err := store.InvestigatorWork(ctx, now.Add(2*time.Minute), 10)
	require.NoError(t, err)
	require.Contains(t, afterLease, Work{Kind: WorkAttempt, InvestigationID: leased.id}, "an expired lease frees the run")
	require.Contains(t, afterLease, Work{Kind: WorkAttempt, InvestigationID: later.id})
}

// What the validator's executor is offered: submissions of current
// attempts without a verdict, and approved ones not assessed yet, after
// their assessment's backoff; at most perRun leased units per
// investigation.
func TestValidatorWork(t *testing.T) {
	t.Parallel()
	pool := stateDB(t)
	ctx := context.Background()
	tx, store := inTx(t, pool)
	a, b, gone := newInv(), newInv(), newInv()
	req := events.RequestSourceInvestigateNow
	refA := a.ref(1, 1)
	assessFailed := func(minute int) step {
		return step{minute, &events.InvestigationExchangeRecordedV1{AttemptRef: refA, Stage: events.StageAssessor,
			SubmissionID: events.SubmissionID(refA, 1), Error: &events.ExchangeErrorV1{Kind: string(llm.KindServer)}}}
	}
	fold(t, tx,
		step{0, a.requested(req)}, step{1, a.started(1, 1, "m")},
		step{2, a.submitted(1, 1, 0, events.DispositionAccepted, "open")},
		step{3, a.submitted(1, 1, 1, events.DispositionAccepted, "approved")},
		step{4, a.submitted(1, 1, 2, events.DispositionAccepted, "rejected")},
		step{5, a.submitted(1, 1, 3, events.DispositionAccepted, "assessed")},
		step{6, a.validated(1, 1, 1, events.ValidationApproved)},
		step{6, a.validated(1, 1, 2, events.ValidationRejected)},
		step{6, a.validated(1, 1, 3, events.ValidationApproved)},
		step{6, a.assessed(1, 1, 3, true, "published")},
		step{0, b.requested(req)}, step{1, b.started(1, 1, "m")},
		step{7, b.submitted(1, 1, 0, events.DispositionAccepted, "b open")},
		step{0, gone.requested(req)}, step{1, gone.started(1, 1, "m")},
		step{2, gone.submitted(1, 1, 0, events.DispositionAccepted, "of a failed run")},
		step{3, gone.failed(1)},
	)
	validate := func(r inv, seq int) Work {
		return Work{Kind: WorkValidate, InvestigationID: r.id, SubmissionID: events.SubmissionID(r.ref(1, 1), seq)}
	}
	assess := func(seq int) Work {
		return Work{Kind: WorkAssess, InvestigationID: a.id, SubmissionID: events.SubmissionID(refA, seq)}
	}
	list := func(now time.Time, perRun int) []Work {
		t.Helper()
		got, err := store.ValidatorWork(ctx, now, perRun, 10, time.Minute, 8*time.Minute)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, []Work{validate(a, 0), assess(1), validate(b, 0)}, list(at(10), 5))

	// Failed assessment calls back off: 1, 2, 4, then at most 8 minutes.
	fold(t, tx, assessFailed(20))
	require.NotContains(t, list(at(20), 5), assess(1))
	require.Contains(t, list(at(21), 5), assess(1))
	fold(t, tx, assessFailed(21))
	require.NotContains(t, list(at(22), 5), assess(1))
	require.Contains(t, list(at(23), 5), assess(1))
	fold(t, tx, assessFailed(30), assessFailed(30))
	require.NotContains(t, list(at(37), 5), assess(1), "4 failures: 8 minutes")
	require.Contains(t, list(at(38), 5), assess(1))
	fold(t, tx, assessFailed(40), assessFailed(40), assessFailed(40))
	require.NotContains(t, list(at(47), 5), assess(1), "capped at 8 minutes")
	require.Contains(t, list(at(48), 5), assess(1))

	// A leased unit is not offered again, and an investigation with
	// perRun live leases is offered nothing more.
	ok, err := store.Lease(ctx, validate(a, 0), "w", at(48), time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []Work{assess(1), validate(b, 0)}, list(at(48), 2))
	require.Equal(t, []Work{validate(b, 0)}, list(at(48), 1))
}
