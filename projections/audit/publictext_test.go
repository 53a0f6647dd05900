package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence/stance"
	"github.com/errata-dev/errata/consumers/investigator/fetchurl"
	"github.com/errata-dev/errata/consumers/investigator/images"
	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/websearch"
	"github.com/errata-dev/errata/events"
	"github.com/errata-dev/errata/internal/blobstore"
	"github.com/errata-dev/errata/internal/httpsafe"
	"github.com/errata-dev/errata/internal/testkit/audittest"
	"github.com/errata-dev/errata/producers/ingest/canonical"
	"github.com/errata-dev/errata/projections/audit"
)

// The deployment's internals that real failures name: the DNS resolver,
// refused private addresses, internal hosts. None may reach the public
// trail; the operator's trail keeps them all.
const (
	resolverAddr = "10.0.0.2:53"
	privateAddr  = "10.0.0.1"
)

// fakeResolver answers every lookup as the deployment's resolver would for
// a name that does not exist; nothing leaves the machine.
type fakeResolver struct{}

func (fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: resolverAddr, IsNotFound: true}
}

func pngBytes(t *testing.T, shade uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 2, 2))
	img.SetGray(0, 0, color.Gray{Y: shade})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// failingStore refuses every write, as an unreachable S3 endpoint would.
type failingStore struct{ blobstore.Store }

func (failingStore) Exists(context.Context, string) (bool, error) { return false, nil }
func (failingStore) Put(context.Context, string, []byte, string) error {
	return errors.New(`s3: put images/x.png: Put "http://minio.internal:9000/errata-images/x.png": dial tcp 10.0.5.5:9000: connect: connection refused`)
}

