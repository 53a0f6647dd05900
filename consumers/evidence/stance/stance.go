// Package stance judges passages against a claim with the configured LLM
// provider: for each passage, the probabilities that it entails the claim,
// contradicts it, or neither (evidence.Stance). It implements
// evidence.Stancer.
//
// Passages go to the model in batches (Config.BatchSize per call) with our
// stance prompt (prompts.NameStance) and a strict answer schema (Schema).
// The claim and every passage are untrusted: each sits in its own section
// between random fence lines (prompts.Fence), so a passage can neither close
// its section nor pass for another one.
//
// Outcomes, per batch:
//
//   - an answer whose whole is unusable (not the schema, a refusal, a wrong
//     number of judgements, an index out of range or given twice) is asked
//     again, at once, up to Config.MaxTries tries in all;
//   - a usable answer with bad entries (probabilities that are not numbers
//     in [0, 1] summing to 1 ± 0.05) keeps its good entries, and only the
//     passages of the bad ones are asked again;
//   - a passage still without a usable judgement after MaxTries tries is
//     evidence.NeutralStance with a note saying why; so is an empty passage
//     (never sent);
//   - a transient provider failure (429, 5xx, timeout, ...) is retried
//     after 1s, 2s, 4s, ... (the provider's Retry-After when longer; 30s at
//     most) within the same MaxTries; when they run out, Judge returns an
//     error, as it does at once for a non-retryable failure
//     (authentication, a bad request): the caller tries the whole claim
//     again later and publishes nothing meanwhile.
package stance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/investigator/prompts"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/retry"
)

// Notes of passages that keep the neutral default.
const (
	NoteEmptyPassage = "empty passage"
	NoteEmptyClaim   = "empty claim"
)

// Retry waits: the n-th transient failure waits retryBase·2^(n-1), at least
// the provider's Retry-After, at most maxRetryWait (a longer wait is the
// caller's business: it retries the claim later).
const (
	retryBase    = time.Second
	maxRetryWait = 30 * time.Second
	// maxNoteBytes bounds the provider text a note repeats.
	maxNoteBytes = 300
)

// Config tunes the stance calls. Zero values take the defaults.
type Config struct {
	Model           string // default DefaultModel
	BatchSize       int    // passages per model call, default 8
	MaxPassageBytes int    // each passage (and the claim) is cut to this, on a UTF-8 boundary; default 2000
	// MaxTries bounds the tries of one batch, counting transient failures
	// and unusable answers alike (default 3).
	MaxTries        int
	ReasoningEffort string
	ExchangeTimeout time.Duration // one model call, default 2m
}

// DefaultModel is a small model: judging a passage is a reading task.
const DefaultModel = "gpt-5-mini"

func (c *Config) defaults() {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 8
	}
	if c.MaxPassageBytes <= 0 {
		c.MaxPassageBytes = 2000
	}
	if c.MaxTries <= 0 {
		c.MaxTries = 3
	}
	if c.ExchangeTimeout <= 0 {
		c.ExchangeTimeout = 2 * time.Minute
	}
}

// Call is one claim and its passages.
type Call struct {
	Claim    string
	Passages []string
	Cred     llm.Credentials
	// Metadata is attached to every request (investigation, submission).
	Metadata map[string]string
}

// Turn is one model exchange, reported so the caller records it as an event.
type Turn struct {
	// Batch is the 1-based batch of the call; Try the 1-based try of that
	// batch.
	Batch, Try int
	Response   *llm.Response // may be nil when the call failed before an answer
	Err        error
}

