package blobstore

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

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
	// after the host (a reverse proxy's mount point) is kept.
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
	// HTTPClient sends the requests. Nil: a client with DefaultS3Timeout.
	// The endpoint is operator configuration, not user input, so this is
	// a plain client: the SSRF guard of internal/httpsafe would refuse a
	// MinIO on the internal network.
	HTTPClient *http.Client
	// MaxObjectBytes bounds what Get reads. Zero: DefaultMaxObjectBytes.
	MaxObjectBytes int64
	// Now is the signing clock. Nil: time.Now.
	Now func() time.Time
}

// S3 stores objects in a bucket of an S3-compatible service, with requests
// signed by AWS Signature Version 4.
type S3 struct {
	endpoint *url.URL
	bucket   string
	prefix   string
	signer   signer
	client   *http.Client
	maxBytes int64
	now      func() time.Time
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
	if e.StatusCode == http.StatusNotFound && (e.Code == "" || e.Code == "NoSuchKey") {
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
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: DefaultS3Timeout}
	}
	maxBytes := cfg.MaxObjectBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxObjectBytes
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	ep := *u
	ep.Path = strings.TrimSuffix(ep.Path, "/")
	ep.RawPath = ""
	return &S3{
		endpoint: &ep,
		bucket:   cfg.Bucket,
		prefix:   cfg.Prefix,
		signer:   signer{accessKeyID: cfg.AccessKeyID, secret: cfg.SecretAccessKey, region: region, service: "s3"},
		client:   client,
		maxBytes: maxBytes,
		now:      now,
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

// objectURL is the path-style URL of key.
func (s *S3) objectURL(key string) *url.URL {
	u := *s.endpoint
	u.Path = u.Path + "/" + s.bucket + "/" + s.prefix + key
	// Keys and bucket names are plain ASCII without reserved characters,
	// but keep the wire path identical to the signed one regardless.
	u.RawPath = awsEscape(u.Path, false)
	return &u
}

// do signs and sends one request and returns the response with its body
// still open; a non-2xx status is returned as an *S3Error.
func (s *S3) do(ctx context.Context, method, key string, body []byte, header http.Header) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.objectURL(key).String(), rd)
	if err != nil {
		return nil, fmt.Errorf("blobstore: s3 %s %s: %w", method, key, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	payloadHash := emptyPayloadHash
	if body != nil {
		payloadHash = sha256Hex(body)
	}
	s.signer.sign(req, payloadHash, s.now())

	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("blobstore: s3 %s %s: %w", method, key, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	e := &S3Error{Method: method, Key: key, StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Amz-Request-Id")}
	if method != http.MethodHead {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var xe struct {
			Code      string `xml:"Code"`
			Message   string `xml:"Message"`
			RequestID string `xml:"RequestId"`
		}
		if xml.Unmarshal(raw, &xe) == nil {
			e.Code, e.Message = xe.Code, xe.Message
			if e.RequestID == "" {
				e.RequestID = xe.RequestID
			}
		}
	}
	return nil, e
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
	if data == nil {
		data = []byte{}
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	resp, err := s.do(ctx, http.MethodPut, key, data, h)
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// Get implements Store.
func (s *S3) Get(ctx context.Context, key string) ([]byte, string, error) {
	if err := ValidateKey(key); err != nil {
		return nil, "", err
	}
	resp, err := s.do(ctx, http.MethodGet, key, nil, nil)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	if resp.ContentLength > s.maxBytes {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: object of %d bytes exceeds the %d byte limit", key, resp.ContentLength, s.maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: read body: %w", key, err)
	}
	if int64(len(data)) > s.maxBytes {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: object exceeds the %d byte limit", key, s.maxBytes)
	}
	if resp.ContentLength >= 0 && int64(len(data)) != resp.ContentLength {
		return nil, "", fmt.Errorf("blobstore: s3 GET %s: got %d of %d bytes", key, len(data), resp.ContentLength)
	}
	contentType := resp.Header.Get("Content-Type")
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
	resp, err := s.do(ctx, http.MethodHead, key, nil, nil)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	drain(resp)
	return true, nil
}

// drain reads a little of what is left so the connection can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}