// TestPublicImageReasonsOfRealDownloads runs the real image downloader
// (internal/httpsafe's production policy, a loopback server for the
// answers it needs, a resolver that fails like a real one) and checks the
// public category of every reason it writes.
func TestPublicImageReasonsOfRealDownloads(t *testing.T) {
	t.Parallel()
	a, b, c := pngBytes(t, 1), pngBytes(t, 2), pngBytes(t, 3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a.png", "/a-again.png":
			_, _ = w.Write(a)
		case "/b.png":
			_, _ = w.Write(b)
		case "/c.png":
			_, _ = w.Write(c)
		case "/big.png":
			_, _ = w.Write(bytes.Repeat([]byte{0x89}, 4096))
		case "/empty.png":
		case "/page.html":
			_, _ = w.Write([]byte("<html><body>not an image</body></html>"))
		case "/slow.png":
			time.Sleep(1500 * time.Millisecond)
			_, _ = w.Write(a)
		case "/loop.png":
			http.Redirect(w, r, "/loop.png", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedAddr := closed.Addr().String()
	require.NoError(t, closed.Close())
	client, err := httpsafe.New(httpsafe.WithResolver(fakeResolver{}), httpsafe.WithTimeout(5*time.Second),
		httpsafe.AllowLoopbackAddrsForTests(netip.MustParseAddrPort(srv.Listener.Addr().String()), netip.MustParseAddrPort(closedAddr)))
	require.NoError(t, err)
	store, err := blobstore.NewDir(t.TempDir())
	require.NoError(t, err)
	d := images.NewDownloader(client, store, images.Options{MaxImages: 3, MaxBytes: 1024, Timeout: 500 * time.Millisecond, Concurrency: 1})

	want := []struct{ url, category string }{
		{srv.URL + "/a.png", ""},
		{"http://" + privateAddr + "/x.png", audit.ReasonBlockedAddress},
		{"http://93.184.216.34:8443/x.png", audit.ReasonBlockedAddress},
		{"https://images.example.invalid/x.png", audit.ReasonDNSFailure},
		{"ftp://images.example/x.png", audit.ReasonInvalidURL},
		{"http://" + closedAddr + "/x.png", audit.ReasonConnectionFailed},
		{srv.URL + "/big.png", audit.ReasonTooLarge},
		{srv.URL + "/missing.png", audit.ReasonHTTPError},
		{srv.URL + "/empty.png", audit.ReasonEmptyResponse},
		{srv.URL + "/page.html", audit.ReasonUnsupportedType},
		{srv.URL + "/slow.png", audit.ReasonTimeout},
		{srv.URL + "/loop.png", audit.ReasonTooManyRedirects},
		{srv.URL + "/a.png", audit.ReasonDuplicate},
		{srv.URL + "/a-again.png", audit.ReasonDuplicate},
		{srv.URL + "/b.png", ""},
		{srv.URL + "/c.png", ""},
		{srv.URL + "/d.png", audit.ReasonLimitReached},
	}
	urls := make([]string, len(want))
	for i, w := range want {
		urls[i] = w.url
	}
	got, skipped := d.Fetch(context.Background(), urls)
	require.Len(t, got, 3)
	require.Len(t, skipped, len(want)-3)
	reasons := map[string]string{}
	k := 0
	for _, w := range want {
		if w.category == "" {
			continue
		}
		s := skipped[k]
		k++
		require.Equal(t, w.url, s.URL)
		reasons[s.Reason] = w.category
		require.Equal(t, w.category, audit.PublicImageReason(s.Reason), "reason %q", s.Reason)
	}
	// The reasons that name the deployment are the ones the public trail
	// must not repeat.
	var joined strings.Builder
	for r := range reasons {
		joined.WriteString(r + "\n")
	}
	require.Contains(t, joined.String(), "address not allowed: "+privateAddr)
	require.Contains(t, joined.String(), resolverAddr)

	// Storage failures and cancellation.
	_, skipped = images.NewDownloader(client, failingStore{}, images.Options{}).Fetch(context.Background(), []string{srv.URL + "/b.png"})
	require.Len(t, skipped, 1)
	require.Contains(t, skipped[0].Reason, "minio.internal")
	require.Equal(t, audit.ReasonStorageError, audit.PublicImageReason(skipped[0].Reason))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, skipped = d.Fetch(ctx, []string{srv.URL + "/c.png"})
	require.Len(t, skipped, 1)
	require.Equal(t, audit.ReasonCanceled, audit.PublicImageReason(skipped[0].Reason))

	require.Equal(t, audit.ReasonDownloadFailed, audit.PublicImageReason("a reason no producer writes: "+privateAddr))
}

// TestPublicSourceFetchErrorsOfRealFetches runs the real canonical fetcher
// (server verification) into a failing resolver and a private endpoint,
// and checks the producers' fixed texts.
func TestPublicSourceFetchErrorsOfRealFetches(t *testing.T) {
	t.Parallel()
	client, err := httpsafe.New(httpsafe.WithResolver(fakeResolver{}))
	require.NoError(t, err)
	noRetry := canonical.WithRetryPolicy(canonical.RetryPolicy{Attempts: 1})
	f, err := canonical.NewFetcher(client, canonical.Endpoints{}, nil, noRetry)
	require.NoError(t, err)
	_, err = f.LessWrong(context.Background(), "abc123")
	require.ErrorContains(t, err, resolverAddr)
	require.Equal(t, audit.ReasonDNSFailure, audit.PublicSourceFetchError(err.Error()))

	f, err = canonical.NewFetcher(client, canonical.Endpoints{LessWrongGraphQL: "http://" + privateAddr + "/graphql"}, nil, noRetry)
	require.NoError(t, err)
	_, err = f.LessWrong(context.Background(), "abc123")
	require.ErrorContains(t, err, "address not allowed: "+privateAddr)
	require.Equal(t, audit.ReasonBlockedAddress, audit.PublicSourceFetchError(err.Error()))

	for _, tc := range []struct {
		err  error
		want string
	}{
		{canonical.ErrNotVerifiable, audit.ReasonNotVerifiable},
		{canonical.ErrInvalidRequest, audit.ReasonInvalidRequest},
		{canonical.ErrNotFound, audit.ReasonNotFound},
		{canonical.ErrPaywalled, audit.ReasonPaywalled},
		{canonical.ErrNoContent, audit.ReasonNoContent},
		{canonical.ErrRevisionMismatch, audit.ReasonRevisionMismatch},
		{canonical.ErrBadResponse, audit.ReasonBadResponse},
		{canonical.ErrUpstreamStatus, audit.ReasonHTTPError},
	} {
		wrapped := fmt.Errorf("substack canonical fetch of p/s: GET http://substack.internal:8080/api: %w: detail", tc.err)
		require.Equal(t, tc.want, audit.PublicSourceFetchError(wrapped.Error()), tc.err.Error())
	}
	// producers/ingest's own reasons.
	require.Equal(t, audit.ReasonNotVerifiable, audit.PublicSourceFetchError("X posts cannot be verified server-side"))
	require.Equal(t, audit.ReasonVerificationOff, audit.PublicSourceFetchError("server verification is disabled on this instance"))
	require.Equal(t, audit.ReasonNoContent, audit.PublicSourceFetchError("the platform's canonical content normalizes to empty text"))
	require.Equal(t, "", audit.PublicSourceFetchError(""))
	require.Equal(t, audit.ReasonFetchFailed, audit.PublicSourceFetchError("something new at "+privateAddr))
}

// searchToolError is the web_search tool's output for a search error
// (consumers/investigator's Toolbox).
func searchToolError(err error) string {
	b, _ := json.Marshal(map[string]string{"error": "search failed: " + err.Error()})
	return string(b)
}

// TestPublicSearchErrorsOfRealProviders runs the real SearXNG client
// against a loopback server answering each failure, and into a failing
// resolver, and checks what the public trail shows of the tool's output.
func TestPublicSearchErrorsOfRealProviders(t *testing.T) {
	t.Parallel()
	status := map[string]int{"/limited/search": 429, "/down/search": 503, "/denied/search": 401, "/refused/search": 400}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/garbage/search" {
			_, _ = w.Write([]byte("<html>not json</html>"))
			return
		}
		w.WriteHeader(status[r.URL.Path])
		_, _ = w.Write([]byte(`{"error":"internal node searx-3.internal failed"}`))
	}))
	defer srv.Close()
	client, err := httpsafe.New(httpsafe.WithResolver(fakeResolver{}),
		httpsafe.AllowLoopbackAddrsForTests(netip.MustParseAddrPort(srv.Listener.Addr().String())))
	require.NoError(t, err)
	for _, tc := range []struct{ base, want string }{
		{srv.URL + "/limited", audit.ReasonRateLimited},
		{srv.URL + "/down", audit.ReasonUnavailable},
		{srv.URL + "/denied", audit.ReasonUnauthorized},
		{srv.URL + "/refused", audit.ReasonRefused},
		{srv.URL + "/garbage", audit.ReasonBadResponse},
		{"http://searxng.internal:8080", audit.ReasonDNSFailure},
		{"http://" + privateAddr + ":8080", audit.ReasonBlockedAddress},
	} {
		s, err := websearch.NewSearXNG(client, tc.base)
		require.NoError(t, err)
		_, err = s.Search(context.Background(), "Eiffel Tower completion year", 5)
		require.Error(t, err, tc.base)
		out := publicToolOutput(t, "web_search", searchToolError(err))
		require.JSONEq(t, `{"error":"search failed: `+tc.want+`"}`, out, "%s: %v", tc.base, err)
		// An evidence assessment records the same error for its query.
		require.Equal(t, tc.want, audit.PublicQueryError(err.Error()), "%s: %v", tc.base, err)
	}
	// Other outputs are the tools' own public texts and stay as they are.
	refused := fetchurl.Result{URL: "http://" + privateAddr + "/", Error: "the address is not on the public internet (private, local or reserved network) and cannot be fetched"}
	require.Equal(t, refused.ToolOutput(), publicToolOutput(t, "fetch_url", refused.ToolOutput()))
	require.Equal(t, `{"error":"the query is missing"}`, publicToolOutput(t, "web_search", `{"error":"the query is missing"}`))
	require.Equal(t, `{"results":[]}`, publicToolOutput(t, "web_search", `{"results":[]}`))
}

