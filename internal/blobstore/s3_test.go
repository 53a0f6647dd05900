package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
)

const (
	testAccessKey = "AKIDTEST"
	testSecret    = "test-secret-key"
	testRegion    = "eu-test-1"
	amzDateFormat = "20060102T150405Z"
)

var authPattern = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=` + testAccessKey +
	`/(\d{8})/` + testRegion + `/s3/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$`)

// lastModified is what the fake answers in Last-Modified, as S3 does on
// every GET and HEAD.
var lastModified = time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

// fakeS3 is a path-style S3 endpoint for one bucket that checks each
// request the way S3 would: the Authorization header's shape and
// credential scope, the payload hash against the body, and the signature,
// recomputed from what arrived on the wire with the configured secret by
// an independent SigV4 implementation (the AWS SDK's signer).
type fakeS3 struct {
	t      *testing.T
	bucket string
	mu     sync.Mutex
	// objects by full key (prefix included).
	objects map[string]fakeObject
	// fail, when set, answers every request with this status and code.
	failStatus int
	failCode   string
	requests   []string
}

type fakeObject struct {
	data        []byte
	contentType string
}

func newFakeS3(t *testing.T, bucket string) (*fakeS3, *httptest.Server) {
	f := &fakeS3{t: t, bucket: bucket, objects: map[string]fakeObject{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if msg := f.checkSignature(r, body); msg != "" {
		f.t.Errorf("%s %s: %s", r.Method, r.URL.Path, msg)
		writeS3Error(w, http.StatusForbidden, "SignatureDoesNotMatch", msg)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path)
	if f.failStatus != 0 {
		writeS3Error(w, f.failStatus, f.failCode, "injected failure")
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket != f.bucket {
		writeS3Error(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
		return
	}
	switch r.Method {
	case http.MethodPut:
		f.objects[key] = fakeObject{data: body, contentType: r.Header.Get("Content-Type")}
		w.Header().Set("ETag", `"etag"`)
	case http.MethodGet, http.MethodHead:
		obj, ok := f.objects[key]
		if !ok {
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			writeS3Error(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
			return
		}
		w.Header().Set("Content-Type", obj.contentType)
		w.Header().Set("Content-Length", fmt.Sprint(len(obj.data)))
		w.Header().Set("Last-Modified", lastModified.Format(http.TimeFormat))
		w.Header().Set("ETag", `"etag"`)
		if r.Method == http.MethodGet {
			_, _ = w.Write(obj.data)
		}
	default:
		writeS3Error(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method)
	}
}

// checkSignature returns what is wrong with the request's signature, or "".
func (f *fakeS3) checkSignature(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	m := authPattern.FindStringSubmatch(auth)
	if m == nil {
		return fmt.Sprintf("malformed Authorization header %q", auth)
	}
	sum := sha256.Sum256(body)
	payloadHash := r.Header.Get("X-Amz-Content-Sha256")
	if payloadHash != hex.EncodeToString(sum[:]) {
		return fmt.Sprintf("x-amz-content-sha256 %q does not match the body", payloadHash)
	}
	when, err := time.Parse(amzDateFormat, r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "bad x-amz-date"
	}
	if when.Format("20060102") != m[1] {
		return "credential date differs from x-amz-date"
	}
	signed := strings.Split(m[2], ";")
	for _, must := range []string{"host", "x-amz-content-sha256", "x-amz-date"} {
		if !slices.Contains(signed, must) {
			return "unsigned " + must
		}
	}
	if r.Method == http.MethodPut && !slices.Contains(signed, "content-type") {
		return "content-type not signed"
	}
	// Rebuild the request as received with only the signed headers and
	// sign it again: the signature must cover exactly what was sent.
	clone := r.Clone(context.Background())
	clone.Header = http.Header{}
	for _, h := range signed {
		if h != "host" {
			clone.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	clone.Body, clone.ContentLength = nil, 0
	clone.URL.Host = r.Host
	err = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }).SignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecret}, clone, payloadHash, "s3", testRegion, when)
	if err != nil {
		return "re-sign: " + err.Error()
	}
	if got := clone.Header.Get("Authorization"); got != auth {
		return fmt.Sprintf("signature does not match: sent %q, expected %q", auth, got)
	}
	return ""
}

func writeS3Error(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", "REQ123")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>REQ123</RequestId></Error>`, code, msg)
}

func newTestS3(t *testing.T, endpoint, bucket, prefix string) *S3 {
	t.Helper()
	s, err := NewS3(S3Config{
		Endpoint:        endpoint,
		Region:          testRegion,
		Bucket:          bucket,
		Prefix:          prefix,
		AccessKeyID:     testAccessKey,
		SecretAccessKey: testSecret,
	})
	require.NoError(t, err)
	return s
}

