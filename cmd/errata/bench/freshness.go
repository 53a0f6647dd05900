package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/producers/investigations"
)

// freshnessWorker numbers the posts the freshness phase registers, apart
// from the load generator's workers.
const freshnessWorker = 90_000

// FreshnessResult is end-to-end freshness: an event appended to the log
// until the API shows its effect.
type FreshnessResult struct {
	Samples int     `json:"samples"`
	Latency Latency `json:"latency"`
	// Where the time goes, from the start of the append: Appended, until
	// the append is acknowledged; Committed, until the projector reported
	// the batch holding it durable (its checkpoint committed). Latency
	// minus Committed is the API noticing: polls of getInvestigation.
	Appended  Latency `json:"appended"`
	Committed Latency `json:"committed"`
	// Polls of getInvestigation it took, in all.
	Polls int `json:"polls"`
}

// MeasureFreshness registers samples posts first, then for each appends an
// investigation request through the producer (as investigateNow and the
// selector do) and polls the API's getInvestigation (the extension's
// polling target) until it answers INVESTIGATING: from the start of the
// append to that answer. One warm-up sample is not counted. batches is the
// stack's projector observer, for the breakdown.
func MeasureFreshness(ctx context.Context, s *Stack, batches *batchLog, samples int, interval time.Duration) (FreshnessResult, error) {
	posts := make([]Post, samples+1)
	for i := range posts {
		p, err := NewPost(freshnessWorker, i, 50)
		if err != nil {
			return FreshnessResult{}, err
		}
		if _, err := s.register(ctx, p, time.Minute); err != nil {
			return FreshnessResult{}, fmt.Errorf("register freshness post: %w", err)
		}
		posts[i] = p
	}
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	res := FreshnessResult{Samples: samples}
	var ds, appended, committed []time.Duration
	next := time.Now()
	for i, p := range posts {
		if wait := time.Until(next); wait > 0 {
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(wait):
			}
		}
		next = next.Add(interval)
		invID := events.InvestigationID(p.PostVersionID)
		target := s.URL + "/trpc/post.getInvestigation?input=" + url.QueryEscape(`{"investigationId":"`+invID+`"}`)
		batches.drain()
		start := time.Now()
		pos, err := s.Requests.Request(ctx, investigations.Request{
			Version: investigations.Version{PostID: p.PostID, PostVersionID: p.PostVersionID, Platform: events.PlatformSubstack,
				ExternalID: p.ExternalID, VersionHash: p.VersionHash},
			Source: events.RequestSourceSelector, CorrelationID: "bench-freshness",
		})
		if err != nil {
			return res, fmt.Errorf("append investigation request: %w", err)
		}
		acked := time.Since(start)
		deadline := start.Add(time.Minute)
		for {
			visible, err := investigating(ctx, client, target)
			if i > 0 {
				res.Polls++
			}
			if err != nil {
				return res, err
			}
			if visible {
				break
			}
			if time.Now().After(deadline) {
				return res, fmt.Errorf("investigation %s not visible in the API after a minute", invID)
			}
			time.Sleep(500 * time.Microsecond)
		}
		visibleAfter := time.Since(start)
		// The projector reported the batch before the answer could show it.
		b, err := batches.await(pos.Topic, pos.Partition)
		if err != nil {
			return res, err
		}
		if i > 0 {
			ds = append(ds, visibleAfter)
			appended = append(appended, acked)
			committed = append(committed, b.at.Sub(start))
		}
	}
	res.Latency, res.Appended, res.Committed = Summarize(ds), Summarize(appended), Summarize(committed)
	return res, nil
}

// investigating asks getInvestigation: NOT_FOUND means not yet projected.
func investigating(ctx context.Context, client *http.Client, target string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("x-openerrata-extension-version", extensionVersion)
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return false, err
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return false, nil
	case http.StatusOK:
		var env struct {
			Result struct {
				Data struct {
					InvestigationState string `json:"investigationState"`
				} `json:"data"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body, &env); err != nil {
			return false, fmt.Errorf("getInvestigation: %w", err)
		}
		if env.Result.Data.InvestigationState != "INVESTIGATING" {
			return false, fmt.Errorf("getInvestigation: state %q, want INVESTIGATING", env.Result.Data.InvestigationState)
		}
		return true, nil
	}
	return false, fmt.Errorf("getInvestigation: HTTP %d: %.200s", resp.StatusCode, body)
}

// MeasureKafkaRoundTrip is freshness's baseline: one record produced
// (idempotent, acks=all, as every event is) until a bare consumer of the
// same broker receives it, samples times at the same pace. One warm-up
// sample is not counted. topic must exist and be empty.
func MeasureKafkaRoundTrip(ctx context.Context, brokers []string, topic string, samples int, interval time.Duration) (Latency, error) {
	producer, err := kafka.NewClient(brokers, kafka.ProducerOpts()...)
	if err != nil {
		return Latency{}, err
	}
	defer producer.Close()
	consumer, err := kafka.NewClient(brokers, append(kafka.ConsumerOpts(), kgo.ConsumeTopics(topic))...)
	if err != nil {
		return Latency{}, err
	}
	defer consumer.Close()
	type arrival struct {
		n  int
		at time.Time
	}
	arrivals := make(chan arrival, samples+1)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	consumeErr := make(chan error, 1)
	go func() {
		for {
			f := consumer.PollFetches(cctx)
			at := time.Now()
			if cctx.Err() != nil {
				consumeErr <- nil
				return
			}
			if err := f.Err0(); err != nil {
				consumeErr <- err
				return
			}
			f.EachRecord(func(r *kgo.Record) {
				n, _ := strconv.Atoi(string(r.Key))
				arrivals <- arrival{n, at}
			})
		}
	}()
	// About the size of an investigation request event.
	value := []byte(`{"payload":"` + strings.Repeat("x", 600) + `"}`)
	var ds []time.Duration
	next := time.Now()
	for i := 0; i <= samples; i++ {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		next = next.Add(interval)
		start := time.Now()
		if err := producer.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(strconv.Itoa(i)), Value: value}).FirstErr(); err != nil {
			return Latency{}, fmt.Errorf("produce: %w", err)
		}
		select {
		case a := <-arrivals:
			if a.n != i {
				return Latency{}, fmt.Errorf("round trip: received record %d, want %d", a.n, i)
			}
			if i > 0 {
				ds = append(ds, a.at.Sub(start))
			}
		case err := <-consumeErr:
			return Latency{}, fmt.Errorf("consume: %w", err)
		case <-time.After(time.Minute):
			return Latency{}, fmt.Errorf("record %d not consumed within a minute", i)
		case <-ctx.Done():
			return Latency{}, ctx.Err()
		}
	}
	return Summarize(ds), nil
}
