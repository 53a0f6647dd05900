package canonical

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/httpsafe"
)

// TestRedirectToLoopbackBlocked: a platform endpoint that redirects to
// 127.0.0.1 is refused at dial time when loopback is not allowed; only the
// fake platform's own endpoint is reachable here, as a public host would be.
func TestRedirectToLoopbackBlocked(t *testing.T) {
	internal := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, okLessWrong) })
	front := newFakePlatform(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+fakeLessWrongPath, http.StatusTemporaryRedirect)
	})
	f := newTestFetcher(t, front.endpoints(), []httpsafe.Option{httpsafe.AllowLoopbackAddrsForTests(front.addrPort())})
	_, err := f.LessWrong(context.Background(), "abc123")
	require.ErrorIs(t, err, httpsafe.ErrBlockedAddress)
	require.Contains(t, err.Error(), "127.0.0.1")
	require.Len(t, front.recorded(), 1, "a policy refusal is not retried")
	require.Empty(t, internal.recorded(), "the loopback target was never reached")
	require.Empty(t, f.sleeps.recorded())

	// With a production client even the endpoint itself is refused.
	prod := newTestFetcher(t, internal.endpoints(), nil)
	_, err = prod.Wikipedia(context.Background(), WikipediaRequest{Language: "en", PageID: "736", RevisionID: "1339833339"})
	require.ErrorIs(t, err, httpsafe.ErrBlockedAddress)
	require.Empty(t, internal.recorded())
}

func TestOversizedResponseRejected(t *testing.T) {
	huge := `{"data":{"post":{"result":{"_id":"abc123","contents":{"html":"<p>` + strings.Repeat("word ", 1000) + `</p>"}}}}}`
	p := newFakePlatform(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, huge) })
	f := loopbackFetcher(t, p, WithMaxResponseBytes(1024))
	_, err := f.LessWrong(context.Background(), "abc123")
	require.ErrorIs(t, err, httpsafe.ErrTooLarge)
	require.Len(t, p.recorded(), 1, "not retried")

	// The same response fits the default limit.
	res, err := loopbackFetcher(t, p).LessWrong(context.Background(), "abc123")
	require.NoError(t, err)
	require.Len(t, strings.Fields(res.Text), 1000)
}