func TestS3RoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, srv := newFakeS3(t, "errata-images")
	s := newTestS3(t, srv.URL, "errata-images", "prod/")

	ok, err := s.Exists(ctx, "images/ab.png")
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = s.Get(ctx, "images/ab.png")
	require.ErrorIs(t, err, ErrNotFound)
	var s3err *S3Error
	require.ErrorAs(t, err, &s3err)
	require.Equal(t, "NoSuchKey", s3err.Code)
	require.Equal(t, "REQ123", s3err.RequestID)

	png := []byte("\x89PNG\r\n\x1a\n\x00\xff data")
	require.NoError(t, s.Put(ctx, "images/ab.png", png, "image/png"))
	require.NoError(t, s.Put(ctx, "images/ab.png", png, "image/png"))
	require.NoError(t, s.Put(ctx, "empty", nil, ""))

	ok, err = s.Exists(ctx, "images/ab.png")
	require.NoError(t, err)
	require.True(t, ok)
	data, ct, err := s.Get(ctx, "images/ab.png")
	require.NoError(t, err)
	require.Equal(t, png, data)
	require.Equal(t, "image/png", ct)
	data, ct, err = s.Get(ctx, "empty")
	require.NoError(t, err)
	require.Empty(t, data)
	require.Equal(t, DefaultContentType, ct)

	// Path-style addressing with the prefix; the exact bytes were stored.
	fake.mu.Lock()
	defer fake.mu.Unlock()
	require.Equal(t, map[string]fakeObject{
		"prod/images/ab.png": {data: png, contentType: "image/png"},
		"prod/empty":         {data: []byte{}, contentType: DefaultContentType},
	}, fake.objects)
	require.Equal(t, []string{
		"HEAD /errata-images/prod/images/ab.png",
		"GET /errata-images/prod/images/ab.png",
		"PUT /errata-images/prod/images/ab.png",
		"PUT /errata-images/prod/images/ab.png",
		"PUT /errata-images/prod/empty",
		"HEAD /errata-images/prod/images/ab.png",
		"GET /errata-images/prod/images/ab.png",
		"GET /errata-images/prod/empty",
	}, fake.requests)
}

func TestS3EndpointWithPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	paths := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
	}))
	t.Cleanup(srv.Close)
	s := newTestS3(t, srv.URL+"/storage/", "bucket", "")
	require.NoError(t, s.Put(ctx, "k", []byte("v"), "text/plain"))
	require.Equal(t, "/storage/bucket/k", <-paths)
}

// TestS3BehindProxyMount: a reverse proxy mounted at /storage strips its
// mount point; the service behind it checks the signature over the path
// it sees.
func TestS3BehindProxyMount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := &fakeS3{t: t, bucket: "bucket", objects: map[string]fakeObject{}}
	var mu sync.Mutex
	var wire []string
	proxy := http.StripPrefix("/storage", fake)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		wire = append(wire, r.Method+" "+r.URL.Path)
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := newTestS3(t, srv.URL+"/storage/", "bucket", "p/")
	require.NoError(t, s.Put(ctx, "k", []byte("v"), "text/plain"))
	data, ct, err := s.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "v", string(data))
	require.Equal(t, "text/plain", ct)
	require.Equal(t, []string{"PUT /storage/bucket/p/k", "GET /storage/bucket/p/k"}, wire)
	require.Equal(t, []string{"PUT /bucket/p/k", "GET /bucket/p/k"}, fake.requests)
}

// TestS3HostileKeys: keys that could leave the prefix, address another
// bucket or smuggle encoded characters are refused before any request.
func TestS3HostileKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, srv := newFakeS3(t, "errata-images")
	s := newTestS3(t, srv.URL, "errata-images", "prod/")
	for _, key := range []string{
		"", "../other/k", "images/../../k", "/errata-images/k", "a//b", "./k", ".hidden", "images/",
		"a%2f..%2fb", "a?x=1", "a#b", "a b", "a\\b", "a\x00b", "a\r\nx-amz-acl: public-read", "Images/A.png", "ümlaut",
		strings.Repeat("a", MaxKeyLength+1),
	} {
		require.ErrorIs(t, s.Put(ctx, key, []byte("v"), "text/plain"), ErrInvalidKey, "%q", key)
		_, _, err := s.Get(ctx, key)
		require.ErrorIs(t, err, ErrInvalidKey, "%q", key)
		_, err = s.Exists(ctx, key)
		require.ErrorIs(t, err, ErrInvalidKey, "%q", key)
	}
	require.Error(t, s.Put(ctx, "k", []byte("v"), "text/plain\r\nX-Amz-Acl: public-read"))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	require.Empty(t, fake.requests, "nothing reached the service")
	require.Empty(t, fake.objects)
}

