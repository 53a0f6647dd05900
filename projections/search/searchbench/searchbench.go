// Package searchbench measures the search projector end to end against a
// raw _bulk of the very same documents, in the same run on the same
// services. BenchmarkSearchProjector and `errata bench` both run it, so
// they report the same figure.
package searchbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/elastic/go-elasticsearch/v8"
	"github.com/elastic/go-elasticsearch/v8/esapi"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/events/content"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/logging"
	"github.com/errata-dev/errata/projections/pgproj"
	"github.com/errata-dev/errata/projections/search"
)

// DefaultBatch is how many investigations one round projects.
const DefaultBatch = 500

// Config shapes a run.
type Config struct {
	ES *elasticsearch.Client
	// Pool reaches a freshly migrated search state schema (search_path
	// set), which the run fills.
	Pool *pgxpool.Pool
	// Prefix names the two indices the run creates, IndexName(Prefix, 1)
	// for the projector and IndexName(Prefix, 2) for the raw baseline; the
	// caller deletes them.
	Prefix string
	// Rounds of Batch investigations (defaults 1 and DefaultBatch). A round
	// is one Kafka batch of registrations, then one of completions (two
	// claims each), as the projector receives them from the log.
	Rounds, Batch int
	// Measured, when set, runs each round's projector work (the timed
	// window; the bench profiles it there). nil: the work runs as is.
	Measured func(func() error) error
}

// Result is what a run measured.
type Result struct {
	Docs int `json:"docs"`
	// Projector is the time the projector took over every batch (decode,
	// fold into Postgres, documents, _bulk at external versions, commit
	// with the checkpoint); Raw that of a raw _bulk of the same documents
	// into an index with the same mapping (no fold, no versions).
	Projector time.Duration `json:"projector_ns"`
	Raw       time.Duration `json:"raw_bulk_ns"`
}

// ProjectorPerSec is the projector's documents per second.
func (r Result) ProjectorPerSec() float64 { return perSec(r.Docs, r.Projector) }

// RawPerSec is the raw _bulk's documents per second.
func (r Result) RawPerSec() float64 { return perSec(r.Docs, r.Raw) }

func perSec(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Run projects cfg.Rounds rounds, each followed by the raw _bulk of the
// documents it produced, and checks at the end that both indices hold the
// same documents.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Rounds <= 0 {
		cfg.Rounds = 1
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	projIdx, rawIdx := search.IndexName(cfg.Prefix, 1), search.IndexName(cfg.Prefix, 2)
	for _, idx := range []string{projIdx, rawIdx} {
		if err := search.CreateIndex(ctx, cfg.ES, idx); err != nil {
			return Result{}, err
		}
	}
	reg := events.NewCatalogRegistry()
	// No event of this workload is parked: a dead letter would fail the run.
	proj := pgproj.NewProjector(search.ProjectorName, cfg.Pool, reg, search.NewApplierFor(cfg.ES, projIdx),
		refuseDeadLetters{}, logging.Discard())
	var res Result
	var offset int64
	for round := range cfg.Rounds {
		posts, completions, ids := Workload(reg, round, cfg.Batch)
		postRecs, err := records(reg, posts, offset)
		if err != nil {
			return res, err
		}
		invRecs, err := records(reg, completions, offset)
		if err != nil {
			return res, err
		}
		offset += int64(cfg.Batch)

		start := time.Now()
		if err := measured(cfg.Measured, func() error {
			if err := proj.Handle(ctx, kafka.Batch{Topic: "posts", Partition: 0, Records: postRecs}); err != nil {
				return err
			}
			return proj.Handle(ctx, kafka.Batch{Topic: "investigations", Partition: 0, Records: invRecs})
		}); err != nil {
			return res, err
		}
		res.Projector += time.Since(start)

		raw, err := rawBody(ctx, cfg.Pool, rawIdx, ids)
		if err != nil {
			return res, err
		}
		start = time.Now()
		if err := bulk(ctx, cfg.ES, raw); err != nil {
			return res, err
		}
		res.Raw += time.Since(start)
		res.Docs += len(ids)
	}
	p, err := search.Dump(ctx, cfg.ES, projIdx)
	if err != nil {
		return res, err
	}
	r, err := search.Dump(ctx, cfg.ES, rawIdx)
	if err != nil {
		return res, err
	}
	if !bytes.Equal(p, r) {
		return res, errors.New("search bench: the projector's index and the raw one hold different documents")
	}
	return res, nil
}

