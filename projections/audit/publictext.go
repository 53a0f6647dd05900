package audit

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/errata-dev/errata/internal/httpsafe"
)

// The public trail replaces the free text of failures with public
// categories and sentences. That text comes from the worker's and the
// API's network (image downloads, source verification, web search, the
// model provider, the stores) and can name what the public must not learn:
// the DNS resolver's address, refused private addresses, internal hosts
// and ports, store endpoints. The operator's trail (`errata audit`) keeps
// every word. Texts are classified by what their producers write
// (consumers/investigator/images, internal/httpsafe,
// producers/ingest/canonical, consumers/websearch, consumers/llm, the
// investigator's attempt errors; publictext_test.go feeds it their real
// output), so events already in the log are classified too.

// Public categories of why an image of the post is not in the input, and
// of why the server could not fetch a source.
const (
	ReasonLimitReached     = "limit_reached"
	ReasonDuplicate        = "duplicate"
	ReasonCanceled         = "canceled"
	ReasonStorageError     = "storage_error"
	ReasonTooLarge         = "too_large"
	ReasonTimeout          = "timeout"
	ReasonHTTPError        = "http_error"
	ReasonEmptyResponse    = "empty_response"
	ReasonUnsupportedType  = "unsupported_type"
	ReasonBlockedAddress   = "blocked_address"
	ReasonInvalidURL       = "invalid_url"
	ReasonTooManyRedirects = "too_many_redirects"
	ReasonDNSFailure       = "dns_failure"
	ReasonTLSError         = "tls_error"
	ReasonConnectionFailed = "connection_failed"
	ReasonDownloadFailed   = "download_failed"
	ReasonNotVerifiable    = "not_verifiable"
	ReasonVerificationOff  = "verification_disabled"
	ReasonNotFound         = "not_found"
	ReasonPaywalled        = "paywalled"
	ReasonNoContent        = "no_content"
	ReasonRevisionMismatch = "revision_mismatch"
	ReasonBadResponse      = "bad_response"
	ReasonInvalidRequest   = "invalid_request"
	ReasonFetchFailed      = "fetch_failed"
	ReasonRateLimited      = "rate_limited"
	ReasonUnauthorized     = "unauthorized"
	ReasonUnavailable      = "unavailable"
	ReasonRefused          = "refused"
	ReasonInvalidQuery     = "invalid_query"
	ReasonSearchFailed     = "search_failed"
)

// publicFailureUnknownMsg stands for a failure of a kind no table knows.
const publicFailureUnknownMsg = "the attempt failed (the operator's audit trail has the details)"

// PublicImageReason is the public category of an image skip reason
// (consumers/investigator/images.Skipped.Reason).
func PublicImageReason(reason string) string {
	switch {
	case strings.HasPrefix(reason, "limit of ") && strings.HasSuffix(reason, " images reached"):
		return ReasonLimitReached
	case reason == "duplicate URL", strings.HasPrefix(reason, "same image as "):
		return ReasonDuplicate
	case reason == "canceled":
		return ReasonCanceled
	case strings.HasPrefix(reason, "could not store the image: "):
		return ReasonStorageError
	case strings.HasPrefix(reason, "larger than ") && strings.HasSuffix(reason, " bytes"):
		return ReasonTooLarge
	case reason == "download timed out":
		return ReasonTimeout
	case strings.HasPrefix(reason, "HTTP status "):
		return ReasonHTTPError
	case reason == "empty response":
		return ReasonEmptyResponse
	case reason == "not a JPEG, PNG, GIF or WebP image":
		return ReasonUnsupportedType
	case strings.HasPrefix(reason, "download failed: "):
		if c := transportReason(reason); c != "" {
			return c
		}
	}
	return ReasonDownloadFailed
}

// transportReason classifies the text of an internal/httpsafe request
// error; "" when it names none of its failures.
func transportReason(text string) string {
	has := func(err error) bool { return strings.Contains(text, err.Error()) }
	switch {
	case has(httpsafe.ErrBlockedAddress), has(httpsafe.ErrBlockedPort):
		return ReasonBlockedAddress
	case has(httpsafe.ErrBlockedScheme), has(httpsafe.ErrInvalidURL):
		return ReasonInvalidURL
	case has(httpsafe.ErrTooManyRedirects):
		return ReasonTooManyRedirects
	case has(httpsafe.ErrTooLarge):
		return ReasonTooLarge
	case has(httpsafe.ErrTimeout), strings.Contains(text, "context deadline exceeded"), strings.Contains(text, "i/o timeout"):
		return ReasonTimeout
	// httpsafe's resolver errors ("resolve HOST: lookup HOST on
	// RESOLVER: no such host", "resolve HOST: no addresses"); a URL cannot
	// hold these words with their spaces.
	case strings.Contains(text, ": resolve "), strings.Contains(text, "lookup "):
		return ReasonDNSFailure
	case strings.Contains(text, "x509: "), strings.Contains(text, "tls: "):
		return ReasonTLSError
	case strings.Contains(text, "dial tcp"), strings.Contains(text, "connection refused"),
		strings.Contains(text, "connection reset"), strings.Contains(text, "EOF"), strings.Contains(text, "no route to host"):
		return ReasonConnectionFailed
	}
	return ""
}