// publicToolOutput runs one tool result through Trail.Public.
func publicToolOutput(t *testing.T, name, output string) string {
	t.Helper()
	tr := &audit.Trail{Attempts: []*audit.Attempt{{Exchanges: []*audit.Exchange{{ToolResults: []audit.ToolResult{{Name: name, Output: output}}}}}}}
	pub, err := tr.Public()
	require.NoError(t, err)
	return pub.Attempts[0].Exchanges[0].ToolResults[0].Output
}

// TestPublicFailureMessages: every failure kind the model client and the
// investigator write has its own public sentence; reasons keep their
// shape.
func TestPublicFailureMessages(t *testing.T) {
	t.Parallel()
	for _, k := range []llm.Kind{llm.KindRateLimited, llm.KindQuotaExceeded, llm.KindServer, llm.KindTimeout, llm.KindNetwork,
		llm.KindCanceled, llm.KindConflict, llm.KindIncomplete, llm.KindTruncated, llm.KindInvalidResponse, llm.KindFailed,
		llm.KindBadRequest, llm.KindUnauthorized, llm.KindForbidden, llm.KindNotFound, llm.KindUnprocessable, llm.KindClientError,
		llm.KindRefusal, llm.KindToolArguments, llm.KindInvalidOutput, llm.KindInvalidRequest} {
		require.NotContains(t, audit.PublicFailureMessage(string(k)), "operator's audit trail", "llm kind %s", k)
	}
	for _, k := range []string{"image_store", "prompt", "input", "round_cap", "version_unknown", "worker_lost", "user_key_unavailable",
		"user_key_expired", "no_credentials", "key_store", "internal"} {
		require.NotContains(t, audit.PublicFailureMessage(k), "operator's audit trail", "investigator kind %s", k)
	}
	require.Equal(t, "the attempt failed (the operator's audit trail has the details)", audit.PublicFailureMessage("new_kind"))

	for reason, want := range map[string]string{
		"gave up after 4 attempts; last failure network: llm openai-responses: network: Post \"http://llm.internal:8000/v1/responses\": dial tcp 10.0.7.7:8000: connect: connection refused": "gave up after 4 attempts; last failure network: the model provider could not be reached",
		"internal: pgx: dial tcp 10.0.3.3:5432: connect: connection refused":                                  "internal: an internal error",
		"no_credentials: no OpenAI key: the instance has none configured and the request carried no user key": "no_credentials: no OpenAI key: the instance has none configured and the request carried no user key",
		"free text at 10.0.0.9": "the attempt failed (the operator's audit trail has the details)",
	} {
		require.Equal(t, want, audit.PublicFailureReason(reason), reason)
	}
}