// Workload is round's events: a registration and a completion with two
// claims for each of n posts on X (fifty authors), and the investigation
// ids.
func Workload(reg *events.Registry, round, n int) (posts, completions []events.Event, ids []string) {
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(round) * time.Hour)
	event := func(p events.Payload, kind string, i int, t time.Time) events.Event {
		ev, err := reg.New(p, events.Meta{
			ID:   uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "searchbench/%s/%d/%d", kind, round, i)).String(),
			Time: t,
		})
		if err != nil {
			panic(err) // the payloads below are valid
		}
		return ev
	}
	for i := range n {
		ext := fmt.Sprintf("bench-%d-%d", round, i)
		text := fmt.Sprintf("Post %d of round %d says the Moon is made of cheese and the Eiffel Tower is %d metres tall.", i, round, 200+i)
		vid, err := content.ComputeVersionIdentity(text, nil)
		if err != nil {
			panic(err) // plain text always has an identity
		}
		postID := events.PostID(events.PlatformX, ext)
		r := &events.PostVersionRegisteredV1{
			PostID: postID, PostVersionID: events.PostVersionID(postID, vid.VersionHash), Platform: events.PlatformX,
			ExternalID: ext, URL: "https://x.com/someone/status/" + ext, VersionHash: vid.VersionHash,
			ContentHash: vid.ContentHash, OccurrencesHash: vid.OccurrencesHash, ContentText: text,
			WordCount: content.WordCount(text), Provenance: events.ProvenanceClientFallback,
			ServerFetchError: "not verified in the bench", ImageURLs: []string{}, ImageOccurrences: []events.ImageOccurrenceV1{},
			Author: &events.AuthorV1{PlatformUserID: fmt.Sprintf("a%d", i%50), DisplayName: fmt.Sprintf("Author %d", i%50)},
			X:      &events.XMetaV1{TweetID: ext, Text: text, AuthorHandle: "someone", MediaURLs: []string{}},
		}
		invID := events.InvestigationID(r.PostVersionID)
		claim := func(k int, text, summary, reasoning, title string) events.ClaimV1 {
			return events.ClaimV1{ID: events.ClaimID(invID, k), Text: text, Context: "… " + text + " …", Summary: summary,
				Reasoning: reasoning, Sources: []events.SourceV1{{URL: "https://example.org/evidence/" + ext, Title: title,
					Snippet: "Evidence for " + summary}}}
		}
		posts = append(posts, event(r, "registration", i, at.Add(time.Duration(i)*time.Millisecond)))
		completions = append(completions, event(&events.InvestigationCompletedV1{
			InvestigationID: invID, PostID: postID, PostVersionID: r.PostVersionID, Provenance: events.ProvenanceClientFallback,
			PromptVersion: "v3", Provider: "openai-responses", Model: "gpt-5", Series: 1, Attempt: 1,
			Claims: []events.ClaimV1{
				claim(0, "the Moon is made of cheese", "The Moon is rock.", "Lunar samples are basalt and anorthosite.", "Apollo samples"),
				claim(1, fmt.Sprintf("the Eiffel Tower is %d metres tall", 200+i), "It is 330 metres tall.",
					"Official height including antennas.", "Tower facts"),
			},
		}, "completion", i, at.Add(20*time.Minute+time.Duration(i)*time.Millisecond)))
		ids = append(ids, invID)
	}
	return posts, completions, ids
}

// records encodes events as the Kafka records of one batch.
func records(reg *events.Registry, evs []events.Event, firstOffset int64) ([]*kgo.Record, error) {
	out := make([]*kgo.Record, len(evs))
	for i, ev := range evs {
		msg, err := reg.Encode(ev)
		if err != nil {
			return nil, err
		}
		rec := &kgo.Record{Key: []byte(msg.Key), Value: msg.Value, Offset: firstOffset + int64(i), Timestamp: ev.Time}
		for k, v := range msg.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
		}
		out[i] = rec
	}
	return out, nil
}

// rawBody is the _bulk body indexing the documents of ids, as the
// projector built them, into index without versions.
func rawBody(ctx context.Context, pool *pgxpool.Pool, index string, ids []string) (*bytes.Buffer, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read only
	docs, err := search.BuildDocuments(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	if len(docs) != len(ids) {
		return nil, fmt.Errorf("search bench: %d documents for %d investigations", len(docs), len(ids))
	}
	var body bytes.Buffer
	for _, d := range docs {
		fmt.Fprintf(&body, `{"index":{"_index":%q,"_id":%q}}`+"\n", index, d.ID)
		body.Write(d.Source)
		body.WriteByte('\n')
	}
	return &body, nil
}

func bulk(ctx context.Context, es *elasticsearch.Client, body *bytes.Buffer) error {
	res, err := esapi.BulkRequest{Body: body}.Do(ctx, es)
	if err != nil {
		return fmt.Errorf("raw bulk: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("raw bulk: HTTP %d", res.StatusCode)
	}
	var ans struct {
		Errors bool `json:"errors"`
	}
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		return fmt.Errorf("raw bulk: %w", err)
	}
	if ans.Errors {
		return errors.New("raw bulk: some documents failed")
	}
	return nil
}

// refuseDeadLetters fails the batch instead of parking: nothing of the
// bench's workload may be parked.
type refuseDeadLetters struct{}

func (refuseDeadLetters) Send(_ context.Context, rec *kgo.Record, cause error, _ time.Time) error {
	return fmt.Errorf("search bench: %s@%d would be parked: %w", rec.Topic, rec.Offset, cause)
}

// measured runs fn through m when it is set.
func measured(m func(func() error) error, fn func() error) error {
	if m == nil {
		return fn()
	}
	return m(fn)
}
