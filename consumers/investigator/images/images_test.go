package images

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/blobstore"
	"github.com/errata-dev/errata/internal/httpsafe"
)

// Tiny real images, encoded by the standard library.
func pngBytes(t *testing.T, c color.Color) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, c)
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func jpegBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 4, 4)), nil))
	return b.Bytes()
}

func gifBytes(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, gif.Encode(&b, image.NewPaletted(image.Rect(0, 0, 1, 1), color.Palette{color.Black}), nil))
	return b.Bytes()
}

// webpBytes is a RIFF/WEBP container with one VP8L chunk: the signature
// Sniff checks (the standard library has no WebP encoder, and Sniff does
// not decode).
func webpBytes() []byte {
	payload := []byte{0x2f, 0x00, 0x00, 0x00, 0x00, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07, 0x00}
	var b bytes.Buffer
	b.WriteString("RIFF")
	_ = binary.Write(&b, binary.LittleEndian, uint32(4+8+len(payload)))
	b.WriteString("WEBPVP8L")
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(payload)))
	b.Write(payload)
	return b.Bytes()
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// route is what the test server answers on one path.
type route struct {
	status      int
	contentType string
	body        []byte
	delay       time.Duration
	hang        bool // block until the client gives up
}

// imageServer serves routes and counts hits per path.
type imageServer struct {
	*httptest.Server
	routes map[string]route
	mu     sync.Mutex
	hits   map[string]int
}

func newImageServer(t *testing.T, routes map[string]route) *imageServer {
	t.Helper()
	s := &imageServer{routes: routes, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		rt, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if rt.hang {
			<-r.Context().Done()
			return
		}
		time.Sleep(rt.delay)
		if rt.contentType != "" {
			w.Header().Set("Content-Type", rt.contentType)
		}
		if rt.status != 0 {
			w.WriteHeader(rt.status)
		}
		_, _ = w.Write(rt.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *imageServer) url(path string) string { return s.URL + path }

func (s *imageServer) totalHits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, h := range s.hits {
		n += h
	}
	return n
}

func testClient(t *testing.T) *httpsafe.Client {
	t.Helper()
	c, err := httpsafe.New(httpsafe.AllowLoopbackForTests(), httpsafe.WithMaxResponseBytes(64<<20))
	require.NoError(t, err)
	return c
}

func testStore(t *testing.T) *blobstore.Dir {
	t.Helper()
	d, err := blobstore.NewDir(t.TempDir())
	require.NoError(t, err)
	return d
}

func TestFetchSniffsAndStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pngData, jpegData, gifData, webpData := pngBytes(t, color.White), jpegBytes(t), gifBytes(t), webpBytes()
	srv := newImageServer(t, map[string]route{
		// The Content-Type header is ignored: the bytes decide.
		"/a.png":    {contentType: "image/jpeg", body: pngData},
		"/b":        {contentType: "text/html", body: jpegData},
		"/c.gif":    {body: gifData},
		"/d.webp":   {contentType: "application/octet-stream", body: webpData},
		"/fake.png": {contentType: "image/png", body: []byte("<html>not an image</html>")},
		"/big.png":  {contentType: "image/png", body: append(pngBytes(t, color.Black), make([]byte, 2048)...)},
		"/gone.png": {status: http.StatusNotFound, body: []byte("no")},
		"/empty":    {contentType: "image/png"},
	})
	store := testStore(t)
	d := NewDownloader(testClient(t), store, Options{MaxBytes: 1024})

	images, skipped := d.Fetch(ctx, []string{
		srv.url("/a.png"), srv.url("/b"), srv.url("/fake.png"), srv.url("/c.gif"),
		srv.url("/big.png"), srv.url("/gone.png"), srv.url("/d.webp"), srv.url("/empty"),
		"ftp://example.com/x.png", "not a url",
	})

	want := []Image{
		{SourceURL: srv.url("/a.png"), SHA256: digest(pngData), MediaType: PNG, Bytes: int64(len(pngData)), BlobKey: "images/" + digest(pngData) + ".png"},
		{SourceURL: srv.url("/b"), SHA256: digest(jpegData), MediaType: JPEG, Bytes: int64(len(jpegData)), BlobKey: "images/" + digest(jpegData) + ".jpg"},
		{SourceURL: srv.url("/c.gif"), SHA256: digest(gifData), MediaType: GIF, Bytes: int64(len(gifData)), BlobKey: "images/" + digest(gifData) + ".gif"},
		{SourceURL: srv.url("/d.webp"), SHA256: digest(webpData), MediaType: WebP, Bytes: int64(len(webpData)), BlobKey: "images/" + digest(webpData) + ".webp"},
	}
	require.Equal(t, want, images)

	reasons := map[string]string{}
	var order []string
	for _, s := range skipped {
		reasons[s.URL] = s.Reason
		order = append(order, s.URL)
	}
	require.Equal(t, []string{srv.url("/fake.png"), srv.url("/big.png"), srv.url("/gone.png"), srv.url("/empty"), "ftp://example.com/x.png", "not a url"}, order)
	require.Equal(t, "not a JPEG, PNG, GIF or WebP image", reasons[srv.url("/fake.png")])
	require.Equal(t, "larger than 1024 bytes", reasons[srv.url("/big.png")])
	require.Equal(t, "HTTP status 404", reasons[srv.url("/gone.png")])
	require.Equal(t, "empty response", reasons[srv.url("/empty")])
	require.Contains(t, reasons["ftp://example.com/x.png"], "scheme not allowed")
	require.Contains(t, reasons["not a url"], "download failed")

	// Stored under the content-addressed key with the sniffed type.
	for _, img := range images {
		data, ct, err := store.Get(ctx, img.BlobKey)
		require.NoError(t, err)
		require.Equal(t, img.MediaType, ct)
		require.Equal(t, img.SHA256, digest(data))
		loaded, err := d.Load(ctx, img)
		require.NoError(t, err)
		require.Equal(t, data, loaded)
	}
}

func TestFetchDeduplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	red, blue := pngBytes(t, color.RGBA{R: 255, A: 255}), pngBytes(t, color.RGBA{B: 255, A: 255})
	srv := newImageServer(t, map[string]route{
		"/red.png":       {body: red},
		"/red-copy.png":  {body: red},
		"/blue.png":      {body: blue},
		"/red-again.png": {body: red},
	})
	d := NewDownloader(testClient(t), testStore(t), Options{})
	images, skipped := d.Fetch(ctx, []string{
		srv.url("/red.png"), srv.url("/red.png"), srv.url("/red-copy.png"), srv.url("/blue.png"), srv.url("/red-again.png"),
	})
	require.Len(t, images, 2)
	require.Equal(t, srv.url("/red.png"), images[0].SourceURL)
	require.Equal(t, srv.url("/blue.png"), images[1].SourceURL)
	require.Equal(t, []Skipped{
		{URL: srv.url("/red.png"), Reason: "duplicate URL"},
		{URL: srv.url("/red-copy.png"), Reason: "same image as " + srv.url("/red.png")},
		{URL: srv.url("/red-again.png"), Reason: "same image as " + srv.url("/red.png")},
	}, skipped)
	// The repeated URL was downloaded once.
	require.Equal(t, 4, srv.totalHits())
}

func TestFetchLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	routes := map[string]route{}
	var urls []string
	for i := range 6 {
		p := fmt.Sprintf("/%d.png", i)
		routes[p] = route{body: pngBytes(t, color.RGBA{R: uint8(i), A: 255})}
	}
	routes["/bad"] = route{body: []byte("nope")}
	srv := newImageServer(t, routes)
	urls = append(urls, srv.url("/bad"))
	for i := range 6 {
		urls = append(urls, srv.url(fmt.Sprintf("/%d.png", i)))
	}

	d := NewDownloader(testClient(t), testStore(t), Options{MaxImages: 2, Concurrency: 1})
	images, skipped := d.Fetch(ctx, urls)
	require.Len(t, images, 2)
	require.Equal(t, urls[1], images[0].SourceURL)
	require.Equal(t, urls[2], images[1].SourceURL)
	require.Len(t, skipped, 5)
	require.Equal(t, Skipped{URL: urls[0], Reason: "not a JPEG, PNG, GIF or WebP image"}, skipped[0])
	for i, s := range skipped[1:] {
		require.Equal(t, Skipped{URL: urls[3+i], Reason: "limit of 2 images reached"}, s)
	}
	// With one download at a time, nothing past the limit was fetched.
	require.Equal(t, 3, srv.totalHits())
}

// TestFetchOrderIsDeterministic: downloads finish in reverse order, yet
// the results follow the input, every time.
func TestFetchOrderIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	routes := map[string]route{}
	var urls []string
	for i := range 8 {
		p := fmt.Sprintf("/%d.png", i)
		routes[p] = route{body: pngBytes(t, color.RGBA{G: uint8(i), A: 255}), delay: time.Duration(8-i) * 5 * time.Millisecond}
		urls = append(urls, "")
	}
	srv := newImageServer(t, routes)
	for i := range urls {
		urls[i] = srv.url(fmt.Sprintf("/%d.png", i))
	}
	d := NewDownloader(testClient(t), testStore(t), Options{MaxImages: 6, Concurrency: 4})
	var first []Image
	for range 3 {
		images, skipped := d.Fetch(ctx, urls)
		require.Len(t, images, 6)
		for i, img := range images {
			require.Equal(t, urls[i], img.SourceURL)
		}
		require.Equal(t, []Skipped{
			{URL: urls[6], Reason: "limit of 6 images reached"},
			{URL: urls[7], Reason: "limit of 6 images reached"},
		}, skipped)
		if first == nil {
			first = images
		}
		require.Equal(t, first, images)
	}
}