// TestPublicTrailHidesTheDeployment: a complete investigation whose
// failures name the deployment (resolver, private addresses, the model
// provider's, the search provider's and the blob store's internal hosts).
// The public trail shows their categories (golden), the operator's trail
// every word.
func TestPublicTrailHidesTheDeployment(t *testing.T) {
	f := audittest.Complete("infrastructure", "1860000000000000003")
	internals := []string{privateAddr, resolverAddr, "10.0.5.5", "10.0.7.7", "minio.internal", "llm.internal", "searxng.internal"}

	first := f.Posts[0].Payload.(*events.PostVersionRegisteredV1)
	reg := *first
	reg.ServerFetchError = "lesswrong canonical fetch of abc123: POST https://www.lesswrong.com/graphql: resolve www.lesswrong.com: lookup www.lesswrong.com on " + resolverAddr + ": no such host"
	f.Posts[0].Payload = &reg
	var snap *events.InvestigationInputSnapshottedV1
	var rateLimited *events.InvestigationExchangeRecordedV1
	var failed *events.InvestigationAttemptFailedV1
	var searched *events.InvestigationExchangeRecordedV1
	for i, ev := range f.Investigation {
		switch p := ev.Payload.(type) {
		case *events.InvestigationInputSnapshottedV1:
			cp := *p
			cp.SkippedImages = []events.SkippedImageV1{
				// A public name the deployment's DNS resolves to a private address.
				{URL: "https://intranet.example/a.png", Reason: "download failed: GET https://intranet.example/a.png: dial intranet.example: httpsafe: address not allowed: " + privateAddr},
				{URL: "https://cdn.example/b.png", Reason: "download failed: GET https://cdn.example/b.png: resolve cdn.example: lookup cdn.example on " + resolverAddr + ": no such host"},
				{URL: "https://pbs.twimg.com/media/c.png", Reason: `could not store the image: s3: put images/c.png: Put "http://minio.internal:9000/errata-images/c.png": dial tcp 10.0.5.5:9000: connect: connection refused`},
				{URL: "https://pbs.twimg.com/media/d.gif", Reason: "larger than 20971520 bytes"},
			}
			snap = &cp
			f.Investigation[i].Payload = snap
		case *events.InvestigationExchangeRecordedV1:
			cp := *p
			switch {
			case cp.Error != nil:
				e := *cp.Error
				e.Kind, e.StatusCode, e.Code = "network", 0, ""
				e.Message = `Post "http://llm.internal:8000/v1/responses": dial tcp 10.0.7.7:8000: connect: connection refused`
				cp.Error, cp.HTTPStatus = &e, 0
				rateLimited = &cp
			case len(cp.ToolResults) > 0:
				cp.ToolResults = append(append([]events.ToolResultV1{}, cp.ToolResults...),
					events.ToolResultV1{CallID: "call_s", Name: "web_search", Output: searchToolError(errors.New(
						"GET http://searxng.internal:8080/search?q=Eiffel: resolve searxng.internal: lookup searxng.internal on " + resolverAddr + ": no such host"))},
					events.ToolResultV1{CallID: "call_f", Name: "fetch_url", Output: fetchurl.Result{URL: "https://intranet.example/",
						Error: "the address is not on the public internet (private, local or reserved network) and cannot be fetched"}.ToolOutput()})
				searched = &cp
			default:
				continue
			}
			f.Investigation[i].Payload = &cp
		case *events.InvestigationClaimAssessedV1:
			if p.Published {
				continue
			}
			cp := *p
			cp.Queries = append([]events.EvidenceQueryV1{}, p.Queries...)
			cp.Queries[1].Error = "searxng search: search: provider unavailable: Get \"http://searxng.internal:8080/search\": resolve searxng.internal: lookup searxng.internal on " + resolverAddr + ": no such host"
			cp.Sources = append([]events.AssessedSourceV1{}, p.Sources...)
			cp.Sources[1].StanceNote = "provider at llm.internal (10.0.7.7) said no"
			cp.Sources[1].Entail, cp.Sources[1].Contradict, cp.Sources[1].Neutral = 0, 0, 1
			f.Investigation[i].Payload = &cp
		case *events.InvestigationAttemptFailedV1:
			cp := *p
			cp.Kind = "network"
			cp.Message = `llm openai-responses: network: Post "http://llm.internal:8000/v1/responses": dial tcp 10.0.7.7:8000: connect: connection refused`
			failed = &cp
			f.Investigation[i].Payload = failed
		}
	}
	require.NotNil(t, snap)
	require.NotNil(t, rateLimited)
	require.NotNil(t, failed)
	require.NotNil(t, searched)

	trail := build(t, f)
	full, err := audit.JSON(trail)
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, audit.Text(&text, trail))
	for _, s := range internals {
		require.Contains(t, string(full), s, "the operator's trail keeps every word")
		require.Contains(t, text.String(), s, "errata audit keeps every word")
	}

	pub, err := trail.Public()
	require.NoError(t, err)
	js, err := audit.JSON(pub)
	require.NoError(t, err)
	golden(t, "infrastructure.public.json", js)
	for _, s := range internals {
		require.NotContains(t, string(js), s, "the public trail names no internal address or host")
	}
	require.Equal(t, audit.ReasonDNSFailure, pub.PostVersion.ServerFetchError)
	var cats []string
	for _, s := range pub.Input.SkippedImages {
		cats = append(cats, s.Reason)
	}
	require.Equal(t, []string{audit.ReasonBlockedAddress, audit.ReasonDNSFailure, audit.ReasonStorageError, audit.ReasonTooLarge}, cats)
	require.Equal(t, "the model provider could not be reached", pub.Attempts[0].Failure.Message)
	require.Equal(t, "network", pub.Attempts[0].Failure.Kind)
	require.Equal(t, "the model provider could not be reached", pub.Attempts[0].Exchanges[0].Error.Message)
	results := pub.Attempts[1].Exchanges[0].ToolResults
	require.Len(t, results, 5)
	require.JSONEq(t, `{"error":"search failed: dns_failure"}`, results[3].Output)
	require.Equal(t, searched.ToolResults[4].Output, results[4].Output, "fetch_url's own text is already public")

	// The evidence assessments: query errors and stance notes are
	// categories; the rest of the assessment is published as is.
	held := pub.Attempts[1].Submissions[2].Assessment
	require.Equal(t, audit.ReasonDNSFailure, held.Queries[1].Error)
	require.Equal(t, 0, held.Queries[1].Results)
	require.Empty(t, held.Queries[0].Error)
	require.Equal(t, []string{"", audit.StanceNotJudged, audit.StanceInvalidAnswer}, []string{held.Sources[0].StanceNote,
		held.Sources[1].StanceNote, held.Sources[2].StanceNote})
	require.Equal(t, 1.0, held.Sources[1].Neutral, "the neutral default stays")
	require.Equal(t, audittest.WithheldFailed, held.Failed)
	published := pub.Attempts[1].Submissions[0]
	require.Empty(t, published.AssessorExchanges[0].RawRequest)
	require.Empty(t, published.AssessorExchanges[0].RequestID)
	require.NotEmpty(t, published.AssessorExchanges[0].OutputJSON, "the stance answer is public")
}

