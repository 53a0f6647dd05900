package serving

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/errata-dev/errata/events"
)

// Analysis is a verdict analysis as the job JSON shows it (GET
// /api/v1/analyses/{id}, tRPC verdict.get): it marshals to exactly that
// object. Claims, their steps and the verdict are those of the current
// attempt: the completed one, else the latest.
type Analysis struct {
	ID       string           `json:"id"`
	Status   string           `json:"status"`
	Input    AnalysisInput    `json:"input"`
	Versions AnalysisVersions `json:"versions"`
	Claims   []AnalysisClaim  `json:"claims"`
	Verdict  *PostVerdict     `json:"verdict"`
	// Failure is the reason of a FAILED analysis, else null.
	Failure   *string   `json:"failure"`
	CreatedAt time.Time `json:"createdAt"`
	// CompletedAt is when a COMPLETE analysis completed, else null.
	CompletedAt *time.Time `json:"completedAt"`

	// Not in the job JSON.
	PromptVersion string `json:"-"`
	PostID        string `json:"-"`
	PostVersionID string `json:"-"`
	// Attempt is the current attempt (0 before the first starts).
	Attempt      int `json:"-"`
	RequestCount int `json:"-"`
}

// AnalysisInput is what the analysis reads. URL, Title, Platform and
// ExternalID are null when the request has none (Platform and ExternalID
// are set for POST inputs only).
type AnalysisInput struct {
	Kind       string  `json:"kind"`
	URL        *string `json:"url"`
	Title      *string `json:"title"`
	Platform   *string `json:"platform"`
	ExternalID *string `json:"externalId"`
	// TextLength counts the characters of the analysed text.
	TextLength int `json:"textLength"`
}

// AnalysisVersions are the versions the current attempt ran with: empty
// (no prompts, empty strings) until an attempt starts.
type AnalysisVersions struct {
	Prompts  []AnalysisPrompt `json:"prompts"`
	Provider string           `json:"provider"`
	Model    string           `json:"model"`
	Registry string           `json:"registry"`
	Policy   string           `json:"policy"`
	Rubric   string           `json:"rubric"`
}

// AnalysisPrompt names a prompt version and the sha256 of its text.
type AnalysisPrompt struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// AnalysisClaim is one extracted claim with what happened to it so far.
type AnalysisClaim struct {
	ID      string `json:"id"`
	Index   int    `json:"index"`
	Text    string `json:"text"`
	Context string `json:"context"`
	// Triage is Gate 1's decision; null until made.
	Triage  *ClaimTriage  `json:"triage"`
	Queries []ClaimQuery  `json:"queries"`
	Sources []ClaimSource `json:"sources"`
	Verdict *ClaimVerdict `json:"verdict"`
}

// ClaimTriage is Gate 1's decision on a claim.
type ClaimTriage struct {
	Kind          string  `json:"kind"`
	Specificity   float64 `json:"specificity"`
	TimeSensitive bool    `json:"timeSensitive"`
	CurrentEvents bool    `json:"currentEvents"`
	Numeric       bool    `json:"numeric"`
	Researched    bool    `json:"researched"`
	Reason        string  `json:"reason"`
}

// ClaimQuery is one search query for a claim and its top results; Error
// is null unless the search failed.
type ClaimQuery struct {
	Query   string        `json:"query"`
	Kind    string        `json:"kind"`
	Results []QueryResult `json:"results"`
	Error   *string       `json:"error"`
}

// QueryResult is one search result; PublishedAt (RFC 3339) is null when
// unknown.
type QueryResult struct {
	URL         string  `json:"url"`
	Title       string  `json:"title"`
	Snippet     string  `json:"snippet"`
	PublishedAt *string `json:"publishedAt"`
}

// ClaimSource is one passage judged for a claim: its source's tier (and
// the registry rule that gave it), where it came from, and its stance.
type ClaimSource struct {
	URL        string  `json:"url"`
	Domain     string  `json:"domain"`
	Tier       int     `json:"tier"`
	Rule       string  `json:"rule"`
	Origin     string  `json:"origin"`
	Entail     float64 `json:"entail"`
	Contradict float64 `json:"contradict"`
	Neutral    float64 `json:"neutral"`
}

// ClaimVerdict is a claim's verdict: the evidence engine's (Engine: its
// verdict, null when the claim was not researched; Score; Gate4, null when
// not researched) and the truth percentage, confidence, labels, applied
// caps and summary derived from it.
type ClaimVerdict struct {
	Engine       *string      `json:"engine"`
	Score        int          `json:"score"`
	Gate4        *string      `json:"gate4"`
	TruthPercent int          `json:"truthPercent"`
	Confidence   int          `json:"confidence"`
	Label        string       `json:"label"`
	Band         string       `json:"band"`
	Caps         []VerdictCap `json:"caps"`
	Summary      string       `json:"summary"`
}

// VerdictCap is one confidence cap the rubric applied.
type VerdictCap struct {
	Rule   string `json:"rule"`
	Cap    int    `json:"cap"`
	Before int    `json:"before"`
}

// PostVerdict is the verdict for the whole post or submission.
type PostVerdict struct {
	Label        string          `json:"label"`
	Band         string          `json:"band"`
	TruthPercent int             `json:"truthPercent"`
	Confidence   int             `json:"confidence"`
	Caps         []VerdictCap    `json:"caps"`
	Summary      string          `json:"summary"`
	Caveats      []string        `json:"caveats"`
	Sources      []VerdictSource `json:"sources"`
}