// Texts of producers/ingest/canonical's errors and of the fixed reasons
// producers/ingest writes (publictext_test.go checks them against the
// sources).
const (
	canonicalNotVerifiable    = "platform content cannot be verified server-side"
	canonicalInvalidRequest   = "invalid canonical fetch request"
	canonicalNotFound         = "post not found on platform"
	canonicalPaywalled        = "post is not publicly readable"
	canonicalNoContent        = "platform returned no content"
	canonicalRevisionMismatch = "platform served a different revision"
	canonicalBadResponse      = "unexpected platform response"
	canonicalUpstreamStatus   = "platform returned an error status"
	ingestXNotVerifiable      = "X posts cannot be verified server-side"
	ingestVerificationOff     = "server verification is disabled on this instance"
	ingestEmptyCanonical      = "the platform's canonical content normalizes to empty text"
)

// PublicSourceFetchError is the public category of why server verification
// could not fetch a post's source (PostVersion.ServerFetchError); "" stays "".
func PublicSourceFetchError(text string) string {
	switch {
	case text == "":
		return ""
	case text == ingestXNotVerifiable, strings.Contains(text, canonicalNotVerifiable):
		return ReasonNotVerifiable
	case text == ingestVerificationOff:
		return ReasonVerificationOff
	case text == ingestEmptyCanonical, strings.Contains(text, canonicalNoContent):
		return ReasonNoContent
	case strings.Contains(text, canonicalNotFound):
		return ReasonNotFound
	case strings.Contains(text, canonicalPaywalled):
		return ReasonPaywalled
	case strings.Contains(text, canonicalRevisionMismatch):
		return ReasonRevisionMismatch
	case strings.Contains(text, canonicalUpstreamStatus):
		return ReasonHTTPError
	case strings.Contains(text, canonicalBadResponse):
		return ReasonBadResponse
	case strings.Contains(text, canonicalInvalidRequest):
		return ReasonInvalidRequest
	}
	if c := transportReason(text); c != "" {
		return c
	}
	return ReasonFetchFailed
}

// searchFailedPrefix starts the web_search tool's error output
// (consumers/investigator: {"error":"search failed: ..."}).
const searchFailedPrefix = "search failed: "

// Texts of consumers/websearch's error kinds.
const (
	searchUnauthorized = "search: provider refused the credentials"
	searchRateLimited  = "search: rate limited"
	searchUnavailable  = "search: provider unavailable"
	searchBadRequest   = "search: request refused"
	searchBadResponse  = "search: malformed response"
	searchInvalidQuery = "search: invalid query"
)

// publicToolOutput is a tool result as the public trail shows it: the
// web_search tool's error, which quotes the search provider's error (an
// internal SearXNG's host, the resolver), becomes "search failed:
// <category>". Every other output is the tool's own public text (fetch_url
// describes failures without addresses) and stays.
func publicToolOutput(name, output string) string {
	if name != "web_search" {
		return output
	}
	var out struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(output), &out) != nil || !strings.HasPrefix(out.Error, searchFailedPrefix) {
		return output
	}
	b, err := json.Marshal(map[string]string{"error": searchFailedPrefix + publicSearchError(out.Error)})
	if err != nil {
		return output
	}
	return string(b)
}

func publicSearchError(text string) string {
	switch {
	case strings.Contains(text, searchUnauthorized):
		return ReasonUnauthorized
	case strings.Contains(text, searchRateLimited):
		return ReasonRateLimited
	case strings.Contains(text, searchBadRequest):
		return ReasonRefused
	case strings.Contains(text, searchBadResponse):
		return ReasonBadResponse
	case strings.Contains(text, searchInvalidQuery):
		return ReasonInvalidQuery
	}
	if c := transportReason(text); c != "" {
		return c
	}
	if strings.Contains(text, searchUnavailable) {
		return ReasonUnavailable
	}
	return ReasonSearchFailed
}