// Provider judges stance with an LLM provider.
type Provider struct {
	llm    llm.Provider
	cfg    Config
	prompt prompts.Prompt
	// now dates the prompt; fence draws the fence lines; sleep waits
	// between tries. Tests replace them.
	now   func() time.Time
	fence func(contents ...string) (string, string)
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns a stance provider on p. It panics if the stance prompt is
// missing from the embedded registry, which the prompts' tests rule out.
func New(p llm.Provider, cfg Config) *Provider {
	cfg.defaults()
	prompt, err := prompts.Default().Get(prompts.NameStance)
	if err != nil {
		panic(fmt.Sprintf("stance: %v", err))
	}
	return &Provider{llm: p, cfg: cfg, prompt: prompt, now: time.Now, fence: prompts.Fence, sleep: retry.Sleep}
}

// PromptRef is the stance prompt's name, version and sha256.
func (s *Provider) PromptRef() events.PromptRefV1 {
	return events.PromptRefV1{Name: s.prompt.Name, Version: s.prompt.Version, SHA256: s.prompt.SHA256}
}

// Model is the model the calls ask for.
func (s *Provider) Model() string { return s.cfg.Model }

// ProviderName is the LLM provider's name (llm.ProviderOpenAIResponses, ...).
func (s *Provider) ProviderName() string { return s.llm.Name() }

// Judge returns exactly len(call.Passages) results in order. observe (may
// be nil) is called once per exchange, in order. An error means no result:
// a provider failure that did not pass (see the package comment), or ctx's
// error.
func (s *Provider) Judge(ctx context.Context, call Call, observe func(Turn)) ([]evidence.StanceResult, error) {
	out := make([]evidence.StanceResult, len(call.Passages))
	texts := make([]string, len(call.Passages))
	var todo []int
	for i, p := range call.Passages {
		texts[i] = clip(p, s.cfg.MaxPassageBytes)
		if strings.TrimSpace(texts[i]) == "" {
			out[i] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: NoteEmptyPassage}
			continue
		}
		todo = append(todo, i)
	}
	claim := clip(call.Claim, s.cfg.MaxPassageBytes)
	if strings.TrimSpace(claim) == "" {
		for _, i := range todo {
			out[i] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: NoteEmptyClaim}
		}
		return out, nil
	}
	for b := 0; b*s.cfg.BatchSize < len(todo); b++ {
		batch := todo[b*s.cfg.BatchSize : min((b+1)*s.cfg.BatchSize, len(todo))]
		if err := s.judgeBatch(ctx, call, claim, texts, batch, b+1, observe, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// judgeBatch fills out for the passages of one batch.
func (s *Provider) judgeBatch(ctx context.Context, call Call, claim string, texts []string, batch []int, number int,
	observe func(Turn), out []evidence.StanceResult) error {
	pending := batch
	failures := map[int]int{}    // unusable answers per passage
	problems := map[int]string{} // the latest problem per passage
	transient := 0
	for try := 1; ; try++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		req, err := s.request(claim, texts, pending, call.Metadata)
		if err != nil {
			return err
		}
		tctx, cancel := context.WithTimeout(ctx, s.cfg.ExchangeTimeout)
		res, callErr := s.llm.Create(tctx, call.Cred, req)
		cancel()
		if callErr != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if observe != nil {
			observe(Turn{Batch: number, Try: try, Response: res, Err: callErr})
		}

		var whole error // the answer as a whole is unusable
		var left []int
		switch le, _ := llm.AsError(callErr); {
		case callErr == nil:
			stances, bad, err := decodeAnswer(res.OutputJSON, len(pending))
			if err != nil {
				whole = err
				break
			}
			for k, i := range pending {
				if bad[k] != "" {
					failures[i]++
					problems[i] = bad[k]
					left = append(left, i)
					continue
				}
				out[i] = evidence.StanceResult{Stance: stances[k]}
			}
		case le != nil && le.Kind == llm.KindInvalidOutput:
			whole = errors.New(le.Message)
		case le != nil && le.Kind == llm.KindRefusal:
			whole = fmt.Errorf("the model refused: %s", le.Message)
		case llm.IsRetryable(callErr):
			if try >= s.cfg.MaxTries {
				return fmt.Errorf("stance: batch %d: no answer after %d tries: %w", number, try, callErr)
			}
			transient++
			if err := s.sleep(ctx, wait(transient, le)); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("stance: batch %d: %w", number, callErr)
		}
		if whole != nil {
			left = pending
			for _, i := range pending {
				failures[i]++
				problems[i] = whole.Error()
			}
		}
		if len(left) == 0 {
			return nil
		}
		if try >= s.cfg.MaxTries {
			for _, i := range left {
				note := fmt.Sprintf("stance answer broke the schema %d %s: %s", failures[i], plural(failures[i]), problems[i])
				out[i] = evidence.StanceResult{Stance: evidence.NeutralStance, Note: clip(note, maxNoteBytes)}
			}
			return nil
		}
		pending = left // the model answered: ask again at once for the rest
	}
}

// request builds the model call for the passages idx of texts.
func (s *Provider) request(claim string, texts []string, idx []int, metadata map[string]string) (llm.Request, error) {
	fenced := make([]string, 0, len(idx)+1)
	fenced = append(fenced, claim)
	for _, i := range idx {
		fenced = append(fenced, texts[i])
	}
	open, closeLine := s.fence(fenced...)
	instructions, err := s.prompt.Render(prompts.StandardVars(open, closeLine, s.now()))
	if err != nil {
		return llm.Request{}, fmt.Errorf("stance: %w", err)
	}
	var b strings.Builder
	b.WriteString(prompts.Section(prompts.HeadingClaim, open, closeLine, claim))
	for k, i := range idx {
		b.WriteString("\n")
		b.WriteString(prompts.Section(prompts.PassageHeading(k+1), open, closeLine, texts[i]))
	}
	return llm.Request{
		Model:           s.cfg.Model,
		Instructions:    instructions,
		Input:           []llm.Message{llm.UserText(b.String())},
		ReasoningEffort: s.cfg.ReasoningEffort,
		OutputSchema:    &llm.OutputSchema{Name: prompts.StanceSchemaName, Schema: Schema()},
		Metadata:        metadata,
	}, nil
}

// Stancer adapts Judge with fixed credentials to evidence.Stancer (for
// `errata eval`'s provider lane).
func (s *Provider) Stancer(cred llm.Credentials) evidence.Stancer {
	return stancer{p: s, cred: cred}
}

type stancer struct {
	p    *Provider
	cred llm.Credentials
}

func (a stancer) Stance(ctx context.Context, claim string, passages []string) ([]evidence.StanceResult, error) {
	return a.p.Judge(ctx, Call{Claim: claim, Passages: passages, Cred: a.cred}, nil)
}

// wait is the pause before the next try after the n-th transient failure.
func wait(n int, e *llm.Error) time.Duration {
	var asked time.Duration
	if e != nil {
		asked = e.RetryAfter
	}
	return retry.Exponential{Base: retryBase, Max: maxRetryWait}.Wait(n, asked)
}

// clip makes s valid UTF-8 without NUL bytes (which some servers refuse)
// and cuts it to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

func plural(n int) string {
	if n == 1 {
		return "time"
	}
	return "times"
}
