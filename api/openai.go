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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

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
// configured provider through openai-go: GET {base}/models.
type openAIChecker struct {
	modelsURL string
	timeout   time.Duration
	models    openai.ModelService
}

// maxKeyCheckBody bounds what is read of the provider's answer: only its
// status counts, and the body is never shown (it may quote the key).
const maxKeyCheckBody = 64 << 10

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
	client := &http.Client{
		Transport: transport,
		Timeout:   timeout,
		// The key goes to the configured provider only: a redirect is
		// an answer, not an instruction to send it elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &openAIChecker{
		modelsURL: u.String() + "/models",
		timeout:   timeout,
		// No environment (openai.NewClient would read OPENAI_*) and no SDK
		// retries: one request per check.
		models: openai.NewModelService(option.WithBaseURL(u.String()+"/"), option.WithHTTPClient(client), option.WithMaxRetries(0)),
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
	// The answer's status decides, whatever its body: the middleware
	// records it and bounds the body the SDK goes on to read.
	answered := 0
	observe := func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if req.URL.String() != o.modelsURL {
			return nil, errors.New("openai key check: request is not for the models endpoint")
		}
		resp, err := next(req)
		if resp != nil {
			answered = resp.StatusCode
			resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, maxKeyCheckBody), Closer: resp.Body}
		}
		return resp, err
	}
	_, err := o.models.List(ctx, option.WithAPIKey(key), option.WithMiddleware(observe))
	switch {
	case answered == http.StatusOK:
		return openAIKeyValid, ""
	case answered == http.StatusUnauthorized:
		return openAIKeyInvalid, msgKeyRejected
	case answered == http.StatusForbidden:
		return openAIKeyAuthenticatedRestricted, msgKeyRestricted
	case answered == http.StatusTooManyRequests:
		return openAIKeyError, msgKeyRateLimit
	case answered != 0:
		return openAIKeyError, fmt.Sprintf("OpenAI answered the key check with HTTP %d; try again later.", answered)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return openAIKeyError, msgKeyTimeout
	default:
		return openAIKeyError, msgKeyUnreached
	}
}

// limitedBody reads at most a bound of a response body and closes the body.
type limitedBody struct {
	io.Reader
	io.Closer
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}
