package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/producers"
	"github.com/errata-dev/errata/producers/appeals"
)

// appealLog is the log and the serving projection of appeals at once:
// an appended appeal.filed is OPEN at once (a caught-up projection).
type appealLog struct {
	mu      sync.Mutex
	reg     *events.Registry
	claims  map[string]appeals.Claim
	filed   []events.Event
	appeals map[string]appeals.Appeal
	keys    map[string]string // appeal id -> requester key
	fail    error
}

func newAppealLog() *appealLog {
	return &appealLog{reg: events.NewCatalogRegistry(), claims: map[string]appeals.Claim{},
		appeals: map[string]appeals.Appeal{}, keys: map[string]string{}}
}

func (l *appealLog) NewEventWithID(p events.Payload, id string, at time.Time, corr, cause string) (events.Event, error) {
	return l.reg.New(p, events.Meta{ID: id, Time: at, CorrelationID: corr, CausationID: cause})
}

func (l *appealLog) Append(_ context.Context, evs ...events.Event) ([]producers.Position, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return nil, l.fail
	}
	var out []producers.Position
	for _, ev := range evs {
		l.filed = append(l.filed, ev)
		p := ev.Payload.(*events.AppealFiledV1)
		l.appeals[p.AppealID] = appeals.Appeal{ID: p.AppealID, ClaimID: p.ClaimID, InvestigationID: p.InvestigationID,
			PostVersionID: p.PostVersionID, Role: p.Role, Reason: p.Reason, URLs: p.URLs, Status: appeals.StatusOpen,
			FiledAt: ev.Time}
		l.keys[p.AppealID] = p.RequesterKey
		out = append(out, producers.Position{Topic: "investigations", Offset: int64(len(l.filed))})
	}
	return out, nil
}

func (l *appealLog) PublishedClaim(_ context.Context, id string) (appeals.Claim, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.claims[id]
	if !ok {
		return appeals.Claim{}, appeals.ErrNotFound
	}
	return c, nil
}

func (l *appealLog) Appeal(_ context.Context, id string) (appeals.Appeal, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.appeals[id]
	if !ok {
		return appeals.Appeal{}, appeals.ErrNotFound
	}
	return a, nil
}

func (l *appealLog) AppealsOfClaim(_ context.Context, claimID string) ([]appeals.Appeal, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []appeals.Appeal{}
	for _, ev := range l.filed {
		if a := l.appeals[ev.Subject]; a.ClaimID == claimID {
			out = append(out, a)
		}
	}
	return out, nil
}

func (l *appealLog) AppealCounts(_ context.Context, claimID, key string, since time.Time) (open, mine int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, a := range l.appeals {
		if a.ClaimID == claimID && a.Status == appeals.StatusOpen {
			open++
		}
		if l.keys[id] == key && !a.FiledAt.Before(since) {
			mine++
		}
	}
	return open, mine, nil
}

func (l *appealLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.filed)
}

// fakeResolver resolves names from a map; any other name does not resolve.
type fakeResolver map[string][]netip.Addr

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

var appealResolver = fakeResolver{
	"example.org":          {netip.MustParseAddr("93.184.215.14")},
	"www.census.gov":       {netip.MustParseAddr("23.33.44.55")},
	"evil.example":         {netip.MustParseAddr("127.0.0.1")},
	"rebind.example":       {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("10.0.0.7")},
	"metadata.example":     {netip.MustParseAddr("169.254.169.254")},
	"v6loop.example":       {netip.MustParseAddr("::1")},
	"mapped.example":       {netip.MustParseAddr("::ffff:192.168.1.1")},
	"another.example.org":  {netip.MustParseAddr("93.184.215.15")},
	"third.example.org":    {netip.MustParseAddr("93.184.215.16")},
	"fourth.example.org":   {netip.MustParseAddr("93.184.215.17")},
	"fifth.example.org":    {netip.MustParseAddr("93.184.215.18")},
	"sixth.example.org":    {netip.MustParseAddr("93.184.215.19")},
	"a-very-long.example":  {netip.MustParseAddr("93.184.215.20")},
	"publicv6.example.org": {netip.MustParseAddr("2606:2800:220:1::1")},
}

const (
	testClaim      = "7d2a6f0e-3b1c-5e4d-9f8a-1b2c3d4e5f60"
	retractedClaim = "7d2a6f0e-3b1c-5e4d-9f8a-1b2c3d4e5f61"
	hiddenClaim    = "7d2a6f0e-3b1c-5e4d-9f8a-1b2c3d4e5f62"
	testReason     = "The cited table says 41%, not 14%; the claim misreads it."
)

