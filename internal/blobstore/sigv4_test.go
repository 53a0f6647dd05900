package blobstore

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/internal/logging"
)

// TestSignerAWSExample signs the GET Object example of Amazon's
// "Signature Calculations for the Authorization Header" S3 documentation
// (examplebucket, test.txt, Range bytes=0-9, 2013-05-24, us-east-1, the
// documentation's example credentials) and checks every intermediate value
// the documentation publishes.
func TestSignerAWSExample(t *testing.T) {
	s := signer{
		accessKeyID: "AKIAIOSFODNN7EXAMPLE",
		secret:      logging.Secret("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
		region:      "us-east-1",
		service:     "s3",
	}
	when := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	req, err := http.NewRequest(http.MethodGet, "https://examplebucket.s3.amazonaws.com/test.txt", nil)
	require.NoError(t, err)
	req.Header.Set("Range", "bytes=0-9")
	s.sign(req, emptyPayloadHash, when)

	canonical, signed := canonicalRequest(req, emptyPayloadHash)
	require.Equal(t, "GET\n"+
		"/test.txt\n"+
		"\n"+
		"host:examplebucket.s3.amazonaws.com\n"+
		"range:bytes=0-9\n"+
		"x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"+
		"x-amz-date:20130524T000000Z\n"+
		"\n"+
		"host;range;x-amz-content-sha256;x-amz-date\n"+
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", canonical)
	require.Equal(t, "host;range;x-amz-content-sha256;x-amz-date", signed)

	require.Equal(t, "AWS4-HMAC-SHA256\n"+
		"20130524T000000Z\n"+
		"20130524/us-east-1/s3/aws4_request\n"+
		"7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
		stringToSign(when, s.scope(when), canonical))

	require.Equal(t, "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "+
		"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "+
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
		req.Header.Get("Authorization"))
	require.Equal(t, "20130524T000000Z", req.Header.Get("X-Amz-Date"))
}

func TestAWSEscape(t *testing.T) {
	tests := []struct {
		in          string
		encodeSlash bool
		want        string
	}{
		{"/bucket/images/ab.png", false, "/bucket/images/ab.png"},
		{"/test$file.text", false, "/test%24file.text"},
		{"a b+c~d", true, "a%20b%2Bc~d"},
		{"x/y", true, "x%2Fy"},
		{"é", false, "%C3%A9"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, awsEscape(tc.in, tc.encodeSlash), tc.in)
	}
}

func TestCanonicalQuery(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "https://h/?prefix=a%2Fb&list-type=2&acl&b=2&b=1", nil)
	require.NoError(t, err)
	require.Equal(t, "acl=&b=1&b=2&list-type=2&prefix=a%2Fb", canonicalQuery(req.URL.Query()))
}

func TestNormalizeHeaderValue(t *testing.T) {
	require.Equal(t, "a b c", normalizeHeaderValue("  a   b c  "))
}
