package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/producers/ingest"
)

// validXBody is a registerObservedVersion body the real parser accepts.
func validXBody(t testing.TB, text string) []byte {
	return mustRaw(t, map[string]any{
		"platform":                 "X",
		"externalId":               "1790000000000000000",
		"url":                      "https://x.com/someuser/status/1790000000000000000",
		"observedImageUrls":        []any{},
		"observedImageOccurrences": []any{},
		"observedContentText":      text,
		"metadata": map[string]any{
			"authorHandle": "someuser", "authorDisplayName": nil, "text": text, "mediaUrls": []any{},
		},
	})
}

// oversizedBody is valid JSON of more than MaxBodyBytes.
func oversizedBody(t testing.TB) []byte {
	b := validXBody(t, strings.Repeat("a", MaxBodyBytes))
	require.Greater(t, len(b), MaxBodyBytes)
	return b
}

func TestGolden(t *testing.T) {
	s, _ := newFakeServer(t)
	for _, tc := range []struct {
		file   string
		req    request
		status int
	}{
		{"health.json", request{method: http.MethodGet, path: "/health", noVersion: true}, http.StatusOK},
		{"register_success.json", request{path: "/trpc/post.registerObservedVersion", body: validXBody(t, "Hello world")}, http.StatusOK},
		{"upgrade_required.json", request{path: "/trpc/post.registerObservedVersion", body: validXBody(t, "Hello world"), noVersion: true}, http.StatusPreconditionFailed},
		{"payload_too_large.json", request{path: "/trpc/post.registerObservedVersion", body: oversizedBody(t)}, http.StatusRequestEntityTooLarge},
		{"parse_error.json", request{path: "/trpc/post.registerObservedVersion", body: []byte(`{"platform":`)}, http.StatusBadRequest},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r := do(t, s, tc.req)
			require.Equal(t, tc.status, r.status, "body: %s", r.body)
			golden(t, tc.file, r.body)
		})
	}
}

func TestHealth(t *testing.T) {
	s, _ := newFakeServer(t)
	req, err := http.NewRequest(http.MethodGet, "/health", http.NoBody)
	require.NoError(t, err)
	resp, err := s.App().Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json"), resp.Header.Get("Content-Type"))
	var got map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Equal(t, map[string]any{"status": "ok", "minimumSupportedExtensionVersion": "0.2.0"}, got)
}

func TestRegisterObservedVersionOutputIsExact(t *testing.T) {
	s, fi := newFakeServer(t)
	r := post(t, s, "post.registerObservedVersion", validXBody(t, "Hello world"))
	var out map[string]any
	require.NoError(t, json.Unmarshal(resultOf(t, r), &out))
	require.Equal(t, map[string]any{
		"platform":      "X",
		"externalId":    fixedRegistration.ExternalID,
		"versionHash":   fixedRegistration.VersionHash,
		"postVersionId": fixedRegistration.PostVersionID,
		"provenance":    "CLIENT_FALLBACK",
	}, out)
	require.Len(t, fi.registers, 1)
	require.Equal(t, "X", fi.registers[0].Platform)
}

func TestErrorEnvelopes(t *testing.T) {
	const register, view = "post.registerObservedVersion", "post.recordViewAndGetStatus"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	// A decompression bomb: 4 MiB of JSON in a few KiB. The body limit
	// applies to the bytes on the wire, so the server must not inflate it.
	_, _ = zw.Write([]byte(`{"postVersionId":"` + fixedRegistration.PostVersionID + `"}` + strings.Repeat(" ", 4<<20)))
	require.NoError(t, zw.Close())

	for _, tc := range []struct {
		name    string
		req     request
		code    string
		path    string
		message string // substring
	}{
		{"malformed JSON", request{path: "/trpc/" + register, body: []byte(`{`)}, "PARSE_ERROR", register, "malformed JSON"},
		{"trailing garbage", request{path: "/trpc/" + register, body: append(validXBody(t, "x"), " x"...)}, "PARSE_ERROR", register, "trailing data"},
		{"empty body", request{path: "/trpc/" + register}, "PARSE_ERROR", register, "malformed JSON"},
		{"wrong type", request{path: "/trpc/" + register, body: []byte(`{"platform":1}`)}, "BAD_REQUEST", register, "platform"},
		{"unknown field", request{path: "/trpc/" + register, body: []byte(`{"platform":"X","nope":1}`)}, "BAD_REQUEST", register, `unknown field "nope"`},
		{"unknown platform", request{path: "/trpc/" + register, body: []byte(`{"platform":"MYSPACE","url":"https://myspace.com/a","metadata":{}}`)}, "BAD_REQUEST", register, "platform: must be one of"},
		{"JSON array", request{path: "/trpc/" + register, body: []byte(`[]`)}, "BAD_REQUEST", register, "expected"},
		{"oversized register", request{path: "/trpc/" + register, body: oversizedBody(t)}, "PAYLOAD_TOO_LARGE", register, "exceeds 524288 bytes"},
		{"oversized view", request{path: "/trpc/" + view, body: oversizedBody(t)}, "PAYLOAD_TOO_LARGE", view, "exceeds 524288 bytes"},
		{"view malformed JSON", request{path: "/trpc/" + view, body: []byte(`nope`)}, "PARSE_ERROR", view, "malformed JSON"},
		{"view non-UUID", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"abc"}`)}, "BAD_REQUEST", view, "postVersionId"},
		{"view braced UUID", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"{` + fixedRegistration.PostVersionID + `}"}`)}, "BAD_REQUEST", view, "postVersionId"},
		{"view missing id", request{path: "/trpc/" + view, body: []byte(`{}`)}, "BAD_REQUEST", view, "postVersionId"},
		{"view number id", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":1}`)}, "BAD_REQUEST", view, "postVersionId"},
		{"view unknown field", request{path: "/trpc/" + view, body: []byte(`{"postVersionId":"` + fixedRegistration.PostVersionID + `","x":1}`)}, "BAD_REQUEST", view, `unknown field "x"`},
		{"unknown procedure", request{path: "/trpc/post.nope", body: []byte(`{}`)}, "NOT_FOUND", "post.nope", "post.nope"},
		{"unknown procedure GET", request{method: http.MethodGet, path: "/trpc/post.nope"}, "NOT_FOUND", "post.nope", "post.nope"},
		{"mutation as GET", request{method: http.MethodGet, path: "/trpc/" + register}, "NOT_FOUND", register, register},
		{"gzip-encoded body is not inflated", request{path: "/trpc/" + view, body: gz.Bytes(), headers: map[string]string{"Content-Encoding": "gzip"}}, "PARSE_ERROR", view, "malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fi := newFakeServer(t)
			r := do(t, s, tc.req)
			expectError(t, r, tc.code, tc.path)
			msg, _, _ := errorEnvelopeOf(t, r)
			require.Contains(t, msg, tc.message)
			registers, views := fi.calls()
			require.Zero(t, registers+views, "a rejected request appends nothing")
		})
	}
}

