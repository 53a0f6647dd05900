package api

// The workbench API (issue 15, FactHarbor's submission workbench): submit a
// text or a page for a verdict analysis, read the job, follow its events.
//
//	POST /api/v1/analyses            {"text": …} or {"url": …}  → 202 {"id"}, or 200 {"id"} when it exists
//	GET  /api/v1/analyses/{id}       the job JSON (serving projection)
//	GET  /api/v1/analyses/{id}/events  text/event-stream of its events (analyses_stream.go)
//	GET  /api/v1/analyses/{id}/report  a self-contained HTML report, as a download (workbench.go)
//
// Every refusal is {"error":{"code","message"}} with a 4xx status, and a
// refused submission appends nothing.

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/kafka"
	"github.com/errata-dev/errata/internal/ratelimit"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/analyses"
	"github.com/errata-dev/errata/producers/ingest"
	"github.com/errata-dev/errata/projections/serving"
	"github.com/twmb/franz-go/pkg/kgo"
)

// AnalysisRequester appends analysis requests (producers/analyses.Service).
type AnalysisRequester interface {
	// ID is the analysis id a request of in names.
	ID(in analyses.Input) string
	Request(ctx context.Context, in analyses.Input, who analyses.Requester) (string, producers.Position, error)
}

// PageFetcher fetches a submitted page and extracts its text
// (producers/analyses.PageFetcher); refusals are *analyses.InputError.
type PageFetcher interface {
	Fetch(ctx context.Context, u *url.URL) (analyses.Page, error)
}

// AnalysisReader reads analyses from the serving projection
// (serving.Reader); an analysis marshals to the job JSON.
type AnalysisReader interface {
	// Analysis returns an analysis, or serving.ErrNotFound.
	Analysis(ctx context.Context, id string) (serving.Analysis, error)
}

// VersionSources reads a registered version's text (serving.Reader.Source).
type VersionSources interface {
	Source(ctx context.Context, versionID string) (serving.Source, error)
}

// EventLog reads one key's records from a topic (kafka.KeyReader).
type EventLog interface {
	Follow(ctx context.Context, f kafka.KeyFollow, fn func(*kgo.Record) (done bool, err error)) error
}

// Analyses is what the workbench API and the tRPC verdict namespace need.
type Analyses struct {
	Requests AnalysisRequester
	Pages    PageFetcher
	Reader   AnalysisReader
	Versions VersionSources
	// Log and Topic are where the event streams read: the analyses
	// topic's full name; Registry decodes its records.
	Log      EventLog
	Topic    string
	Registry *events.Registry
	// SubmitLimit rations submissions (POST /api/v1/analyses,
	// verdict.request) per client; KeySubmitLimit per valid instance API
	// key instead, with a higher budget. Nil: no limit. A submission is
	// charged when its page is fetched or its request appended: refused
	// input and analyses that exist already cost nothing.
	SubmitLimit, KeySubmitLimit *ratelimit.Limiter
	// StreamsPerClient and Streams bound open event streams per client and
	// in all; zero takes DefaultStreamsPerClient and DefaultStreams.
	StreamsPerClient, Streams int
	// Heartbeat is the interval of keep-alive comments on an event stream,
	// StreamMaxDuration how long one stream stays open before the client
	// is asked to reconnect (it resumes after the last event it got);
	// zero takes the defaults.
	Heartbeat, StreamMaxDuration time.Duration
}

// Defaults of Analyses.
const (
	DefaultStreamsPerClient  = 4
	DefaultStreams           = 512
	DefaultHeartbeat         = 15 * time.Second
	DefaultStreamMaxDuration = 10 * time.Minute
)

// WithAnalyses enables the workbench API, its page and the tRPC verdict
// namespace.
func WithAnalyses(a Analyses) Option {
	return func(s *Server) {
		if a.StreamsPerClient <= 0 {
			a.StreamsPerClient = DefaultStreamsPerClient
		}
		if a.Streams <= 0 {
			a.Streams = DefaultStreams
		}
		if a.Heartbeat <= 0 {
			a.Heartbeat = DefaultHeartbeat
		}
		if a.StreamMaxDuration <= 0 {
			a.StreamMaxDuration = DefaultStreamMaxDuration
		}
		s.analyses = &a
		s.streams = newStreamSlots(a.StreamsPerClient, a.Streams)
	}
}

