//go:build linux

package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// kind is a kind of request of the load.
type kind int

const (
	kindRegister kind = iota
	kindView
	kindInvestigate
	numKinds
)

func (k kind) String() string {
	return [...]string{"registerObservedVersion", "recordViewAndGetStatus", "investigateNow"}[k]
}

// post is one planned X post; its claim sentence is what the scripted
// provider recognises it by.
type post struct {
	ExternalID string
	Text       string
	Claim      string
	Rule       string
}

func planPosts(run string, n int) []post {
	out := make([]post, n)
	for i := range out {
		claim := fmt.Sprintf("The cluster fault test %s weighed %05d kilograms of cheese on the moon.", run, i)
		out[i] = post{
			ExternalID: fmt.Sprintf("19%08d%08d", rand.IntN(1e8), i),
			Claim:      claim,
			Text:       fmt.Sprintf("Post %05d of fault run %s. %s Nothing else happened that day.", i, run, claim),
			Rule:       fmt.Sprintf("post-%05d", i),
		}
	}
	return out
}

// request is one request of the load and what came of it. Only an acked
// request (HTTP 200 with a result) was acknowledged to the client.
type request struct {
	Kind      kind
	ID        string // x-request-id: the correlation id of the events it appends
	API       int    // the API process that answered (or was tried last)
	Start     time.Time
	Duration  time.Duration
	Acked     bool
	Status    int    // HTTP status, 0 when there was no answer
	Failure   string // why it was not acknowledged
	Post      int
	VersionID string
	InvID     string
}

// registration is an acknowledged registration.
type registration struct {
	post      int
	versionID string
	at        time.Time
}

// load sends a steady mixed load through both API processes: each request
// goes to the next API in turn, and to the other one when its connection is
// refused (what a load balancer does; nothing reached the refused one).
type load struct {
	apis    []string
	apiKey  string
	posts   []post
	version string
	client  *http.Client
	rates   [numKinds]float64 // requests per second

	mu           sync.Mutex
	reqs         []*request
	registered   []registration
	investigated map[string]bool // version ids sent to investigateNow (ever)
	nextPost     int
	rr           atomic.Uint64
	rng          *rand.Rand

	inflight sync.WaitGroup
	started  time.Time
	stopped  time.Time
}

func newLoad(apis []string, apiKey string, posts []post, rates [numKinds]float64) *load {
	return &load{
		apis: apis, apiKey: apiKey, posts: posts, rates: rates, version: "0.2.0",
		client:       &http.Client{Timeout: 40 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		investigated: map[string]bool{},
		rng:          rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13)),
	}
}

// run sends requests at the configured rates until ctx ends, then waits for
// the requests in flight.
func (l *load) run(ctx context.Context) {
	l.started = time.Now()
	var wg sync.WaitGroup
	for k := kind(0); k < numKinds; k++ {
		if l.rates[k] <= 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(time.Duration(float64(time.Second) / l.rates[k]))
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					l.inflight.Add(1)
					go func() {
						defer l.inflight.Done()
						l.one(k)
					}()
				}
			}
		}()
	}
	wg.Wait()
	l.stopped = time.Now()
	l.inflight.Wait()
}

