package blobstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/errata-dev/errata/internal/logging"
)

// Defaults of an S3 store.
const (
	DefaultS3Region       = "us-east-1"
	DefaultS3Timeout      = 60 * time.Second
	DefaultMaxObjectBytes = 64 << 20
)

// S3Config configures an S3-compatible store.
type S3Config struct {
	// Endpoint is the service's base URL: https://s3.eu-central-1.amazonaws.com,
	// http://minio:9000, https://<account>.r2.cloudflarestorage.com. A path
	// after the host is the mount point of a reverse proxy that strips it
	// before the service: it is put in front of every request path, and the
	// signature covers the path the service sees.
	Endpoint string
	// Region is part of every signature: the bucket's AWS region, "auto"
	// for R2, usually "us-east-1" for MinIO. Empty: DefaultS3Region.
	Region string
	// Bucket is addressed path-style (<endpoint>/<bucket>/<key>), which
	// every S3-compatible server understands without DNS set-up.
	Bucket string
	// Prefix, when set, is put before every key; it must end with "/".
	Prefix string
	// AccessKeyID and SecretAccessKey sign every request (both required).
	AccessKeyID     string
	SecretAccessKey logging.Secret
	// Transport sends the requests. Nil: minio-go's default transport.
	// The endpoint is operator configuration, not user input, so this is
	// a plain transport: the SSRF guard of internal/httpsafe would refuse
	// a MinIO on the internal network.
	Transport http.RoundTripper
	// Timeout bounds each operation, reading the object included. Zero:
	// DefaultS3Timeout.
	Timeout time.Duration
	// MaxObjectBytes bounds what Get reads. Zero: DefaultMaxObjectBytes.
	MaxObjectBytes int64
}

// S3 stores objects in a bucket of an S3-compatible service through
// minio-go, every request signed with AWS Signature Version 4 and sent
// once: callers decide about retries (S3Error.Retryable).
type S3 struct {
	client   *minio.Core
	endpoint *url.URL
	region   string
	bucket   string
	prefix   string
	timeout  time.Duration
	maxBytes int64
}

var _ Store = (*S3)(nil)

// S3Error is a response the service refused, with the code and message
// from its XML error body when there is one.
type S3Error struct {
	Method     string
	Key        string
	StatusCode int
	Code       string
	Message    string
	RequestID  string
}

func (e *S3Error) Error() string {
	msg := fmt.Sprintf("blobstore: s3 %s %s: HTTP %d", e.Method, e.Key, e.StatusCode)
	if e.Code != "" {
		msg += " " + e.Code
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RequestID != "" {
		msg += " (request id " + e.RequestID + ")"
	}
	return msg
}

// Unwrap makes a missing key match ErrNotFound. A missing bucket does not:
// that is a configuration error.
func (e *S3Error) Unwrap() error {
	if e.StatusCode == http.StatusNotFound && (e.Code == "" || e.Code == minio.NoSuchKey) {
		return ErrNotFound
	}
	return nil
}

// Retryable reports whether the same request may succeed later (throttled
// or a server error).
func (e *S3Error) Retryable() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode == http.StatusRequestTimeout || e.StatusCode >= 500
}

