package api

import (
	"bytes"
	"errors"
	"log/slog"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/producers/apikeys"
	"github.com/errata-dev/errata/producers/ingest"
)

func TestRecordViewAndGetStatusVariants(t *testing.T) {
	const (
		notInvestigated       = `{"investigationState":"NOT_INVESTIGATED","priorInvestigationResult":null}`
		investigatingFallback = `{"investigationState":"INVESTIGATING","status":"PENDING","provenance":"CLIENT_FALLBACK",` +
			`"pendingClaims":[],"confirmedClaims":[],"priorInvestigationResult":null}`
	)
	body := mustRaw(t, map[string]any{"postVersionId": fixedRegistration.PostVersionID})
	for _, tc := range []struct {
		name     string
		status   string // the version's investigation status; "" for none
		verified bool
		want     string
		golden   string
	}{
		{"no investigation", "", false, notInvestigated, ""},
		{"no investigation, verified version", "", true, notInvestigated, ""},
		{"pending", "PENDING", false, investigatingFallback, "status_investigating.json"},
		{"pending, verified version", "PENDING", true, `{"investigationState":"INVESTIGATING","status":"PENDING","provenance":"SERVER_VERIFIED",` +
			`"pendingClaims":[],"confirmedClaims":[],"priorInvestigationResult":null}`, ""},
		{"processing", "PROCESSING", false, `{"investigationState":"INVESTIGATING","status":"PROCESSING","provenance":"CLIENT_FALLBACK",` +
			`"pendingClaims":[],"confirmedClaims":[],"priorInvestigationResult":null}`, "status_investigating_processing.json"},
		{"complete", "COMPLETE", false, `{"investigationState":"INVESTIGATED","provenance":"CLIENT_FALLBACK","claims":[]}`, "status_investigated.json"},
		{"complete, verified version", "COMPLETE", true, `{"investigationState":"INVESTIGATED","provenance":"SERVER_VERIFIED","claims":[]}`, ""},
		{"failed is never returned", "FAILED", false, notInvestigated, ""},
		{"failed, verified version", "FAILED", true, notInvestigated, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, fi, reader := newFakeServerWith(t, Config{})
			reader.setInvestigation(tc.status, tc.verified)
			r := post(t, s, "post.recordViewAndGetStatus", body)
			require.Equal(t, `{"result":{"data":`+tc.want+`}}`, string(r.body))
			if tc.golden != "" {
				golden(t, tc.golden, r.body)
			}
			require.Equal(t, []string{fixedRegistration.PostVersionID}, fi.views, "the view is recorded in every state")
		})
	}
}

func TestInstanceKeyAuthenticates(t *testing.T) {
	hasher := ingest.NewHasher("test-hash-secret-0123456789")
	ip := netip.MustParseAddr("0.0.0.0") // app.Test has no socket address
	anonymous := ingest.Caller{
		ViewerKey: hasher.AnonymousViewerKey(ip, "UA/1"), IPRangeKey: hasher.IPRangeKey(ip), CorrelationID: "req-1",
	}
	account := ingest.Caller{
		ViewerKey: hasher.AccountViewerKey(apikeys.Hash(testInstanceKey)), IPRangeKey: hasher.IPRangeKey(ip),
		Authenticated: true, CorrelationID: "req-1",
	}
	for _, tc := range []struct {
		name   string
		key    *string
		want   ingest.Caller
		lookup bool // whether the reader is asked
	}{
		{"no key", nil, anonymous, false},
		{"empty key", ptr(""), anonymous, false},
		{"valid key", ptr(testInstanceKey), account, true},
		{"valid key with surrounding whitespace", ptr("\t" + testInstanceKey + "  "), account, true},
		{"revoked key", ptr(revokedKey), anonymous, true},
		{"unknown key", ptr("erk_nope"), anonymous, true},
		{"the hash is not a key", ptr(apikeys.Hash(testInstanceKey)), anonymous, true},
	} {
		for _, procedure := range []string{"post.registerObservedVersion", "post.recordViewAndGetStatus"} {
			t.Run(procedure+"/"+tc.name, func(t *testing.T) {
				s, fi, reader := newFakeServerWith(t, Config{})
				reader.keys[apikeys.Hash(testInstanceKey)] = true
				reader.keys[apikeys.Hash(revokedKey)] = false
				headers := map[string]string{"User-Agent": "UA/1", "X-Request-Id": "req-1"}
				if tc.key != nil {
					headers[HeaderAPIKey] = *tc.key
				}
				body := mustRaw(t, map[string]any{"postVersionId": fixedRegistration.PostVersionID})
				if procedure == "post.registerObservedVersion" {
					body = validXBody(t, "Hello world")
				}
				r := do(t, s, request{path: "/trpc/" + procedure, body: body, headers: headers})
				resultOf(t, r)
				require.Equal(t, []ingest.Caller{tc.want}, fi.callers)
				if tc.lookup {
					require.Equal(t, 1, reader.keyLookups)
				} else {
					require.Zero(t, reader.keyLookups)
				}
			})
		}
	}
}

func TestKeyLookupFailureHidesTheKey(t *testing.T) {
	s, fi, reader := newFakeServerWith(t, Config{})
	var logs bytes.Buffer
	s.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reader.err = errors.New("postgres: connection refused")
	for _, req := range []request{
		{path: "/trpc/post.registerObservedVersion", body: validXBody(t, "Hello")},
		{method: "GET", path: "/trpc/post.validateSettings"},
	} {
		req.headers = map[string]string{HeaderAPIKey: testInstanceKey}
		r := do(t, s, req)
		expectError(t, r, "INTERNAL_SERVER_ERROR", req.path[len("/trpc/"):])
		msg, _, _ := errorEnvelopeOf(t, r)
		require.Equal(t, "internal error", msg)
	}
	require.Contains(t, logs.String(), "connection refused", "the failure itself is logged")
	require.NotContains(t, logs.String(), testInstanceKey)
	require.NotContains(t, logs.String(), apikeys.Hash(testInstanceKey))
	registers, views := fi.calls()
	require.Zero(t, registers+views, "nothing is appended under an unknown identity")
}