func TestUnexpectedErrorsHideInternals(t *testing.T) {
	s, fi := newFakeServer(t)
	fi.err = errors.New("kafka: broker 10.0.0.7:9092 unreachable")
	r := post(t, s, "post.registerObservedVersion", validXBody(t, "Hello"))
	expectError(t, r, "INTERNAL_SERVER_ERROR", "post.registerObservedVersion")
	require.NotContains(t, string(r.body), "10.0.0.7")
	msg, _, _ := errorEnvelopeOf(t, r)
	require.Equal(t, "internal error", msg)

	// An input error found by the service is the caller's fault.
	fi.err = &ingest.InputError{Field: "observedImageOccurrences", Message: "offset too large"}
	r = post(t, s, "post.registerObservedVersion", validXBody(t, "Hello"))
	expectError(t, r, "BAD_REQUEST", "post.registerObservedVersion")
	msg, _, _ = errorEnvelopeOf(t, r)
	require.Equal(t, "observedImageOccurrences: offset too large", msg)
}

func TestRecordViewAndGetStatusOverFakes(t *testing.T) {
	s, fi := newFakeServer(t)
	const notInvestigated = `{"investigationState":"NOT_INVESTIGATED","priorInvestigationResult":null}`

	// A registered version: one view is recorded.
	r := post(t, s, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": fixedRegistration.PostVersionID}))
	require.JSONEq(t, notInvestigated, string(resultOf(t, r)))
	require.Equal(t, `{"result":{"data":`+notInvestigated+`}}`, string(r.body))
	require.Equal(t, []string{fixedRegistration.PostVersionID}, fi.views)

	// Uppercase is the same UUID.
	r = post(t, s, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": strings.ToUpper(fixedRegistration.PostVersionID)}))
	require.JSONEq(t, notInvestigated, string(resultOf(t, r)))

	// An unknown but well-formed id: nothing to count.
	fi.views = nil
	r = post(t, s, "post.recordViewAndGetStatus", mustRaw(t, map[string]any{"postVersionId": "00000000-0000-4000-8000-000000000000"}))
	require.JSONEq(t, notInvestigated, string(resultOf(t, r)))
	require.Empty(t, fi.views)
}

func TestCallerIdentity(t *testing.T) {
	hasher := ingest.NewHasher("test-hash-secret-0123456789")
	body := mustRaw(t, map[string]any{"postVersionId": fixedRegistration.PostVersionID})
	for _, tc := range []struct {
		name    string
		trusted string
		headers map[string]string
		ip      string
	}{
		{"socket address without a trusted header", "", map[string]string{"X-Forwarded-For": "1.2.3.4"}, "0.0.0.0"},
		{"last entry of the trusted header", "X-Forwarded-For", map[string]string{"X-Forwarded-For": "9.9.9.9, 1.2.3.4"}, "1.2.3.4"},
		{"unparsable trusted header falls back", "X-Forwarded-For", map[string]string{"X-Forwarded-For": "1.2.3.4, nonsense"}, "0.0.0.0"},
		{"IPv6 in the trusted header", "X-Real-Ip", map[string]string{"X-Real-Ip": "2001:db8::1"}, "2001:db8::1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fi := newFakeServer(t)
			s.cfg.TrustedProxyHeader = tc.trusted
			tc.headers["User-Agent"] = "UA/1"
			tc.headers["X-Request-Id"] = "req-123"
			r := do(t, s, request{path: "/trpc/post.recordViewAndGetStatus", body: body, headers: tc.headers})
			resultOf(t, r)
			require.Len(t, fi.callers, 1)
			ip := netip.MustParseAddr(tc.ip)
			require.Equal(t, ingest.Caller{
				ViewerKey:     hasher.AnonymousViewerKey(ip, "UA/1"),
				IPRangeKey:    hasher.IPRangeKey(ip),
				CorrelationID: "req-123",
			}, fi.callers[0])
		})
	}
}