func newAppealServer(t *testing.T, limits appeals.Limits) (*Server, *appealLog) {
	t.Helper()
	s, _, _ := newFakeServerWith(t, Config{})
	l := newAppealLog()
	inv := "8e3b7f1a-4c2d-5f6e-8a9b-2c3d4e5f6a70"
	pv := "9f4c8a2b-5d3e-5a7f-9bac-3d4e5f6a7b80"
	post := "5d0f3a9e-1111-5222-8333-444455556666"
	l.claims[testClaim] = appeals.Claim{ClaimID: testClaim, InvestigationID: inv, PostID: post, PostVersionID: pv, Visible: true}
	l.claims[retractedClaim] = appeals.Claim{ClaimID: retractedClaim, InvestigationID: inv, PostID: post, PostVersionID: pv,
		Visible: true, Retracted: true}
	l.claims[hiddenClaim] = appeals.Claim{ClaimID: hiddenClaim, InvestigationID: inv, PostID: post, PostVersionID: pv}
	svc := appeals.New(l, l, appealResolver, limits, nil)
	s, err := New(s.cfg, s.ingest, s.reader, s.watermark, s.hasher, s.log, WithAppeals(svc, l))
	require.NoError(t, err)
	return s, l
}

func fileBody(t *testing.T, claim, role, reason string, urls []string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"claimId": claim, "role": role, "reason": reason, "urls": urls})
	require.NoError(t, err)
	return b
}

func fileAppeal(t *testing.T, s *Server, body []byte, headers map[string]string) response {
	t.Helper()
	return do(t, s, request{path: "/trpc/appeal.file", body: body, headers: headers})
}

func TestAppealFileRefusesHostileInput(t *testing.T) {
	s, l := newAppealServer(t, appeals.Limits{PerDay: 10, OpenPerClaim: 3})
	many := []string{"https://example.org/1", "https://example.org/2", "https://example.org/3", "https://example.org/4",
		"https://example.org/5", "https://example.org/6"}
	cases := []struct {
		name string
		body []byte
		code string
		msg  string
	}{
		{"not JSON", []byte(`{"claimId":`), "PARSE_ERROR", ""},
		{"unknown field", []byte(`{"claimId":"` + testClaim + `","role":"READER","reason":"` + testReason + `","urls":[],"admin":true}`), "BAD_REQUEST", ""},
		{"non-UUID claim", fileBody(t, "claim-1", "READER", testReason, nil), "BAD_REQUEST", "claimId"},
		{"SQL in the claim id", fileBody(t, "' OR 1=1 --", "READER", testReason, nil), "BAD_REQUEST", "claimId"},
		{"unknown role", fileBody(t, testClaim, "ADMIN", testReason, nil), "BAD_REQUEST", "role"},
		{"short reason", fileBody(t, testClaim, "READER", "wrong", nil), "BAD_REQUEST", "reason"},
		{"10 kB reason", fileBody(t, testClaim, "READER", strings.Repeat("wrong! ", 1500), nil), "BAD_REQUEST", "reason"},
		{"NUL in the reason", fileBody(t, testClaim, "READER", "this is wrong\x00 because", nil), "BAD_REQUEST", "reason"},
		{"escape sequence in the reason", fileBody(t, testClaim, "READER", "this is \x1b[2Jwrong because", nil), "BAD_REQUEST", "reason"},
		{"DEL in the reason", fileBody(t, testClaim, "READER", "this is wrong\x7f because", nil), "BAD_REQUEST", "reason"},
		{"loopback URL", fileBody(t, testClaim, "READER", testReason, []string{"http://127.0.0.1/admin"}), "BAD_REQUEST", "urls"},
		{"private URL", fileBody(t, testClaim, "READER", testReason, []string{"http://10.1.2.3/"}), "BAD_REQUEST", "urls"},
		{"metadata URL", fileBody(t, testClaim, "READER", testReason, []string{"http://169.254.169.254/latest/meta-data/"}), "BAD_REQUEST", "urls"},
		{"IPv6 loopback URL", fileBody(t, testClaim, "READER", testReason, []string{"http://[::1]/"}), "BAD_REQUEST", "urls"},
		{"IPv4-mapped loopback URL", fileBody(t, testClaim, "READER", testReason, []string{"http://[::ffff:127.0.0.1]/"}), "BAD_REQUEST", "urls"},
		{"CGNAT URL (not syntactically private)", fileBody(t, testClaim, "READER", testReason, []string{"http://100.64.0.1/"}), "BAD_REQUEST", "urls"},
		{"localhost", fileBody(t, testClaim, "READER", testReason, []string{"http://localhost/"}), "BAD_REQUEST", "urls"},
		{"name resolving to loopback", fileBody(t, testClaim, "READER", testReason, []string{"https://evil.example/"}), "BAD_REQUEST", "urls"},
		{"name resolving to metadata", fileBody(t, testClaim, "READER", testReason, []string{"https://metadata.example/"}), "BAD_REQUEST", "urls"},
		{"name resolving to ::1", fileBody(t, testClaim, "READER", testReason, []string{"https://v6loop.example/"}), "BAD_REQUEST", "urls"},
		{"name resolving to a mapped private address", fileBody(t, testClaim, "READER", testReason, []string{"https://mapped.example/"}), "BAD_REQUEST", "urls"},
		{"name with one private address among public ones", fileBody(t, testClaim, "READER", testReason, []string{"https://rebind.example/"}), "BAD_REQUEST", "urls"},
		{"name that does not resolve", fileBody(t, testClaim, "READER", testReason, []string{"https://nowhere.example/"}), "BAD_REQUEST", "urls"},
		{"credentials", fileBody(t, testClaim, "READER", testReason, []string{"https://user:pw@example.org/"}), "BAD_REQUEST", "urls"},
		{"file scheme", fileBody(t, testClaim, "READER", testReason, []string{"file:///etc/passwd"}), "BAD_REQUEST", "urls"},
		{"javascript scheme", fileBody(t, testClaim, "READER", testReason, []string{"javascript:alert(1)"}), "BAD_REQUEST", "urls"},
		{"another port", fileBody(t, testClaim, "READER", testReason, []string{"https://example.org:6379/"}), "BAD_REQUEST", "urls"},
		{"six URLs", fileBody(t, testClaim, "READER", testReason, many), "BAD_REQUEST", "urls"},
		{"repeated URL", fileBody(t, testClaim, "READER", testReason, []string{"https://example.org/", "https://example.org/"}), "BAD_REQUEST", "urls"},
		{"unknown claim", fileBody(t, testClaim[:35]+"9", "READER", testReason, nil), "NOT_FOUND", ""},
		{"claim not visible", fileBody(t, hiddenClaim, "READER", testReason, nil), "NOT_FOUND", ""},
		{"retracted claim", fileBody(t, retractedClaim, "READER", testReason, nil), "CONFLICT", "retracted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := fileAppeal(t, s, tc.body, nil)
			expectError(t, r, tc.code, "appeal.file")
			if tc.msg != "" {
				msg, _, _ := errorEnvelopeOf(t, r)
				require.Contains(t, msg, tc.msg)
			}
		})
	}
	require.Zero(t, l.count(), "a refused appeal appends nothing")
}