// NewS3 checks cfg and returns the store; it makes no request.
func NewS3(cfg S3Config) (*S3, error) {
	u, err := url.Parse(cfg.Endpoint)
	switch {
	case cfg.Endpoint == "":
		return nil, errors.New("blobstore: s3 endpoint is required")
	case err != nil:
		return nil, fmt.Errorf("blobstore: s3 endpoint: %w", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("blobstore: s3 endpoint %q: scheme must be http or https", u.Redacted())
	case u.Host == "":
		return nil, fmt.Errorf("blobstore: s3 endpoint %q: no host", u.Redacted())
	case u.User != nil:
		return nil, errors.New("blobstore: s3 endpoint must not carry credentials; use AccessKeyID and SecretAccessKey")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("blobstore: s3 endpoint %q: no query or fragment allowed", u.Redacted())
	}
	if err := validBucket(cfg.Bucket); err != nil {
		return nil, err
	}
	if err := validPrefix(cfg.Prefix); err != nil {
		return nil, fmt.Errorf("blobstore: s3: %w", err)
	}
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return nil, errors.New("blobstore: s3 access key id and secret access key are required")
	}
	region := cfg.Region
	if region == "" {
		region = DefaultS3Region
	}
	if strings.ContainsAny(region, "/ \n") {
		return nil, fmt.Errorf("blobstore: s3 region %q is not valid", region)
	}
	ep := *u
	ep.Path = strings.TrimSuffix(ep.Path, "/")
	ep.RawPath = ""

	secure := ep.Scheme == "https"
	transport := cfg.Transport
	if transport == nil {
		if transport, err = minio.DefaultTransport(secure); err != nil {
			return nil, fmt.Errorf("blobstore: s3 transport: %w", err)
		}
	}
	if ep.Path != "" {
		transport = mountTransport{mount: ep.Path, next: transport}
	}
	client, err := minio.NewCore(ep.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey.Reveal(), ""),
		Secure:       secure,
		Transport:    transport,
		Region:       region, // also spares a GetBucketLocation request
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1, // one attempt: callers decide about retries
	})
	if err != nil {
		return nil, fmt.Errorf("blobstore: s3 endpoint %q: %w", ep.Redacted(), err)
	}
	// Talk to the host configured, never to a dual-stack name derived from it.
	client.SetS3EnableDualstack(false)

	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultS3Timeout
	}
	maxBytes := cfg.MaxObjectBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxObjectBytes
	}
	return &S3{
		client:   client,
		endpoint: &ep,
		region:   region,
		bucket:   cfg.Bucket,
		prefix:   cfg.Prefix,
		timeout:  timeout,
		maxBytes: maxBytes,
	}, nil
}

// validBucket follows S3's bucket naming rules: 3 to 63 lower-case
// letters, digits, dots and hyphens, starting and ending with a letter or
// digit.
func validBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("blobstore: s3 bucket %q must have 3 to 63 characters", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (c != '.' && c != '-' || i == 0 || i == len(b)-1) {
			return fmt.Errorf("blobstore: s3 bucket %q is not a valid bucket name", b)
		}
	}
	return nil
}

// mountTransport puts the endpoint's path in front of every request path.
// minio-go addresses a service at its root and signs that path; a reverse
// proxy mounted below its host strips the mount point and forwards exactly
// the signed path.
type mountTransport struct {
	mount string
	next  http.RoundTripper
}

func (t mountTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.URL.Path = t.mount + req.URL.Path
	if req.URL.RawPath != "" {
		r.URL.RawPath = t.mount + req.URL.RawPath
	}
	return t.next.RoundTrip(r)
}

// fail turns what minio-go returned into this package's errors: an
// *S3Error for a response the service refused, the transport's or the
// context's error otherwise.
func fail(method, key string, err error) error {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.StatusCode != 0 {
		return &S3Error{Method: method, Key: key, StatusCode: resp.StatusCode, Code: resp.Code,
			Message: resp.Message, RequestID: resp.RequestID}
	}
	return fmt.Errorf("blobstore: s3 %s %s: %w", method, key, err)
}

// Put implements Store.
func (s *S3) Put(ctx context.Context, key string, data []byte, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if contentType == "" {
		contentType = DefaultContentType
	}
	if err := validContentType(contentType); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	sum := sha256.Sum256(data)
	// The payload's SHA-256 is signed in the x-amz-content-sha256 header of
	// one plain PUT: minio-go's streaming (chunked) signature is off, and
	// no multipart upload is started for these small objects.
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)), "",
		hex.EncodeToString(sum[:]), minio.PutObjectOptions{ContentType: contentType, DisableContentSha256: true})
	if err != nil {
		return fail(http.MethodPut, key, err)
	}
	return nil
}

// Get implements Store.
func (s *S3) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := ValidateKey(key); err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	body, info, _, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, "", fail(http.MethodGet, key, err)
	}
	defer body.Close()
	if info.Size > s.maxBytes {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: object of %d bytes exceeds the %d byte limit", key, info.Size, s.maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(body, s.maxBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: read body: %w", key, err)
	}
	if int64(len(data)) > s.maxBytes {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: object exceeds the %d byte limit", key, s.maxBytes)
	}
	if info.Size >= 0 && int64(len(data)) != info.Size {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: got %d of %d bytes", key, len(data), info.Size)
	}
	contentType := info.ContentType
	if contentType == "" {
		contentType = DefaultContentType
	}
	return data, contentType, nil
}

// Exists implements Store.
func (s *S3) Exists(ctx context.Context, key string) (bool, error) {
	if err := ValidateKey(key); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.client.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if err = fail(http.MethodHead, key, err); errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return false, err
}
