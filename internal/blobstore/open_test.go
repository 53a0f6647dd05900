package blobstore

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	creds := func(url string) Config {
		return Config{URL: url, AccessKeyID: "id", SecretAccessKey: "secret"}
	}

	t.Run("bare path", func(t *testing.T) {
		st, err := Open(Config{URL: filepath.Join(dir, "a")})
		require.NoError(t, err)
		require.Equal(t, filepath.Join(dir, "a"), st.(*Dir).Root())
	})
	t.Run("file URL", func(t *testing.T) {
		st, err := Open(Config{URL: "file://" + filepath.ToSlash(filepath.Join(dir, "b"))})
		require.NoError(t, err)
		require.Equal(t, filepath.Join(dir, "b"), st.(*Dir).Root())
	})

	s3Tests := []struct {
		url                              string
		endpoint, region, bucket, prefix string
	}{
		{"s3://errata-images", "https://s3.us-east-1.amazonaws.com", "us-east-1", "errata-images", ""},
		{"s3://errata-images/?region=eu-central-1", "https://s3.eu-central-1.amazonaws.com", "eu-central-1", "errata-images", ""},
		{"s3://errata/blobs/prod?endpoint=http://minio:9000&region=us-east-1", "http://minio:9000", "us-east-1", "errata", "blobs/prod/"},
		{"s3://media/x/?endpoint=https://acc.r2.cloudflarestorage.com&region=auto", "https://acc.r2.cloudflarestorage.com", "auto", "media", "x/"},
	}
	for _, tc := range s3Tests {
		t.Run(tc.url, func(t *testing.T) {
			st, err := Open(creds(tc.url))
			require.NoError(t, err)
			s := st.(*S3)
			require.Equal(t, tc.endpoint, s.endpoint.String())
			require.Equal(t, tc.region, s.region)
			require.Equal(t, tc.bucket, s.bucket)
			require.Equal(t, tc.prefix, s.prefix)
		})
	}

	for _, bad := range []Config{
		{URL: ""},
		{URL: "   "},
		{URL: "file://host/path"},
		{URL: "file:relative/path"},
		{URL: "gs://bucket"},
		creds("s3://id:secret@bucket"),
		creds("s3://bucket?endpoint=http://minio:9000&acl=public"),
		creds("s3://Bad_Bucket"),
		creds("s3://bucket?endpoint=ftp://x"),
		{URL: "s3://bucket"}, // no credentials
	} {
		t.Run("bad "+bad.URL, func(t *testing.T) {
			_, err := Open(bad)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "secret@")
		})
	}
}