func TestAppealFileAcceptsPublicSources(t *testing.T) {
	s, l := newAppealServer(t, appeals.Limits{PerDay: 10, OpenPerClaim: 3})
	urls := []string{"https://www.census.gov/table", "http://publicv6.example.org/x", "https://example.org:443/report"}
	r := fileAppeal(t, s, fileBody(t, testClaim, "AUTHOR", "Line one.\n\tLine two, with the right figure.", urls), nil)
	var out fileAppealOutput
	require.NoError(t, json.Unmarshal(resultOf(t, r), &out))
	require.Equal(t, appeals.StatusOpen, out.Status)
	require.False(t, out.Duplicate)
	require.Equal(t, 1, l.count())
	p := l.filed[0].Payload.(*events.AppealFiledV1)
	require.Equal(t, out.AppealID, p.AppealID)
	require.Equal(t, urls, p.URLs)
	require.Equal(t, "AUTHOR", p.Role)
	require.NoError(t, p.Validate())
}

func TestAppealRepeatedIsOneAppeal(t *testing.T) {
	s, l := newAppealServer(t, appeals.Limits{PerDay: 10, OpenPerClaim: 3})
	body := fileBody(t, testClaim, "READER", testReason, []string{"https://example.org/report"})
	var first fileAppealOutput
	require.NoError(t, json.Unmarshal(resultOf(t, fileAppeal(t, s, body, nil)), &first))
	for range 5 {
		var again fileAppealOutput
		require.NoError(t, json.Unmarshal(resultOf(t, fileAppeal(t, s, body, nil)), &again))
		require.Equal(t, fileAppealOutput{AppealID: first.AppealID, Status: appeals.StatusOpen, Duplicate: true}, again)
	}
	require.Equal(t, 1, l.count(), "the same appeal again appends nothing")
	// An upper-case claim id names the same claim, hence the same appeal.
	upper := fileBody(t, strings.ToUpper(testClaim), "READER", testReason, []string{"https://example.org/report"})
	var up fileAppealOutput
	require.NoError(t, json.Unmarshal(resultOf(t, fileAppeal(t, s, upper, nil)), &up))
	require.True(t, up.Duplicate)
	require.Equal(t, first.AppealID, up.AppealID)
	require.Equal(t, 1, l.count())
}