// publicFailureMessages are the public sentences of failure kinds: the
// model provider's (consumers/llm Kind) and the investigator's own. Their
// recorded messages quote transport errors (the provider's or a store's
// address), provider texts (account and organization ids) or store errors.
var publicFailureMessages = map[string]string{
	"rate_limited":           "the model provider asked to slow down",
	"quota_exceeded":         "the model provider's quota for this instance is exhausted",
	"server_error":           "the model provider failed",
	"timeout":                "no answer in time",
	"network":                "the model provider could not be reached",
	"canceled":               "the request was canceled",
	"conflict":               "the model provider reported a conflict",
	"incomplete":             "the model's answer was incomplete",
	"truncated":              "the model provider's answer was cut off",
	"invalid_response":       "the model provider's answer could not be read",
	"failed":                 "the model provider reported the response as failed",
	"bad_request":            "the model provider refused the request",
	"unauthorized":           "the model provider refused the credentials",
	"forbidden":              "the model provider refused access",
	"not_found":              "the model provider does not know the model or endpoint",
	"unprocessable":          "the model provider could not process the request",
	"client_error":           "the model provider refused the request",
	"refusal":                "the model refused",
	"invalid_tool_arguments": "the model called a tool with invalid arguments",
	"invalid_output":         "the model's structured answer broke its schema",
	"invalid_request":        "the request was refused before it was sent",
	"image_store":            "the image store failed",
	"prompt":                 "the prompt could not be rendered",
	"input":                  "the input could not be prepared",
	"round_cap":              "the model kept calling tools after the round cap",
	"version_unknown":        "the post version was not in the serving projection yet",
	"worker_lost":            "the worker running this attempt stopped before it finished",
	"user_key_unavailable":   "the investigation was requested with the user's OpenAI key, but the worker had no key store",
	"user_key_expired":       "the user's OpenAI key for this investigation expired before it could run",
	"no_credentials":         "no OpenAI key: the instance has none configured and the request carried no user key",
	"key_store":              "the key store failed",
	"internal":               "an internal error",
}

// PublicFailureMessage is the public sentence of a failure of kind.
func PublicFailureMessage(kind string) string {
	if m, ok := publicFailureMessages[kind]; ok {
		return m
	}
	return publicFailureUnknownMsg
}

// failureReasonRE parses an investigation.failed reason: "KIND: MESSAGE",
// or "gave up after N attempts; last failure KIND: MESSAGE".
var failureReasonRE = regexp.MustCompile(`^(gave up after [0-9]+ attempts; last failure )?([a-z][a-z0-9_]*): `)

// PublicFailureReason is an investigation.failed reason with its message
// replaced by the kind's public sentence.
func PublicFailureReason(reason string) string {
	m := failureReasonRE.FindStringSubmatch(reason)
	if m == nil {
		return publicFailureUnknownMsg
	}
	return m[1] + m[2] + ": " + PublicFailureMessage(m[2])
}

// PublicQueryError is the public category of why a query of our own
// search failed (an assessment's query error quotes consumers/websearch's
// error, which can name an internal search provider's host or the
// resolver): the categories of the web_search tool's errors; "" stays "".
func PublicQueryError(text string) string {
	if text == "" {
		return ""
	}
	return publicSearchError(text)
}

// Public categories of why a passage's stance is the neutral default.
const (
	StanceEmptyPassage  = "empty_passage"
	StanceEmptyClaim    = "empty_claim"
	StanceInvalidAnswer = "invalid_answer"
	StanceNotJudged     = "not_judged"
)

// Texts of the stance notes (consumers/evidence/stance's notes and the
// investigator's assessor; publictext_test.go checks them).
const (
	stanceNoteEmptyPassage = "empty passage"
	stanceNoteEmptyClaim   = "empty claim"
	stanceNoteBrokeSchema  = "stance answer broke the schema "
	stanceNoteUnusable     = "unusable stance: "
)

// PublicStanceNote is the public category of a stance note; "" stays "".
// The notes repeat what the model answered or refused with, and provider
// texts, which the public trail shows only as categories.
func PublicStanceNote(note string) string {
	switch {
	case note == "":
		return ""
	case note == stanceNoteEmptyPassage:
		return StanceEmptyPassage
	case note == stanceNoteEmptyClaim:
		return StanceEmptyClaim
	case strings.HasPrefix(note, stanceNoteBrokeSchema), strings.HasPrefix(note, stanceNoteUnusable):
		return StanceInvalidAnswer
	}
	return StanceNotJudged
}