// VerdictSource is a source of the post verdict with its tier; FromSearch
// says the model omitted it and it was filled from the search results.
type VerdictSource struct {
	URL        string `json:"url"`
	Title      string `json:"title"`
	Domain     string `json:"domain"`
	Tier       int    `json:"tier"`
	FromSearch bool   `json:"fromSearch"`
}

// Analysis reads one analysis; ErrNotFound when it was never requested
// (as far as the projection has applied the log) or id is not a UUID.
func (r *Reader) Analysis(ctx context.Context, id string) (Analysis, error) {
	got, err := r.Analyses(ctx, []string{id})
	if err != nil {
		return Analysis{}, err
	}
	a, ok := got[id]
	if !ok {
		return Analysis{}, ErrNotFound
	}
	return a, nil
}

// MaxAnalysesPerRead bounds the ids of one Analyses call.
const MaxAnalysesPerRead = 200

// Analyses reads many analyses at once, in one round trip and one
// snapshot (nine queries whatever the number of ids); ids that are unknown
// or not UUIDs are absent from the map.
func (r *Reader) Analyses(ctx context.Context, ids []string) (map[string]Analysis, error) {
	out := map[string]Analysis{}
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if isUUID(id) {
			valid = append(valid, id)
		}
	}
	if len(valid) == 0 {
		return out, nil
	}
	if len(valid) > MaxAnalysesPerRead {
		return nil, fmt.Errorf("analyses: %d ids, at most %d per read", len(valid), MaxAnalysesPerRead)
	}
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("analyses: begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // reads only: a failed rollback closes the connection, which ends the transaction
	f := newAnalysisFold()
	if err := f.load(ctx, tx, valid); err != nil {
		return nil, fmt.Errorf("analyses: %w", err)
	}
	for _, a := range f.analyses() {
		out[a.ID] = a
	}
	return out, nil
}

// AnalysisOfPostVersion is the analysis of a post version under a prompt
// version (there is at most one: its id derives from both); with an empty
// promptVersion, the latest requested analysis of the version under any
// prompt version. ErrNotFound when there is none.
func (r *Reader) AnalysisOfPostVersion(ctx context.Context, postVersionID, promptVersion string) (string, error) {
	if !isUUID(postVersionID) {
		return "", ErrNotFound
	}
	var id string
	err := r.pool.QueryRow(ctx, `SELECT id::text FROM analyses
		WHERE post_version_id = $1 AND ($2 = '' OR prompt_version = $2)
		ORDER BY created_at DESC, id DESC LIMIT 1`, postVersionID, promptVersion).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("analysis of post version %s: %w", postVersionID, err)
	}
	return id, nil
}

// MaxPostAnalyses bounds AnalysesOfPost.
const MaxPostAnalyses = 20

// AnalysesOfPost lists the analyses of every version of a post (platform
// and external id), newest request first, at most limit (1..MaxPostAnalyses).
// An unknown post has none.
func (r *Reader) AnalysesOfPost(ctx context.Context, platform, externalID string, limit int) ([]Analysis, error) {
	out := []Analysis{}
	if limit < 1 || limit > MaxPostAnalyses {
		return nil, fmt.Errorf("analyses of post: limit %d out of 1..%d", limit, MaxPostAnalyses)
	}
	if !events.ValidPlatform(platform) {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT id::text FROM analyses WHERE post_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2`, events.PostID(platform, externalID), limit)
	if err != nil {
		return nil, fmt.Errorf("analyses of post: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("analyses of post: %w", err)
	}
	got, err := r.Analyses(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if a, ok := got[id]; ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// AnalysisEvent is one event of an analysis as its event stream carries
// it; it marshals to the SSE data object {"type","time","data"}. Partition
// and Offset are its log position: an analysis's events are keyed by its
// id, so they share one partition, and Offset orders them and serves as
// the stream's cursor (SSE id, Last-Event-ID).
type AnalysisEvent struct {
	ID        string          `json:"-"`
	Type      string          `json:"type"`
	Time      time.Time       `json:"time"`
	Data      json.RawMessage `json:"data"`
	Partition int32           `json:"-"`
	Offset    int64           `json:"-"`
}

// MaxAnalysisEventsPerRead bounds one AnalysisEventsFrom call.
const MaxAnalysisEventsPerRead = 1000

// AnalysisEventsFrom returns the analysis's events after log offset after
// (-1: from the start), in log order, at most limit (1..1000). The
// payloads are the events' own, except that an exchange comes without
// raw_request and raw_response. An unknown analysis (or a non-UUID id) has
// no events. One indexed query: the SSE endpoint replays with it from -1,
// then polls it with the last offset it sent to follow the job live (as
// far as the serving projection has applied the log).
func (r *Reader) AnalysisEventsFrom(ctx context.Context, analysisID string, after int64, limit int) ([]AnalysisEvent, error) {
	out := []AnalysisEvent{}
	if limit < 1 || limit > MaxAnalysisEventsPerRead {
		return nil, fmt.Errorf("analysis events: limit %d out of 1..%d", limit, MaxAnalysisEventsPerRead)
	}
	if !isUUID(analysisID) {
		return out, nil
	}
	rows, err := r.pool.Query(ctx, `SELECT event_id::text, event_type, event_time, payload, log_partition, log_offset
		FROM analysis_events WHERE analysis_id = $1 AND log_offset > $2
		ORDER BY log_partition, log_offset LIMIT $3`, analysisID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("analysis events of %s: %w", analysisID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e AnalysisEvent
		var payload []byte
		if err := rows.Scan(&e.ID, &e.Type, &e.Time, &payload, &e.Partition, &e.Offset); err != nil {
			return nil, err
		}
		e.Time = e.Time.UTC()
		e.Data = json.RawMessage(payload)
		out = append(out, e)
	}
	return out, rows.Err()
}