func TestAppealFloodIsLimited(t *testing.T) {
	s, l := newAppealServer(t, appeals.Limits{PerDay: 4, OpenPerClaim: 100})
	for i := range 4 {
		r := fileAppeal(t, s, fileBody(t, testClaim, "READER", fmt.Sprintf("%s (try %d)", testReason, i), nil), nil)
		resultOf(t, r)
	}
	for i := 4; i < 10; i++ {
		r := fileAppeal(t, s, fileBody(t, testClaim, "READER", fmt.Sprintf("%s (try %d)", testReason, i), nil), nil)
		expectError(t, r, "TOO_MANY_REQUESTS", "appeal.file")
		require.Equal(t, "3600", r.header("Retry-After"))
	}
	require.Equal(t, 4, l.count(), "exactly the limit is appended")
	// Another client (an instance key would do too) still may.
	r := fileAppeal(t, s, fileBody(t, testClaim, "READER", testReason+" (other)", nil),
		map[string]string{"User-Agent": "another browser"})
	resultOf(t, r)
	require.Equal(t, 5, l.count())
}

func TestAppealOpenPerClaimIsLimited(t *testing.T) {
	s, l := newAppealServer(t, appeals.Limits{PerDay: 100, OpenPerClaim: 3})
	for i := range 3 {
		resultOf(t, fileAppeal(t, s, fileBody(t, testClaim, "READER", fmt.Sprintf("%s (%d)", testReason, i), nil), nil))
	}
	r := fileAppeal(t, s, fileBody(t, testClaim, "READER", testReason+" (4)", nil), nil)
	expectError(t, r, "CONFLICT", "appeal.file")
	require.Equal(t, 3, l.count())
	// Once one is decided, another may be filed.
	for id, a := range l.appeals {
		a.Status = events.AppealUpheld
		l.appeals[id] = a
		break
	}
	resultOf(t, fileAppeal(t, s, fileBody(t, testClaim, "READER", testReason+" (4)", nil), nil))
	require.Equal(t, 4, l.count())
}

func TestAppealAppendFailureChangesNothing(t *testing.T) {
	s, l := newAppealServer(t, appeals.Limits{PerDay: 10, OpenPerClaim: 3})
	l.fail = errors.New("broker unreachable")
	r := fileAppeal(t, s, fileBody(t, testClaim, "READER", testReason, nil), nil)
	expectError(t, r, "INTERNAL_SERVER_ERROR", "appeal.file")
	require.Zero(t, l.count())
}

func TestAppealGetAndOfClaim(t *testing.T) {
	s, l := newAppealServer(t, appeals.Limits{PerDay: 10, OpenPerClaim: 3})
	var filed fileAppealOutput
	require.NoError(t, json.Unmarshal(resultOf(t, fileAppeal(t, s, fileBody(t, testClaim, "READER", testReason, nil), nil)), &filed))
	decided := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := l.appeals[filed.AppealID]
	a.Status, a.DecidedAt, a.DecisionReason = events.AppealRetracted, &decided, "no accepted source still contradicts the claim"
	l.appeals[filed.AppealID] = a

	get := func(proc, input string) response {
		return do(t, s, request{method: "GET", path: "/trpc/" + proc + "?input=" + url.QueryEscape(input)})
	}
	r := get("appeal.get", `{"appealId":"`+filed.AppealID+`"}`)
	var got map[string]any
	require.NoError(t, json.Unmarshal(resultOf(t, r), &got))
	require.Equal(t, map[string]any{"appealId": filed.AppealID, "claimId": testClaim, "status": "RETRACTED", "role": "READER",
		"filedAt": a.FiledAt.UTC().Format(isoMillis), "decidedAt": "2026-01-02T03:04:05.000Z",
		"decisionReason": "no accepted source still contradicts the claim"}, got)
	require.NotContains(t, string(r.body), l.keys[filed.AppealID], "the requester key is never answered")

	r = get("appeal.ofClaim", `{"claimId":"`+testClaim+`"}`)
	var of struct{ Appeals []map[string]any }
	require.NoError(t, json.Unmarshal(resultOf(t, r), &of))
	require.Len(t, of.Appeals, 1)
	require.Equal(t, got, of.Appeals[0])

	expectError(t, get("appeal.get", `{"appealId":"nope"}`), "BAD_REQUEST", "appeal.get")
	expectError(t, get("appeal.get", `{"appealId":"`+testClaim+`"}`), "NOT_FOUND", "appeal.get")
	expectError(t, get("appeal.ofClaim", `{"claimId":"x"}`), "BAD_REQUEST", "appeal.ofClaim")
	expectError(t, do(t, s, request{method: "GET", path: "/trpc/appeal.get"}), "BAD_REQUEST", "appeal.get")
	r = get("appeal.ofClaim", `{"claimId":"`+hiddenClaim+`"}`)
	require.JSONEq(t, `{"appeals":[]}`, string(resultOf(t, r)))
}
