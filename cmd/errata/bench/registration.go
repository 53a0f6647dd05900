package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
)

// registrationWorker numbers the posts of the registration phase, apart
// from the load's and freshness's.
const registrationWorker = 95_000

// RegistrationResult is registerObservedVersion measured on its own stack:
// a new version end to end (one client, read-your-writes included) with
// where its milliseconds go, and the re-registration of a known version
// under concurrent clients next to a view of the same version.
type RegistrationResult struct {
	// NewVersion: HTTP registrations of new versions, one at a time.
	NewVersion Latency `json:"new_version"`
	// The breakdown, measured on the same stack's parts, one at a time:
	// Canonicalize: parse and validate the body, canonical text, identity.
	Canonicalize Latency `json:"canonicalize"`
	// Register: the ingest service (canonicalize again, then the append,
	// acks=all, idempotent).
	Register Latency `json:"register"`
	// Applied: from the append's acknowledgement until the projector's
	// checkpoint past it is committed (a 100 µs poll of the checkpoint).
	Applied Latency `json:"applied"`
	// Fetch: Applied minus the projector's batch handling, i.e. the time
	// until the record reached the projector.
	Fetch Latency `json:"fetch"`
	// Handle: the projector's apply and commit of the batch holding it.
	Handle Latency `json:"handle"`
	// Watermark: from the append's acknowledgement until the API's
	// read-your-writes wait (pgproj.Watermark) returned.
	Watermark Latency `json:"watermark"`
	// Known: re-registrations of one known version by Concurrency clients;
	// KnownView: views of that version under the same load (the baseline).
	Concurrency int     `json:"concurrency"`
	Known       Latency `json:"known"`
	KnownView   Latency `json:"known_view"`
	KnownErrors int     `json:"known_errors"`
}

// batchDone is one batch the stack's projector made durable, at when it
// reported it, after took handling it.
type batchDone struct {
	topic     string
	partition int32
	took      time.Duration
	at        time.Time
}

// batchLog is the stack's runner observer: it hands every finished batch
// to the phase measuring one event at a time.
type batchLog struct{ done chan batchDone }

func newBatchLog() *batchLog { return &batchLog{done: make(chan batchDone, 64)} }

func (l *batchLog) BatchDone(_, topic string, partition int32, _ int, took time.Duration) {
	select {
	case l.done <- batchDone{topic, partition, took, time.Now()}:
	default: // nobody is measuring
	}
}

// drain forgets the batches reported so far.
func (l *batchLog) drain() {
	for {
		select {
		case <-l.done:
		default:
			return
		}
	}
}

// await returns the next batch reported for topic/partition.
func (l *batchLog) await(topic string, partition int32) (batchDone, error) {
	timeout := time.After(time.Minute)
	for {
		select {
		case b := <-l.done:
			if b.topic == topic && b.partition == partition {
				return b, nil
			}
		case <-timeout:
			return batchDone{}, fmt.Errorf("no batch of %s/%d reported by the projector", topic, partition)
		}
	}
}