func TestS3Errors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, srv := newFakeS3(t, "errata-images")

	// A missing bucket is not ErrNotFound: it is a configuration error.
	wrong := newTestS3(t, srv.URL, "other-bucket", "")
	_, _, err := wrong.Get(ctx, "k")
	require.Error(t, err)
	require.NotErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, "NoSuchBucket")

	s := newTestS3(t, srv.URL, "errata-images", "")
	fake.mu.Lock()
	fake.failStatus, fake.failCode = http.StatusServiceUnavailable, "SlowDown"
	fake.requests = nil
	fake.mu.Unlock()
	err = s.Put(ctx, "k", []byte("v"), "text/plain")
	var s3err *S3Error
	require.ErrorAs(t, err, &s3err)
	require.True(t, s3err.Retryable())
	require.Equal(t, "SlowDown", s3err.Code)
	_, err = s.Exists(ctx, "k")
	require.ErrorAs(t, err, &s3err)
	require.Equal(t, http.StatusServiceUnavailable, s3err.StatusCode)
	fake.mu.Lock()
	require.Equal(t, []string{"PUT /errata-images/k", "HEAD /errata-images/k"}, fake.requests, "each request is sent once")
	fake.mu.Unlock()

	fake.mu.Lock()
	fake.failStatus, fake.failCode = http.StatusForbidden, "AccessDenied"
	fake.mu.Unlock()
	err = s.Put(ctx, "k", []byte("v"), "text/plain")
	require.ErrorAs(t, err, &s3err)
	require.False(t, s3err.Retryable())
	require.Equal(t, "AccessDenied", s3err.Code)
	require.NotContains(t, err.Error(), testSecret)

	// A service that is not there: the transport's error, without the secret.
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	err = newTestS3(t, gone.URL, "errata-images", "").Put(ctx, "k", []byte("v"), "text/plain")
	require.Error(t, err)
	require.NotErrorAs(t, err, &s3err)
	require.NotContains(t, err.Error(), testSecret)
}

func TestS3GetSizeLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, srv := newFakeS3(t, "errata-images")
	s := newTestS3(t, srv.URL, "errata-images", "")
	require.NoError(t, s.Put(ctx, "big", make([]byte, 100), ""))
	s.maxBytes = 99
	_, _, err := s.Get(ctx, "big")
	require.ErrorContains(t, err, "limit")
}

func TestS3Canceled(t *testing.T) {
	t.Parallel()
	_, srv := newFakeS3(t, "errata-images")
	s := newTestS3(t, srv.URL, "errata-images", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Put(ctx, "k", []byte("v"), ""), context.Canceled)
}

func TestNewS3Validation(t *testing.T) {
	good := S3Config{Endpoint: "https://s3.example.com", Bucket: "bucket", AccessKeyID: "id", SecretAccessKey: "secret"}
	_, err := NewS3(good)
	require.NoError(t, err)
	tests := []struct {
		name   string
		mutate func(*S3Config)
	}{
		{"no endpoint", func(c *S3Config) { c.Endpoint = "" }},
		{"bad scheme", func(c *S3Config) { c.Endpoint = "ftp://s3.example.com" }},
		{"no host", func(c *S3Config) { c.Endpoint = "https://" }},
		{"user info", func(c *S3Config) { c.Endpoint = "https://id:secret@s3.example.com" }},
		{"query", func(c *S3Config) { c.Endpoint = "https://s3.example.com?x=1" }},
		{"short bucket", func(c *S3Config) { c.Bucket = "ab" }},
		{"bucket upper case", func(c *S3Config) { c.Bucket = "Bucket" }},
		{"bucket slash", func(c *S3Config) { c.Bucket = "a/b" }},
		{"bucket ends with dash", func(c *S3Config) { c.Bucket = "bucket-" }},
		{"prefix without slash", func(c *S3Config) { c.Prefix = "prod" }},
		{"prefix escaping", func(c *S3Config) { c.Prefix = "../" }},
		{"no key id", func(c *S3Config) { c.AccessKeyID = "" }},
		{"no secret", func(c *S3Config) { c.SecretAccessKey = "" }},
		{"bad region", func(c *S3Config) { c.Region = "eu/west" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.mutate(&c)
			_, err := NewS3(c)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "secret@")
		})
	}
}

func TestS3ConfigDoesNotPrintSecret(t *testing.T) {
	c := S3Config{SecretAccessKey: logging.Secret("super-secret-value")}
	require.NotContains(t, fmt.Sprintf("%v %+v %#v", c, c, c), "super-secret-value")
	s, err := NewS3(S3Config{Endpoint: "https://s3.example.com", Bucket: "bucket", AccessKeyID: "id", SecretAccessKey: c.SecretAccessKey})
	require.NoError(t, err)
	require.NotContains(t, fmt.Sprintf("%v %+v %#v", s, *s, s), "super-secret-value")
}
