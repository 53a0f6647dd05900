package blobstore

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/errata-dev/errata/internal/logging"
)

// Config selects and configures a store.
type Config struct {
	// URL selects the store:
	//
	//	/var/lib/errata/blobs                     a directory (Dir)
	//	file:///var/lib/errata/blobs              the same
	//	s3://bucket                               an S3 bucket on AWS (us-east-1)
	//	s3://bucket/some/prefix?endpoint=http://minio:9000&region=us-east-1
	//
	// For s3, the path is the key prefix, "endpoint" defaults to
	// https://s3.<region>.amazonaws.com and "region" to DefaultS3Region.
	// Credentials never go in the URL.
	URL string
	// AccessKeyID and SecretAccessKey are the S3 credentials.
	AccessKeyID     string
	SecretAccessKey logging.Secret
	// Transport is passed to S3Config (nil: minio-go's default).
	Transport http.RoundTripper
}

// Open returns the store cfg.URL names.
func Open(cfg Config) (Store, error) {
	raw := strings.TrimSpace(cfg.URL)
	switch {
	case raw == "":
		return nil, errors.New("blobstore: no store URL configured")
	case strings.HasPrefix(raw, "s3://"):
		sc, err := parseS3URL(raw)
		if err != nil {
			return nil, err
		}
		sc.AccessKeyID = cfg.AccessKeyID
		sc.SecretAccessKey = cfg.SecretAccessKey
		sc.Transport = cfg.Transport
		return NewS3(sc)
	case strings.HasPrefix(raw, "file:"):
		u, err := url.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("blobstore: store URL: %w", err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("blobstore: file URL %q names a host; use file:///absolute/path", raw)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("blobstore: file URL %q needs an absolute path (file:///...)", raw)
		}
		return NewDir(u.Path)
	case strings.Contains(raw, "://"):
		return nil, fmt.Errorf("blobstore: store URL %q: unsupported scheme (use a path, file:// or s3://)", redactURL(raw))
	default:
		return NewDir(raw)
	}
}

// parseS3URL turns s3://bucket/prefix?endpoint=...&region=... into an
// S3Config without credentials.
func parseS3URL(raw string) (S3Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return S3Config{}, fmt.Errorf("blobstore: store URL: %w", err)
	}
	if u.User != nil {
		return S3Config{}, errors.New("blobstore: s3 URL must not carry credentials; configure the access key separately")
	}
	q := u.Query()
	for name := range q {
		if name != "endpoint" && name != "region" {
			return S3Config{}, fmt.Errorf("blobstore: s3 URL: unknown parameter %q (known: endpoint, region)", name)
		}
	}
	region := q.Get("region")
	if region == "" {
		region = DefaultS3Region
	}
	endpoint := q.Get("endpoint")
	if endpoint == "" {
		endpoint = "https://s3." + region + ".amazonaws.com"
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return S3Config{Endpoint: endpoint, Region: region, Bucket: u.Host, Prefix: prefix}, nil
}

// redactURL hides user info in a URL that is about to be reported.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(unparsable URL)"
}