// MeasureRegistration measures samples new versions over HTTP, samples more
// through the stack's parts for the breakdown, then concurrency clients
// re-registering, and viewing, one known version for d each.
func MeasureRegistration(ctx context.Context, s *Stack, batches *batchLog, samples, concurrency, words int, d time.Duration) (RegistrationResult, error) {
	res := RegistrationResult{Concurrency: concurrency}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: concurrency, MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency, DisableCompression: true}}
	defer client.CloseIdleConnections()
	regURL, viewURL := s.URL+"/trpc/post.registerObservedVersion", s.URL+"/trpc/post.recordViewAndGetStatus"
	target := LoadTarget{Name: "api"}

	var newVersion []time.Duration
	for i := 0; i <= samples; i++ { // the first is a warm-up
		p, err := NewPost(registrationWorker, i, words)
		if err != nil {
			return res, err
		}
		t0 := time.Now()
		body, err := call(ctx, client, regURL, p.Body, "errata-bench/registration")
		took := time.Since(t0)
		if err == nil {
			err = checkRegister(target, p, body)
		}
		if err != nil {
			return res, fmt.Errorf("register new version: %w", err)
		}
		if i > 0 {
			newVersion = append(newVersion, took)
		}
	}
	res.NewVersion = Summarize(newVersion)

	var canon, register, applied, fetch, handle, watermark []time.Duration
	caller := ingest.Caller{ViewerKey: s.Hasher.AccountViewerKey("bench"), IPRangeKey: s.Hasher.IPRangeKey(loopback), CorrelationID: "bench"}
	for i := 0; i <= samples; i++ {
		p, err := NewPost(registrationWorker+1, i, words)
		if err != nil {
			return res, err
		}
		batches.drain()
		t0 := time.Now()
		in, err := ingest.ParseRegisterInput(p.Body)
		if err == nil {
			_, err = ingest.BuildRegistration(in)
		}
		t1 := time.Now()
		if err != nil {
			return res, err
		}
		reg, err := s.Ingest.Register(ctx, in, caller)
		t2 := time.Now()
		if err != nil {
			return res, err
		}
		pos := reg.Position
		var wg sync.WaitGroup
		var wmTook time.Duration
		var wmErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			wmErr = s.Watermark.WaitFor(ctx, pos.Topic, pos.Partition, pos.Offset, time.Minute)
			wmTook = time.Since(t2)
		}()
		appliedTook, err := pollCheckpoint(ctx, s, pos.Topic, pos.Partition, pos.Offset, t2)
		wg.Wait()
		if err != nil {
			return res, err
		}
		if wmErr != nil {
			return res, fmt.Errorf("watermark: %w", wmErr)
		}
		b, err := batches.await(pos.Topic, pos.Partition)
		if err != nil {
			return res, err
		}
		if i > 0 {
			canon = append(canon, t1.Sub(t0))
			register = append(register, t2.Sub(t1))
			applied = append(applied, appliedTook)
			fetch = append(fetch, max(0, appliedTook-b.took))
			handle = append(handle, b.took)
			watermark = append(watermark, wmTook)
		}
	}
	res.Canonicalize, res.Register, res.Applied = Summarize(canon), Summarize(register), Summarize(applied)
	res.Fetch, res.Handle, res.Watermark = Summarize(fetch), Summarize(handle), Summarize(watermark)

	known, err := NewPost(registrationWorker+2, 0, words)
	if err != nil {
		return res, err
	}
	if _, err := s.register(ctx, known, time.Minute); err != nil {
		return res, fmt.Errorf("register the known version: %w", err)
	}
	var errs int
	var firstErr error
	res.Known, errs, firstErr = hammer(ctx, concurrency, d, func() error {
		body, err := call(ctx, client, regURL, known.Body, "errata-bench/known")
		if err == nil {
			err = checkRegister(target, known, body)
		}
		return err
	})
	res.KnownErrors += errs
	var viewErrs int
	var viewErr error
	res.KnownView, viewErrs, viewErr = hammer(ctx, concurrency, d, func() error {
		body, err := call(ctx, client, viewURL, known.ViewBody(), "errata-bench/known")
		if err == nil {
			err = checkView(target, known.ViewBody(), body)
		}
		return err
	})
	res.KnownErrors += viewErrs
	if firstErr == nil {
		firstErr = viewErr
	}
	if firstErr != nil {
		return res, fmt.Errorf("known version: %d errors, first: %w", res.KnownErrors, firstErr)
	}
	return res, nil
}