// HeaderClient marks a request from the workbench page: its submissions
// are recorded with source WORKBENCH, every other one with API.
const HeaderClient = "x-errata-client"

// ClientWorkbench is HeaderClient's value on the page's requests.
const ClientWorkbench = "workbench"

// Error codes of the workbench API beside analyses.Code* (the input's).
const (
	codeInvalidJSON      = "INVALID_JSON"
	codeUnsupportedType  = "UNSUPPORTED_MEDIA_TYPE"
	codeBodyTooLarge     = "BODY_TOO_LARGE"
	codeInputMissing     = "INPUT_MISSING"
	codeInputAmbiguous   = "INPUT_AMBIGUOUS"
	codeInvalidID        = "INVALID_ID"
	codeNotFound         = "NOT_FOUND"
	codeRateLimited      = "RATE_LIMITED"
	codeTooManyStreams   = "TOO_MANY_STREAMS"
	codeTimeout          = "TIMEOUT"
	codeInternal         = "INTERNAL"
	codeHeaderTooLarge   = "HEADERS_TOO_LARGE"
	codeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	codeInvalidRequest   = "INVALID_REQUEST"
)

// apiError is a refusal of the workbench API.
type apiError struct {
	status  int
	code    string
	message string
	// retryAfter, when positive, is sent as Retry-After (seconds).
	retryAfter int
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func apiErr(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// inputStatus is the HTTP status of each input refusal: the request is
// malformed (400), or the page it names cannot be analysed (422).
var inputStatus = map[string]int{
	analyses.CodeTextEmpty: 400, analyses.CodeTextTooLong: 400, analyses.CodeTextControl: 400,
	analyses.CodeURLInvalid: 400, analyses.CodeURLTooLong: 400, analyses.CodeURLScheme: 400,
	analyses.CodeURLPort: 400, analyses.CodeURLPrivateAddress: 400,
	analyses.CodeURLUnreachable: 422, analyses.CodeURLHTTPStatus: 422, analyses.CodeURLTooLarge: 422,
	analyses.CodeURLNotHTML: 422, analyses.CodeURLNoText: 422,
}

func writeAPIError(c *fiber.Ctx, e *apiError) error {
	if e.retryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(e.retryAfter))
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(e.status).JSON(fiber.Map{"error": fiber.Map{"code": e.code, "message": e.message}})
}

// rest runs a workbench API handler with a time bound, rendering its
// refusals; unexpected errors are logged and answered without internals.
func (s *Server) rest(h func(c *fiber.Ctx) error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, cancel := context.WithTimeout(c.UserContext(), requestTimeout)
		defer cancel()
		c.SetUserContext(ctx)
		err := h(c)
		if err == nil {
			return nil
		}
		var ae *apiError
		var ie *analyses.InputError
		switch {
		case errors.As(err, &ae):
		case errors.As(err, &ie):
			status, ok := inputStatus[ie.Code]
			if !ok {
				status = 400
			}
			ae = apiErr(status, ie.Code, "%s", ie.Message)
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			s.log.Warn("request timed out", "path", c.Path(), "err", err)
			ae = apiErr(fiber.StatusServiceUnavailable, codeTimeout, "the request could not be completed in time; try again")
		default:
			s.log.Error("request failed", "path", c.Path(), "err", err)
			ae = apiErr(fiber.StatusInternalServerError, codeInternal, "internal error")
		}
		return writeAPIError(c, ae)
	}
}

// limitREST rations the workbench API's reads like the tRPC procedures
// (Config.RateLimit, one token a call).
func (s *Server) limitREST(c *fiber.Ctx) error {
	ok, wait := s.cfg.RateLimit.Allow(ratelimit.ClientKey(s.clientIP(c)), 1)
	if ok {
		return c.Next()
	}
	secs := ratelimit.RetryAfterSeconds(wait)
	e := apiErr(fiber.StatusTooManyRequests, codeRateLimited, "too many requests from this network; retry in %d s", secs)
	e.retryAfter = secs
	return writeAPIError(c, e)
}

