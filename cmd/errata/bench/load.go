package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// extensionVersion is sent on every call, as the current extension does.
const extensionVersion = "0.4.0"

// attestationKey is the public key the extension signs bodies with by
// default (a weak abuse signal, sent for realism).
const attestationKey = "openerrata-attestation-v1"

// LoadTarget is where the load generator sends its two steps: a
// registration, then a view of the version just registered.
type LoadTarget struct {
	Name        string
	RegisterURL string
	ViewURL     string
	// Echo: the target answers with the request body (the baseline);
	// otherwise answers are checked against the API's contract.
	Echo bool
}

// LoadOptions shape one load run.
type LoadOptions struct {
	Duration    time.Duration
	Concurrency int
	// Words per generated post.
	Words int
	// FirstWorker offsets worker numbers, so posts of separate runs against
	// one API stay distinct.
	FirstWorker int
}

// LoadResult is what one load run measured.
type LoadResult struct {
	Target         string  `json:"target"`
	Concurrency    int     `json:"concurrency"`
	Seconds        float64 `json:"seconds"`
	Requests       int     `json:"requests"`
	Registers      int     `json:"registers"`
	Views          int     `json:"views"`
	Errors         int     `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	RequestsPerSec float64 `json:"requests_per_sec"`
	Register       Latency `json:"register_latency"`
	View           Latency `json:"view_latency"`
	// Registered are the versions the target confirmed (API targets).
	Registered []Post `json:"-"`
}

// RunLoad drives target with Concurrency keep-alive clients for Duration.
// Each client registers a distinct post and then views it, back to back.
// Requests in flight at the deadline complete and are counted; the rate is
// over the time until the last one answered.
func RunLoad(ctx context.Context, target LoadTarget, opt LoadOptions) (LoadResult, error) {
	if opt.Concurrency < 1 || opt.Duration <= 0 || opt.Words < 1 {
		return LoadResult{}, fmt.Errorf("load: concurrency, duration and words must be positive")
	}
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns: opt.Concurrency, MaxIdleConnsPerHost: opt.Concurrency, MaxConnsPerHost: opt.Concurrency,
			IdleConnTimeout: 90 * time.Second, DisableCompression: true,
		},
	}
	defer client.CloseIdleConnections()
	type workerResult struct {
		reg, view   []time.Duration
		regs, views int
		errs        int
		firstErr    error
		registered  []Post
	}
	results := make([]workerResult, opt.Concurrency)
	start := time.Now()
	deadline := start.Add(opt.Duration)
	var wg sync.WaitGroup
	for w := range opt.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[w]
			worker := opt.FirstWorker + w
			fail := func(err error) {
				r.errs++
				if r.firstErr == nil {
					r.firstErr = err
				}
			}
			for seq := 0; time.Now().Before(deadline) && ctx.Err() == nil; seq++ {
				post, err := NewPost(worker, seq, opt.Words)
				if err != nil {
					fail(err)
					return
				}
				ua := fmt.Sprintf("errata-bench/%d", worker)
				t0 := time.Now()
				body, err := call(ctx, client, target.RegisterURL, post.Body, ua)
				r.reg = append(r.reg, time.Since(t0))
				r.regs++
				if err == nil {
					err = checkRegister(target, post, body)
				}
				if err != nil {
					fail(fmt.Errorf("register %s: %w", post.ExternalID, err))
					continue
				}
				if !target.Echo {
					r.registered = append(r.registered, post)
				}
				view := post.ViewBody()
				t0 = time.Now()
				body, err = call(ctx, client, target.ViewURL, view, ua)
				r.view = append(r.view, time.Since(t0))
				r.views++
				if err == nil {
					err = checkView(target, view, body)
				}
				if err != nil {
					fail(fmt.Errorf("view %s: %w", post.ExternalID, err))
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	out := LoadResult{Target: target.Name, Concurrency: opt.Concurrency, Seconds: elapsed}
	var reg, view []time.Duration
	for _, r := range results {
		reg, view = append(reg, r.reg...), append(view, r.view...)
		out.Registers += r.regs
		out.Views += r.views
		out.Errors += r.errs
		out.Registered = append(out.Registered, r.registered...)
		if r.firstErr != nil && out.FirstError == "" {
			out.FirstError = r.firstErr.Error()
		}
	}
	out.Requests = out.Registers + out.Views
	out.RequestsPerSec = float64(out.Requests) / elapsed
	out.Register, out.View = Summarize(reg), Summarize(view)
	return out, ctx.Err()
}

// call POSTs body as the extension does and returns the answer of a 200.
func call(ctx context.Context, client *http.Client, url string, body []byte, userAgent string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, []byte(attestationKey))
	mac.Write(body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("x-openerrata-extension-version", extensionVersion)
	req.Header.Set("x-openerrata-signature", hex.EncodeToString(mac.Sum(nil)))
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, answer)
	}
	return answer, nil
}

func checkRegister(target LoadTarget, post Post, body []byte) error {
	if target.Echo {
		return checkEcho(post.Body, body)
	}
	var env struct {
		Result struct {
			Data struct {
				PostVersionID string `json:"postVersionId"`
				Provenance    string `json:"provenance"`
			} `json:"data"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("answer is not JSON: %w", err)
	}
	if got := env.Result.Data.PostVersionID; got != post.PostVersionID {
		return fmt.Errorf("postVersionId %q, want %q", got, post.PostVersionID)
	}
	return nil
}

func checkView(target LoadTarget, sent, body []byte) error {
	if target.Echo {
		return checkEcho(sent, body)
	}
	var env struct {
		Result struct {
			Data struct {
				InvestigationState string `json:"investigationState"`
			} `json:"data"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return fmt.Errorf("answer is not JSON: %w", err)
	}
	if got := env.Result.Data.InvestigationState; got != "NOT_INVESTIGATED" {
		return fmt.Errorf("investigationState %q, want NOT_INVESTIGATED", got)
	}
	return nil
}

func checkEcho(sent, got []byte) error {
	if !bytes.Equal(sent, got) {
		return fmt.Errorf("echo answered %d bytes, sent %d", len(got), len(sent))
	}
	return nil
}
