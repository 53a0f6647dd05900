package canonical

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/retry"
)

// do sends req, retrying transient failures per the retry policy, and
// returns only a 2xx response. Errors name the method and URL (platform API
// URLs carry no credentials), say how many attempts were made when there was
// more than one, and wrap the last failure.
func (f *Fetcher) do(ctx context.Context, platform string, req httpsafe.Request) (*httpsafe.Response, error) {
	req.MaxBytes = f.maxBytes
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	for attempt := 1; ; attempt++ {
		resp, err := f.client.Do(ctx, req)
		if err == nil && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			f.log.LogAttrs(ctx, slog.LevelDebug, "canonical fetch succeeded",
				slog.String("platform", platform), slog.String("url", req.URL), slog.Int("attempt", attempt))
			return resp, nil
		}
		retryable, delay := false, f.retry.backoff(attempt)
		if err != nil {
			// Policy refusals (blocked address, too large, ...) repeat
			// identically; a cancelled caller wants no more attempts.
			retryable = ctx.Err() == nil && !httpsafe.IsPolicyError(err)
		} else {
			serr := &StatusError{StatusCode: resp.StatusCode, Body: resp.Body[:min(len(resp.Body), maxErrorBody)]}
			if retryableStatus(resp.StatusCode) {
				retryable = true
				if wait, ok := retry.After(resp.Header, time.Now()); ok {
					serr.RetryAfter = wait
					switch {
					case wait > f.retry.MaxRetryAfter:
						retryable = false
					case wait > delay:
						delay = wait
					}
				}
			}
			// httpsafe names the request in its errors; do the same here.
			err = fmt.Errorf("%s %s: %w", method, req.URL, serr)
		}
		if !retryable || attempt >= f.retry.Attempts {
			f.log.LogAttrs(ctx, slog.LevelWarn, "canonical fetch failed",
				slog.String("platform", platform), slog.String("url", req.URL),
				slog.Int("attempts", attempt), slog.String("error", err.Error()))
			if attempt > 1 {
				return nil, fmt.Errorf("gave up after %d attempts: %w", attempt, err)
			}
			return nil, err
		}
		f.log.LogAttrs(ctx, slog.LevelWarn, "canonical fetch retrying",
			slog.String("platform", platform), slog.String("url", req.URL), slog.Int("attempt", attempt),
			slog.Duration("delay", delay), slog.String("error", err.Error()))
		if serr := f.sleep(ctx, delay); serr != nil {
			return nil, fmt.Errorf("%w while waiting to retry after: %v", serr, err)
		}
	}
}

// retryableStatus: request timeout, rate limiting and server errors are
// worth another try; other 4xx answers would repeat.
func retryableStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}