// submitAllowed charges one submission to the caller: to its instance API
// key's budget when it has a valid one, else to its network's.
func (s *Server) submitAllowed(c *fiber.Ctx, caller ingest.Caller) (ok bool, retryAfter int) {
	limit, key := s.analyses.SubmitLimit, ratelimit.ClientKey(s.clientIP(c))
	if caller.Authenticated {
		limit, key = s.analyses.KeySubmitLimit, "key:"+caller.ViewerKey
	}
	if limit == nil {
		return true, 0
	}
	allowed, wait := limit.Allow(key, 1)
	if allowed {
		return true, 0
	}
	return false, ratelimit.RetryAfterSeconds(wait)
}

type submission struct {
	Text *string `json:"text"`
	URL  *string `json:"url"`
}

type idOutput struct {
	ID string `json:"id"`
}

// submitAnalysis is POST /api/v1/analyses.
func (s *Server) submitAnalysis(c *fiber.Ctx) error {
	if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err != nil || mt != fiber.MIMEApplicationJSON {
		return apiErr(fiber.StatusUnsupportedMediaType, codeUnsupportedType, "send the submission as JSON with Content-Type: application/json")
	}
	var in submission
	if err := ingest.DecodeStrict(c.BodyRaw(), &in, ""); err != nil {
		return apiErr(fiber.StatusBadRequest, codeInvalidJSON, "the body must be a JSON object with \"text\" or \"url\": %s", err.Error())
	}
	switch {
	case in.Text != nil && in.URL != nil:
		return apiErr(fiber.StatusBadRequest, codeInputAmbiguous, "send either \"text\" or \"url\", not both")
	case in.Text == nil && in.URL == nil:
		return apiErr(fiber.StatusBadRequest, codeInputMissing, "send the text to check in \"text\", or a page address in \"url\"")
	}
	ctx := c.UserContext()
	caller, err := s.caller(c)
	if err != nil {
		return err
	}
	charge := func() error {
		if ok, secs := s.submitAllowed(c, caller); !ok {
			e := apiErr(fiber.StatusTooManyRequests, codeRateLimited, "too many submissions; retry in %d s (an instance API key raises the limit)", secs)
			e.retryAfter = secs
			return e
		}
		return nil
	}
	var input analyses.Input
	if in.Text != nil {
		text, err := analyses.NormalizeText(*in.Text)
		if err != nil {
			return err
		}
		input = analyses.Input{Kind: events.AnalysisInputText, Text: text}
	} else {
		u, err := analyses.ParseURL(*in.URL)
		if err != nil {
			return err
		}
		// Fetching is work done for the caller, whatever the page holds.
		if err := charge(); err != nil {
			return err
		}
		charge = func() error { return nil }
		page, err := s.analyses.Pages.Fetch(ctx, u)
		if err != nil {
			return err
		}
		input = analyses.Input{Kind: events.AnalysisInputURL, Text: page.Text, URL: page.URL, Title: page.Title}
	}
	source := events.AnalysisSourceAPI
	if strings.EqualFold(strings.TrimSpace(c.Get(HeaderClient)), ClientWorkbench) {
		source = events.AnalysisSourceWorkbench
	}
	id, existed, err := s.requestAnalysis(ctx, input, analyses.Requester{Source: source,
		RequesterKey: caller.ViewerKey, CorrelationID: caller.CorrelationID}, charge)
	if err != nil {
		return err
	}
	status := fiber.StatusAccepted
	if existed {
		status = fiber.StatusOK
	}
	c.Set(fiber.HeaderLocation, "/api/v1/analyses/"+id)
	return c.Status(status).JSON(idOutput{ID: id})
}