// pollCheckpoint returns how long after since the projector's checkpoint
// passed offset, read every 100 µs.
func pollCheckpoint(ctx context.Context, s *Stack, topic string, partition int32, offset int64, since time.Time) (time.Duration, error) {
	deadline := since.Add(time.Minute)
	for {
		var applied bool
		if err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projection_checkpoints
			WHERE projector = $1 AND topic = $2 AND partition = $3 AND next_offset > $4)`, serving.ProjectorName, topic, partition, offset).Scan(&applied); err != nil {
			return 0, fmt.Errorf("read checkpoint: %w", err)
		}
		if applied {
			return time.Since(since), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s/%d@%d not applied within a minute", topic, partition, offset)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// hammer runs op from concurrency goroutines for d and summarizes its
// latencies; it counts failures and keeps the first.
func hammer(ctx context.Context, concurrency int, d time.Duration, op func() error) (Latency, int, error) {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	var all []time.Duration
	var errs int
	var first error
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				err := op()
				mine = append(mine, time.Since(t0))
				if err != nil {
					mu.Lock()
					errs++
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return Summarize(all), errs, first
}

// runRegistration: the registration phase on a stack of its own (its own
// topics and schema), so the API phase's exact counts and replay are
// untouched.
func runRegistration(ctx context.Context, opt Options, rs *Resources, res *Result, progress func(string, ...any)) error {
	topics, err := rs.Topics(ctx, "reg", opt.Partitions)
	if err != nil {
		return err
	}
	progress("registration: a stack of its own; %d new versions, %d more for the breakdown, %d clients re-registering a known version",
		opt.RegistrationSamples, opt.RegistrationSamples, opt.RegistrationConcurrency)
	batches := newBatchLog()
	stack, err := StartStack(ctx, StackConfig{
		Brokers: opt.Brokers, DatabaseURL: rs.DatabaseURL, Schema: "registration", Topics: topics,
		IPRangeDailyCap: opt.IPRangeDailyCap, ReadYourWritesTimeout: opt.ReadYourWritesTimeout,
		HashSecret: opt.HashSecret, Log: opt.Log, Observer: batches,
	})
	if err != nil {
		return fmt.Errorf("start registration stack: %w", err)
	}
	d := max(opt.APIDuration/4, 500*time.Millisecond)
	err = res.profilePath("registration (new versions one at a time, then known versions beside views)", func() (err error) {
		res.Registration, err = MeasureRegistration(ctx, stack, batches, opt.RegistrationSamples, opt.RegistrationConcurrency, opt.Words, d)
		return err
	})
	if cerr := stack.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("registration: %w", err)
	}
	r := res.Registration
	res.check("registration samples", r.NewVersion.Count == opt.RegistrationSamples && r.Applied.Count == opt.RegistrationSamples,
		"%d new, %d broken down, want %d", r.NewVersion.Count, r.Applied.Count, opt.RegistrationSamples)
	res.check("known version load without errors", r.KnownErrors == 0 && r.Known.Count > 0 && r.KnownView.Count > 0,
		"%d errors, %d re-registrations, %d views", r.KnownErrors, r.Known.Count, r.KnownView.Count)
	return nil
}

// registrationRows: a new version end to end with its breakdown (each part
// against the raw Kafka round trip of the same run), and the known
// version's re-registration against a view of it under the same load.
func registrationRows(g RegistrationResult, kafkaRound Latency) []Row {
	if g.NewVersion.Count == 0 {
		return nil
	}
	var out []Row
	part := func(name string, l Latency) {
		for _, p := range []struct {
			label string
			f, b  float64
		}{{"p50", l.P50, kafkaRound.P50}, {"p99", l.P99, kafkaRound.P99}} {
			out = append(out, Row{Measure: fmt.Sprintf("registration %s %s (%d samples, one at a time)", name, p.label, l.Count),
				Figure: fmt.Sprintf("%.2f ms", p.f), Baseline: fmt.Sprintf("%.2f ms raw Kafka produce->consume", p.b), Ratio: ratio(p.f, p.b)})
		}
	}
	part("of a new version over HTTP, read-your-writes included", g.NewVersion)
	part("breakdown 1: parse, canonical text and identity", g.Canonicalize)
	part("breakdown 2: ingest Register (canonicalise again, append acks=all)", g.Register)
	part("breakdown 3: append acknowledged -> projector checkpoint committed", g.Applied)
	part("breakdown 3a: of which the record reaching the projector", g.Fetch)
	part("breakdown 3b: of which the projector's apply and commit", g.Handle)
	part("breakdown 4: append acknowledged -> API read-your-writes wait returned", g.Watermark)
	for _, p := range []struct {
		label string
		f, b  float64
	}{{"p50", g.Known.P50, g.KnownView.P50}, {"p99", g.Known.P99, g.KnownView.P99}} {
		out = append(out, Row{Measure: fmt.Sprintf("re-registering a known version, %d clients, %s (%d requests)", g.Concurrency, p.label, g.Known.Count),
			Figure:   fmt.Sprintf("%.2f ms", p.f),
			Baseline: fmt.Sprintf("%.2f ms recordViewAndGetStatus of it, same load (%d requests)", p.b, g.KnownView.Count), Ratio: ratio(p.f, p.b)})
	}
	return out
}

// writeRegistration prints the registration phase after the table, one
// line per figure (its rows are in the JSON as "registration"; the table
// keeps its shape).
func writeRegistration(b *strings.Builder, g RegistrationResult, kafkaRound Latency) {
	rows := registrationRows(g, kafkaRound)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nregistration, on a stack of its own (figure; baseline from the same run; ratio):\n")
	for _, row := range rows {
		q := "-"
		if row.Ratio != nil {
			q = fmt.Sprintf("%.3g", *row.Ratio)
		}
		fmt.Fprintf(b, "- %s: %s; %s; %s\n", row.Measure, row.Figure, row.Baseline, q)
	}
}
