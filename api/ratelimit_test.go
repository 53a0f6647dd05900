package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/api/graphql"
	"github.com/errata-dev/errata/internal/ratelimit"
	"github.com/errata-dev/errata/projections/serving"
)

type limitedAnswer struct {
	status     int
	retryAfter string
	body       string
}

func call(t *testing.T, s *Server, method, path, from, body string) limitedAnswer {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderExtensionVersion, testExtensionVersion)
	if from != "" {
		req.Header.Set("X-Forwarded-For", "198.51.100.1, "+from)
	}
	resp, err := s.App().Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return limitedAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
}

// A client over its tRPC limit gets TOO_MANY_REQUESTS in the contract's
// envelope with Retry-After, and the call does nothing; other clients, an
// IPv6 client's other /64, and /health are not affected; the budget
// refills.
func TestProcedureRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	lim, err := ratelimit.New(ratelimit.Limit{PerSecond: 0.5, Burst: 3}, 100, func() time.Time { return now })
	require.NoError(t, err)
	s, fi, _ := newFakeServerWith(t, Config{RateLimit: lim, TrustedProxyHeader: "X-Forwarded-For"})
	view := `{"postVersionId":"` + fixedRegistration.PostVersionID + `"}`
	const path = "/trpc/post.recordViewAndGetStatus"

	for i := range 3 {
		a := call(t, s, http.MethodPost, path, "203.0.113.7", view)
		require.Equal(t, http.StatusOK, a.status, "call %d: %s", i, a.body)
	}
	a := call(t, s, http.MethodPost, path, "203.0.113.7", view)
	require.Equal(t, http.StatusTooManyRequests, a.status)
	require.Equal(t, "2", a.retryAfter, "one call at 0.5/s")
	require.JSONEq(t, `{"error":{"message":"too many requests from this network; retry in 2 s","code":-32029,
		"data":{"code":"TOO_MANY_REQUESTS","httpStatus":429,"path":"post.recordViewAndGetStatus","retryAfterSeconds":2}}}`, a.body)
	_, views := fi.calls()
	require.Equal(t, 3, views, "the refused call recorded nothing")
	// Queries share the client's budget.
	a = call(t, s, http.MethodGet, "/trpc/post.validateSettings", "203.0.113.7", "")
	require.Equal(t, http.StatusTooManyRequests, a.status, a.body)
	require.Contains(t, a.body, `"path":"post.validateSettings"`)

	require.Equal(t, http.StatusOK, call(t, s, http.MethodPost, path, "203.0.113.8", view).status, "another client")
	require.Equal(t, http.StatusOK, call(t, s, http.MethodGet, "/health", "203.0.113.7", "").status, "health is not limited")

	// IPv6: one /64 is one client.
	for i := range 3 {
		require.Equal(t, http.StatusOK, call(t, s, http.MethodPost, path, "2001:db8:1:2::"+string(rune('a'+i)), view).status)
	}
	require.Equal(t, http.StatusTooManyRequests, call(t, s, http.MethodPost, path, "2001:db8:1:2:ffff::1", view).status, "same /64")
	require.Equal(t, http.StatusOK, call(t, s, http.MethodPost, path, "2001:db8:1:3::1", view).status, "the next /64")

	now = now.Add(2 * time.Second)
	require.Equal(t, http.StatusOK, call(t, s, http.MethodPost, path, "203.0.113.7", view).status, "refilled")
	require.Equal(t, http.StatusTooManyRequests, call(t, s, http.MethodPost, path, "203.0.113.7", view).status)
}

// Without a limiter (ERRATA_RATE_LIMIT=off) nothing is refused.
func TestProcedureRateLimitOff(t *testing.T) {
	s, fi, _ := newFakeServerWith(t, Config{})
	view := `{"postVersionId":"` + fixedRegistration.PostVersionID + `"}`
	for range 50 {
		require.Equal(t, http.StatusOK, call(t, s, http.MethodPost, "/trpc/post.recordViewAndGetStatus", "", view).status)
	}
	_, views := fi.calls()
	require.Equal(t, 50, views)
}