func TestFetchTimeout(t *testing.T) {
	t.Parallel()
	srv := newImageServer(t, map[string]route{
		"/slow.png": {hang: true},
		"/ok.png":   {body: pngBytes(t, color.White)},
	})
	d := NewDownloader(testClient(t), testStore(t), Options{Timeout: 100 * time.Millisecond})
	start := time.Now()
	images, skipped := d.Fetch(context.Background(), []string{srv.url("/slow.png"), srv.url("/ok.png")})
	require.Less(t, time.Since(start), 5*time.Second)
	require.Len(t, images, 1)
	require.Equal(t, []Skipped{{URL: srv.url("/slow.png"), Reason: "download timed out"}}, skipped)
}

func TestFetchBlockedAddress(t *testing.T) {
	t.Parallel()
	srv := newImageServer(t, map[string]route{"/a.png": {body: pngBytes(t, color.White)}})
	// A production client: loopback is refused.
	client, err := httpsafe.New()
	require.NoError(t, err)
	d := NewDownloader(client, testStore(t), Options{})
	images, skipped := d.Fetch(context.Background(), []string{srv.url("/a.png")})
	require.Empty(t, images)
	require.Len(t, skipped, 1)
	require.Contains(t, skipped[0].Reason, "not allowed")
	require.Zero(t, srv.totalHits())
}

func TestFetchCanceled(t *testing.T) {
	t.Parallel()
	srv := newImageServer(t, map[string]route{"/a.png": {body: pngBytes(t, color.White)}})
	d := NewDownloader(testClient(t), testStore(t), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	images, skipped := d.Fetch(ctx, []string{srv.url("/a.png"), srv.url("/b.png")})
	require.Empty(t, images)
	require.Equal(t, []Skipped{{URL: srv.url("/a.png"), Reason: "canceled"}, {URL: srv.url("/b.png"), Reason: "canceled"}}, skipped)
}

func TestFetchEmpty(t *testing.T) {
	t.Parallel()
	d := NewDownloader(testClient(t), testStore(t), Options{})
	images, skipped := d.Fetch(context.Background(), nil)
	require.Empty(t, images)
	require.Empty(t, skipped)
}

// countingStore counts Puts.
type countingStore struct {
	blobstore.Store
	puts atomic.Int64
	fail error
}

func (c *countingStore) Put(ctx context.Context, key string, data []byte, ct string) error {
	c.puts.Add(1)
	if c.fail != nil {
		return c.fail
	}
	return c.Store.Put(ctx, key, data, ct)
}

func TestFetchStoresOnce(t *testing.T) {
	t.Parallel()
	srv := newImageServer(t, map[string]route{"/a.png": {body: pngBytes(t, color.White)}})
	store := &countingStore{Store: testStore(t)}
	d := NewDownloader(testClient(t), store, Options{})
	for range 2 {
		images, _ := d.Fetch(context.Background(), []string{srv.url("/a.png")})
		require.Len(t, images, 1)
	}
	require.EqualValues(t, 1, store.puts.Load(), "an image already stored is not uploaded again")

	failing := &countingStore{Store: testStore(t), fail: fmt.Errorf("disk full")}
	d = NewDownloader(testClient(t), failing, Options{})
	images, skipped := d.Fetch(context.Background(), []string{srv.url("/a.png")})
	require.Empty(t, images)
	require.Equal(t, []Skipped{{URL: srv.url("/a.png"), Reason: "could not store the image: disk full"}}, skipped)
}

func TestLoadVerifies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := testStore(t)
	d := NewDownloader(testClient(t), store, Options{})
	data := pngBytes(t, color.White)
	img := Image{SHA256: digest(data), MediaType: PNG, Bytes: int64(len(data)), BlobKey: BlobKey(digest(data), PNG)}

	_, err := d.Load(ctx, img)
	require.ErrorIs(t, err, blobstore.ErrNotFound)

	require.NoError(t, store.Put(ctx, img.BlobKey, data, PNG))
	got, err := d.Load(ctx, img)
	require.NoError(t, err)
	require.Equal(t, data, got)

	require.NoError(t, store.Put(ctx, img.BlobKey, append([]byte{}, data[:len(data)-1]...), PNG))
	_, err = d.Load(ctx, img)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestSniff(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"png", pngBytes(t, color.White), PNG},
		{"jpeg", jpegBytes(t), JPEG},
		{"gif", gifBytes(t), GIF},
		{"webp", webpBytes(), WebP},
		{"empty", nil, ""},
		{"html", []byte("<!doctype html><html>"), ""},
		{"pdf", []byte("%PDF-1.7\n"), ""},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), ""},
		{"bmp", []byte("BM\x00\x00\x00\x00"), ""},
		{"riff but wave", []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00"), ""},
		{"truncated png signature", []byte("\x89PNG\r\n"), ""},
		{"gif prefix only", []byte("GIF8"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Sniff(tc.data))
		})
	}
}

func TestBlobKey(t *testing.T) {
	require.Equal(t, "images/abc.jpg", BlobKey("abc", JPEG))
	require.Equal(t, "images/abc.webp", BlobKey("abc", WebP))
	require.Panics(t, func() { BlobKey("abc", "image/bmp") })
	require.True(t, strings.HasPrefix(BlobKey(digest([]byte("x")), PNG), "images/"))
	require.NoError(t, blobstore.ValidateKey(BlobKey(digest([]byte("x")), PNG)))
}