// requestAnalysis appends the request of in unless the serving projection
// knows its analysis already (existed). The append is idempotent anyway:
// a request of an existing analysis changes nothing. charge rations the
// caller's submissions: it is called before appending, and its error
// refuses the request. After appending it waits, bounded, until the
// projection has the request, so the job the caller reads next exists.
func (s *Server) requestAnalysis(ctx context.Context, in analyses.Input, who analyses.Requester, charge func() error) (id string, existed bool, err error) {
	id = s.analyses.Requests.ID(in)
	if _, err := s.analyses.Reader.Analysis(ctx, id); err == nil {
		return id, true, nil
	} else if !errors.Is(err, serving.ErrNotFound) {
		return "", false, err
	}
	if err := charge(); err != nil {
		return "", false, err
	}
	id, pos, err := s.analyses.Requests.Request(ctx, in, who)
	if err != nil {
		return "", false, err
	}
	if err := s.watermark.WaitFor(ctx, pos.Topic, pos.Partition, pos.Offset, s.cfg.ReadYourWritesTimeout); err != nil {
		s.log.Warn("analysis request: serving projection behind", "analysis_id", id, "err", err)
	}
	return id, false, nil
}

// analysisID reads the {id} route parameter: a canonical UUID.
func analysisID(c *fiber.Ctx) (string, error) {
	raw := c.Params("id")
	if _, err := uuid.Parse(raw); err != nil || len(raw) != 36 {
		return "", apiErr(fiber.StatusBadRequest, codeInvalidID, "the analysis id must be a UUID, as POST /api/v1/analyses returns it")
	}
	return strings.ToLower(raw), nil
}

// job reads an analysis, NOT_FOUND when unknown.
func (s *Server) job(ctx context.Context, id string) (serving.Analysis, error) {
	a, err := s.analyses.Reader.Analysis(ctx, id)
	if errors.Is(err, serving.ErrNotFound) {
		return serving.Analysis{}, apiErr(fiber.StatusNotFound, codeNotFound, "no analysis has this id")
	}
	return a, err
}

// getAnalysis is GET /api/v1/analyses/{id}: the job JSON.
func (s *Server) getAnalysis(c *fiber.Ctx) error {
	id, err := analysisID(c)
	if err != nil {
		return err
	}
	a, err := s.job(c.UserContext(), id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusOK).JSON(a)
}

// apiPrefix is the workbench API's path prefix: errors under it are
// rendered as {"error":{"code","message"}}, not as tRPC envelopes.
const apiPrefix = "/api/"

func (s *Server) analysisRoutes() {
	if s.cfg.RateLimit != nil {
		s.app.Use("/api/v1", s.limitREST)
	}
	s.app.Post("/api/v1/analyses", s.rest(s.submitAnalysis))
	s.app.Get("/api/v1/analyses/:id", s.rest(s.getAnalysis))
	s.app.Get("/api/v1/analyses/:id/events", s.rest(s.analysisEvents))
	s.app.Get("/api/v1/analyses/:id/report", s.rest(s.analysisReport))
	s.app.Post("/trpc/verdict.request", s.procedure("verdict.request", s.verdictRequest))
	s.app.Get("/trpc/verdict.get", s.procedure("verdict.get", s.verdictGet))
	s.workbenchRoutes()
}

// handleRESTError renders, for the workbench API, the errors raised before
// a handler runs (see handleFiberError).
func (s *Server) handleRESTError(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch {
		case fe.Code == fiber.StatusRequestEntityTooLarge:
			return writeAPIError(c, apiErr(fe.Code, codeBodyTooLarge, "the request body exceeds %d bytes", MaxBodyBytes))
		case fe.Code == fiber.StatusRequestHeaderFieldsTooLarge:
			return writeAPIError(c, apiErr(fe.Code, codeHeaderTooLarge, "the request line and headers exceed %d bytes", MaxHeaderBytes))
		case fe.Code == fiber.StatusNotFound:
			return writeAPIError(c, apiErr(fe.Code, codeNotFound, "no such resource"))
		case fe.Code == fiber.StatusMethodNotAllowed:
			return writeAPIError(c, apiErr(fe.Code, codeMethodNotAllowed, "method not allowed"))
		case fe.Code == fiber.StatusRequestTimeout:
			return writeAPIError(c, apiErr(fe.Code, codeTimeout, "the request was not received in time"))
		case fe.Code >= 400 && fe.Code < 500:
			return writeAPIError(c, apiErr(fiber.StatusBadRequest, codeInvalidRequest, "the request could not be read"))
		}
	}
	s.log.Error("unhandled error", "path", c.Path(), "err", err)
	return writeAPIError(c, apiErr(fiber.StatusInternalServerError, codeInternal, "internal error"))
}
