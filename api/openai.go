package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/errata-dev/errata/internal/config"
)

// OpenAI key statuses of validateSettings (CONTRACT.md, output shapes).
const (
	openAIKeyMissing                 = "missing"
	openAIKeyValid                   = "valid"
	openAIKeyFormatInvalid           = "format_invalid"
	openAIKeyAuthenticatedRestricted = "authenticated_restricted"
	openAIKeyInvalid                 = "invalid"
	openAIKeyError                   = "error"
)

// defaultOpenAIKeyCheckTimeout bounds the live check when the config leaves it zero.
const defaultOpenAIKeyCheckTimeout = 5 * time.Second

// OpenAI key format: "sk-" then at least 20 of [A-Za-z0-9_-] (what the
// reference extension accepts), and at most maxOpenAIKeyLength in all.
var openAIKeyFormat = regexp.MustCompile(`^sk-[A-Za-z0-9_-]{20,}$`)

const maxOpenAIKeyLength = 512

// The messages of the non-OK statuses: short, fixed, never the key.
const (
	msgKeyWhitespace = "The OpenAI API key must not contain spaces or line breaks; paste the key exactly as issued."
	msgKeyPrefix     = "OpenAI API keys begin with sk-; check that the whole key was pasted."
	msgKeyLength     = "The OpenAI API key is too long to be a real key."
	msgKeyShape      = "The OpenAI API key is incomplete or contains characters a key never has."
	msgKeyRejected   = "OpenAI rejected this API key."
	msgKeyRestricted = "OpenAI accepted this key, but it is not allowed to list models; investigations may fail with it."
	msgKeyRateLimit  = "OpenAI rate-limited the key check; try again in a moment."
	msgKeyTimeout    = "OpenAI did not answer the key check in time; try again later."
	msgKeyUnreached  = "Could not reach OpenAI to check the key; try again later."
)

// checkOpenAIKeyFormat classifies a trimmed key without any network call:
// "" when the format is plausible, else the format_invalid message.
func checkOpenAIKeyFormat(key string) string {
	switch {
	case strings.ContainsFunc(key, isJSSpaceOrControl):
		return msgKeyWhitespace
	case !strings.HasPrefix(key, "sk-"):
		return msgKeyPrefix
	case len(key) > maxOpenAIKeyLength:
		return msgKeyLength
	case !openAIKeyFormat.MatchString(key):
		return msgKeyShape
	}
	return ""
}

func isJSSpaceOrControl(r rune) bool {
	return r <= 0x20 || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200a) ||
		r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000 || r == 0xfeff
}

// openAIChecker validates user OpenAI keys with one live call to the
// configured provider: GET {base}/models.
type openAIChecker struct {
	modelsURL string
	timeout   time.Duration
	client    *http.Client
}

func newOpenAIChecker(base string, timeout time.Duration) (*openAIChecker, error) {
	if base == "" {
		base = config.DefaultOpenAIBaseURL
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never echo the URL: it may carry credentials.
		return nil, errors.New("OpenAI base URL must be an absolute http(s) URL")
	}
	if timeout <= 0 {
		timeout = defaultOpenAIKeyCheckTimeout
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.ResponseHeaderTimeout = timeout
	return &openAIChecker{
		modelsURL: u.String() + "/models",
		timeout:   timeout,
		client: &http.Client{
			Transport: transport,
			Timeout:   timeout,
			// The key goes to the configured provider only: a redirect is
			// an answer, not an instruction to send it elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// check returns the status of the (untrimmed) key from x-openai-api-key and,
// for every status but missing and valid, a message for the user.
func (o *openAIChecker) check(ctx context.Context, rawKey string) (status, message string) {
	key := strings.TrimSpace(rawKey)
	if key == "" {
		return openAIKeyMissing, ""
	}
	if msg := checkOpenAIKeyFormat(key); msg != "" {
		return openAIKeyFormatInvalid, msg
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.modelsURL, http.NoBody)
	if err != nil {
		return openAIKeyError, msgKeyUnreached
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	resp, err := o.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return openAIKeyError, msgKeyTimeout
		}
		return openAIKeyError, msgKeyUnreached
	}
	// Drain a little so the connection can be reused; the body itself is
	// never shown (it may quote the key).
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return openAIKeyValid, ""
	case http.StatusUnauthorized:
		return openAIKeyInvalid, msgKeyRejected
	case http.StatusForbidden:
		return openAIKeyAuthenticatedRestricted, msgKeyRestricted
	case http.StatusTooManyRequests:
		return openAIKeyError, msgKeyRateLimit
	default:
		return openAIKeyError, fmt.Sprintf("OpenAI answered the key check with HTTP %d; try again later.", resp.StatusCode)
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
