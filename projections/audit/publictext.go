package audit

import (
	"encoding/json"
	"regexp"
	"slices"
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
	return classify(reason, imageRules, ReasonDownloadFailed)
}

// imageRules classify consumers/investigator/images' skip reasons.
var imageRules = []rule{
	{affix("limit of ", " images reached"), ReasonLimitReached, nil},
	{equals("duplicate URL"), ReasonDuplicate, nil},
	{affix("same image as ", ""), ReasonDuplicate, nil},
	{equals("canceled"), ReasonCanceled, nil},
	{affix("could not store the image: ", ""), ReasonStorageError, nil},
	{affix("larger than ", " bytes"), ReasonTooLarge, nil},
	{equals("download timed out"), ReasonTimeout, nil},
	{affix("HTTP status ", ""), ReasonHTTPError, nil},
	{equals("empty response"), ReasonEmptyResponse, nil},
	{equals("not a JPEG, PNG, GIF or WebP image"), ReasonUnsupportedType, nil},
	{affix("download failed: ", ""), ReasonDownloadFailed, transportRules},
}

// transportRules classify the text of an internal/httpsafe request error
// by the failures it names.
var transportRules = []rule{
	{contains(httpsafe.ErrBlockedAddress.Error(), httpsafe.ErrBlockedPort.Error()), ReasonBlockedAddress, nil},
	{contains(httpsafe.ErrBlockedScheme.Error(), httpsafe.ErrInvalidURL.Error()), ReasonInvalidURL, nil},
	{contains(httpsafe.ErrTooManyRedirects.Error()), ReasonTooManyRedirects, nil},
	{contains(httpsafe.ErrTooLarge.Error()), ReasonTooLarge, nil},
	{contains(httpsafe.ErrTimeout.Error(), "context deadline exceeded", "i/o timeout"), ReasonTimeout, nil},
	// httpsafe's resolver errors ("resolve HOST: lookup HOST on
	// RESOLVER: no such host", "resolve HOST: no addresses"); a URL cannot
	// hold these words with their spaces.
	{contains(": resolve ", "lookup "), ReasonDNSFailure, nil},
	{contains("x509: ", "tls: "), ReasonTLSError, nil},
	{contains("dial tcp", "connection refused", "connection reset", "EOF", "no route to host"), ReasonConnectionFailed, nil},
}

// PublicSourceFetchError is the public category of why server verification
// could not fetch a post's source (PostVersion.ServerFetchError); "" stays "".
func PublicSourceFetchError(text string) string {
	if text == "" {
		return ""
	}
	return classify(text, sourceFetchRules, ReasonFetchFailed)
}

// sourceFetchRules classify the texts of producers/ingest/canonical's
// errors and of the fixed reasons producers/ingest writes
// (publictext_test.go checks them against the sources), then transport
// failures.
var sourceFetchRules = slices.Concat([]rule{
	{equals("X posts cannot be verified server-side"), ReasonNotVerifiable, nil},
	{contains("platform content cannot be verified server-side"), ReasonNotVerifiable, nil},
	{equals("server verification is disabled on this instance"), ReasonVerificationOff, nil},
	{equals("the platform's canonical content normalizes to empty text"), ReasonNoContent, nil},
	{contains("platform returned no content"), ReasonNoContent, nil},
	{contains("post not found on platform"), ReasonNotFound, nil},
	{contains("post is not publicly readable"), ReasonPaywalled, nil},
	{contains("platform served a different revision"), ReasonRevisionMismatch, nil},
	{contains("platform returned an error status"), ReasonHTTPError, nil},
	{contains("unexpected platform response"), ReasonBadResponse, nil},
	{contains("invalid canonical fetch request"), ReasonInvalidRequest, nil},
}, transportRules)

// searchFailedPrefix starts the web_search tool's error output
// (consumers/investigator: {"error":"search failed: ..."}).
const searchFailedPrefix = "search failed: "

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
	return classify(text, searchRules, ReasonSearchFailed)
}

// searchRules classify the texts of consumers/websearch's error kinds,
// then transport failures; a provider that is unavailable for another
// reason last.
var searchRules = slices.Concat([]rule{
	{contains("search: provider refused the credentials"), ReasonUnauthorized, nil},
	{contains("search: rate limited"), ReasonRateLimited, nil},
	{contains("search: request refused"), ReasonRefused, nil},
	{contains("search: malformed response"), ReasonBadResponse, nil},
	{contains("search: invalid query"), ReasonInvalidQuery, nil},
}, transportRules, []rule{
	{contains("search: provider unavailable"), ReasonUnavailable, nil},
})

// publicFailureMessages are the public sentences of failure kinds: the
// model provider's (consumers/llm Kind) and the investigator's own. Their
// recorded messages quote transport errors (the provider's or a store's
// address), provider texts (account and organization ids) or store errors.
var publicFailureMessages = map[string]string{ //nolint:gosec // G101: public sentences naming failure kinds, no credential in them
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

// PublicStanceNote is the public category of a stance note; "" stays "".
// The notes repeat what the model answered or refused with, and provider
// texts, which the public trail shows only as categories.
func PublicStanceNote(note string) string {
	if note == "" {
		return ""
	}
	return classify(note, stanceNoteRules, StanceNotJudged)
}

// stanceNoteRules classify the texts of the stance notes
// (consumers/evidence/stance's notes and the assessors';
// publictext_test.go checks them).
var stanceNoteRules = []rule{
	{equals("empty passage"), StanceEmptyPassage, nil},
	{equals("empty claim"), StanceEmptyClaim, nil},
	{affix("stance answer broke the schema ", ""), StanceInvalidAnswer, nil},
	{affix("unusable stance: ", ""), StanceInvalidAnswer, nil},
}

// rule gives a text that matches it a public category. With then, a
// matching text is classified further by those rules, and reason is the
// category when none of them matches.
type rule struct {
	match  func(string) bool
	reason string
	then   []rule
}

// classify is the category of the first rule text matches; fallback when
// none does.
func classify(text string, rules []rule, fallback string) string {
	for _, r := range rules {
		if !r.match(text) {
			continue
		}
		if r.then != nil {
			return classify(text, r.then, r.reason)
		}
		return r.reason
	}
	return fallback
}

// equals matches the text s.
func equals(s string) func(string) bool { return func(t string) bool { return t == s } }

// affix matches a text that starts with prefix and ends with suffix.
func affix(prefix, suffix string) func(string) bool {
	return func(t string) bool { return strings.HasPrefix(t, prefix) && strings.HasSuffix(t, suffix) }
}

// contains matches a text holding any of subs.
func contains(subs ...string) func(string) bool {
	return func(t string) bool {
		for _, s := range subs {
			if strings.Contains(t, s) {
				return true
			}
		}
		return false
	}
}