// GraphQL mounted on the app as errata serve mounts it (fiber's adaptor)
// names its clients as the procedures do: the trusted proxy's last entry,
// else the socket address.
func TestGraphQLRateLimitThroughFiber(t *testing.T) {
	now := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	lim, err := ratelimit.New(ratelimit.Limit{PerSecond: 0.001, Burst: 25}, 100, clock)
	require.NoError(t, err)
	h := adaptor.HTTPHandler(graphql.NewHandler(graphql.NewResolver(graphql.Deps{Serving: noServing{}}),
		graphql.Options{RateLimit: lim, ClientKey: ClientKeyOfRequest("X-Forwarded-For"), Now: clock}))
	s, _, _ := newFakeServerWith(t, Config{})
	s.App().Post("/graphql", h)
	ask := func(from string) limitedAnswer {
		return call(t, s, http.MethodPost, "/graphql", from, `{"query":"{ __typename }"}`)
	}
	// 10 points a request, 1 for the operation's estimated cost, and a
	// point per millisecond it took (none on the stopped clock): exactly
	// two fit in the burst of 25, leaving 3.
	first := ask("203.0.113.7")
	require.Equal(t, http.StatusOK, first.status, first.body)
	second := ask("203.0.113.7")
	require.Equal(t, http.StatusOK, second.status, second.body)
	a := ask("203.0.113.7")
	require.Equal(t, http.StatusTooManyRequests, a.status, a.body)
	require.Equal(t, "7000", a.retryAfter, "7 points short at 0.001 a second")
	var body struct {
		Errors []struct {
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.body), &body), a.body)
	require.Equal(t, "RATE_LIMITED", body.Errors[0].Extensions["code"])
	require.Equal(t, http.StatusOK, ask("203.0.113.9").status, "another client behind the proxy")
	require.Equal(t, http.StatusOK, ask("").status, "the socket address without the header")
}

// noServing has nothing: the GraphQL resolvers' serving reader for tests
// that never reach it.
type noServing struct{}

func (noServing) PublicInvestigation(context.Context, string) (serving.PublicInvestigation, error) {
	return serving.PublicInvestigation{}, serving.ErrNotFound
}

func (noServing) PublicPostInvestigations(context.Context, string, string) (serving.PublicPost, []serving.PublicInvestigation, error) {
	return serving.PublicPost{}, nil, serving.ErrNotFound
}

func (noServing) ClaimsOfInvestigations(context.Context, []string) (map[string][]serving.Claim, error) {
	return map[string][]serving.Claim{}, nil
}

func (noServing) AuthorsOfPosts(context.Context, []string) (map[string]serving.PublicAuthor, error) {
	return map[string]serving.PublicAuthor{}, nil
}

func (noServing) AssessmentsOfClaims(context.Context, []string) (map[string]serving.Assessment, error) {
	return map[string]serving.Assessment{}, nil
}

func TestClientAddr(t *testing.T) {
	socket := netip.MustParseAddr("192.0.2.1")
	hdr := func(v string) func(string) string { return func(string) string { return v } }
	require.Equal(t, socket, ClientAddr("", hdr("1.2.3.4"), socket), "no trusted header")
	require.Equal(t, netip.MustParseAddr("1.2.3.4"), ClientAddr("X-Forwarded-For", hdr("9.9.9.9, 1.2.3.4"), socket))
	require.Equal(t, socket, ClientAddr("X-Forwarded-For", hdr("1.2.3.4, nonsense"), socket))
	require.Equal(t, socket, ClientAddr("X-Forwarded-For", hdr(""), socket))

	key := ClientKeyOfRequest("X-Real-Ip")
	req := httptest.NewRequest(http.MethodPost, "/graphql", http.NoBody)
	req.RemoteAddr = "[2001:db8::7]:4242"
	require.Equal(t, "2001:db8::/64", key(req))
	req.Header.Set("X-Real-Ip", "203.0.113.5")
	require.Equal(t, "203.0.113.5", key(req))
	req.RemoteAddr = "garbage"
	req.Header.Del("X-Real-Ip")
	require.Equal(t, "0.0.0.0", key(req))
}