func (l *load) one(k kind) {
	r := &request{Kind: k, ID: "faults-" + uuid.NewString(), Post: -1}
	var path string
	var body any
	headers := map[string]string{}
	l.mu.Lock()
	switch k {
	case kindRegister:
		if l.nextPost >= len(l.posts) {
			l.mu.Unlock()
			return
		}
		r.Post = l.nextPost
		l.nextPost++
		p := l.posts[r.Post]
		path = "/trpc/post.registerObservedVersion"
		body = map[string]any{
			"platform": "X", "externalId": p.ExternalID, "url": "https://x.com/faults/status/" + p.ExternalID,
			"observedContentText": p.Text,
			"metadata":            map[string]any{"authorHandle": "faults", "text": p.Text, "mediaUrls": []any{}},
		}
	case kindView:
		if len(l.registered) == 0 {
			l.mu.Unlock()
			return
		}
		reg := l.registered[l.rng.IntN(len(l.registered))]
		r.Post, r.VersionID = reg.post, reg.versionID
		path = "/trpc/post.recordViewAndGetStatus"
		body = map[string]any{"postVersionId": reg.versionID}
		// A few viewers, so that unique-view credits are exercised too.
		headers["User-Agent"] = fmt.Sprintf("faults-viewer/%d", l.rng.IntN(7))
	case kindInvestigate:
		// A version registered at least 2 s ago, never sent to investigateNow.
		var pick *registration
		for i := range l.registered {
			reg := &l.registered[i]
			if !l.investigated[reg.versionID] && time.Since(reg.at) > 2*time.Second {
				pick = reg
				break
			}
		}
		if pick == nil {
			l.mu.Unlock()
			return
		}
		l.investigated[pick.versionID] = true
		r.Post, r.VersionID = pick.post, pick.versionID
		path = "/trpc/post.investigateNow"
		body = map[string]any{"postVersionId": pick.versionID}
		headers["x-api-key"] = l.apiKey
	}
	l.reqs = append(l.reqs, r)
	l.mu.Unlock()

	raw, _ := json.Marshal(body)
	out := l.send(r, path, raw, headers)

	l.mu.Lock()
	defer l.mu.Unlock()
	if !r.Acked {
		// NOT_FOUND: the version is not in the serving projection yet, and
		// nothing was appended; it may be investigated later.
		if k == kindInvestigate && r.Status == http.StatusNotFound {
			delete(l.investigated, r.VersionID)
		}
		return
	}
	switch k {
	case kindRegister:
		var res struct {
			PostVersionID string `json:"postVersionId"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.PostVersionID == "" {
			r.Acked, r.Failure = false, fmt.Sprintf("bad answer %q", out)
			return
		}
		r.VersionID = res.PostVersionID
		l.registered = append(l.registered, registration{post: r.Post, versionID: res.PostVersionID, at: time.Now()})
	case kindInvestigate:
		var res struct {
			InvestigationID string `json:"investigationId"`
		}
		if err := json.Unmarshal(out, &res); err != nil || res.InvestigationID == "" {
			r.Acked, r.Failure = false, fmt.Sprintf("bad answer %q", out)
			return
		}
		r.InvID = res.InvestigationID
	}
}

// send posts the request and fills in the outcome; it returns result.data.
func (l *load) send(r *request, path string, body []byte, headers map[string]string) json.RawMessage {
	api := int(l.rr.Add(1) % uint64(len(l.apis)))
	r.Start = time.Now()
	defer func() { r.Duration = time.Since(r.Start) }()
	for try := 0; ; try++ {
		r.API = api
		req, err := http.NewRequest(http.MethodPost, l.apis[api]+path, bytes.NewReader(body))
		if err != nil {
			r.Failure = err.Error()
			return nil
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-request-id", r.ID)
		req.Header.Set("x-openerrata-extension-version", l.version)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := l.client.Do(req)
		if err != nil {
			if isDialError(err) && try == 0 {
				api = (api + 1) % len(l.apis)
				continue
			}
			switch {
			case isDialError(err):
				r.Failure = "connection refused by both APIs"
			case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout"):
				r.Failure = "client timeout"
			default:
				r.Failure = "connection lost mid-request"
			}
			return nil
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		r.Status = res.StatusCode
		if err != nil {
			r.Failure = "connection lost reading the answer"
			return nil
		}
		if res.StatusCode != http.StatusOK {
			r.Failure = fmt.Sprintf("HTTP %d %s", res.StatusCode, firstLine(raw))
			return nil
		}
		var env struct {
			Result struct {
				Data json.RawMessage `json:"data"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &env); err != nil || len(env.Result.Data) == 0 {
			r.Failure = fmt.Sprintf("HTTP 200 without a result: %s", firstLine(raw))
			return nil
		}
		r.Acked = true
		return env.Result.Data
	}
}

func firstLine(b []byte) string {
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// snapshot returns the requests sent so far.
func (l *load) snapshot() []*request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*request(nil), l.reqs...)
}

// kindStats summarises one kind of request.
type kindStats struct {
	sent, acked      int
	failures         map[string]int
	p50, p99, maxLat time.Duration
}

func stats(reqs []*request, k kind) kindStats {
	s := kindStats{failures: map[string]int{}}
	var lat []time.Duration
	for _, r := range reqs {
		if r.Kind != k {
			continue
		}
		s.sent++
		if r.Acked {
			s.acked++
			lat = append(lat, r.Duration)
		} else {
			s.failures[r.Failure]++
		}
	}
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		s.p50, s.p99, s.maxLat = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	}
	return s
}