// Query errors of an assessment are categorized like the web_search
// tool's errors (they quote consumers/websearch's errors), and stance notes
// (consumers/evidence/stance's, the assessor's) are categories.
func TestPublicAssessmentTexts(t *testing.T) {
	for text, want := range map[string]string{
		"": "",
		"tavily search: " + websearch.ErrRateLimited.Error(): audit.ReasonRateLimited,
		"searxng search: search: provider unavailable: Get \"http://searxng.internal:8080/search\": dial tcp 10.0.9.9:8080: connect: connection refused": audit.ReasonConnectionFailed,
		"brave search: search: provider refused the credentials": audit.ReasonUnauthorized,
		audittest.QueryError:         audit.ReasonUnavailable,
		"something else at 10.0.0.1": audit.ReasonSearchFailed,
	} {
		require.Equal(t, want, audit.PublicQueryError(text), text)
	}
	for note, want := range map[string]string{
		"":                      "",
		stance.NoteEmptyPassage: audit.StanceEmptyPassage,
		stance.NoteEmptyClaim:   audit.StanceEmptyClaim,
		audittest.BrokeSchema:   audit.StanceInvalidAnswer,
		"stance answer broke the schema 2 times: the model refused: I can't help with llm.internal": audit.StanceInvalidAnswer,
		"unusable stance: stance probabilities sum to 1.400, not 1":                                 audit.StanceInvalidAnswer,
		"anything else from 10.0.0.1": audit.StanceNotJudged,
	} {
		require.Equal(t, want, audit.PublicStanceNote(note), note)
	}
}
