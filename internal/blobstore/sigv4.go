package blobstore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/errata-dev/errata/internal/logging"
)

// AWS Signature Version 4 for requests with an Authorization header, as
// S3 and every S3-compatible store accept it. Only what this package sends
// is covered: a single-chunk payload whose SHA-256 is known up front.

const (
	sigAlgorithm  = "AWS4-HMAC-SHA256"
	amzDateFormat = "20060102T150405Z"
	// emptyPayloadHash is the hex SHA-256 of no bytes (GET and HEAD).
	emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// signer signs requests for one key, region and service.
type signer struct {
	accessKeyID string
	secret      logging.Secret
	region      string
	service     string
}

// sign sets X-Amz-Date, X-Amz-Content-Sha256 and Authorization on req.
// Every header already on req (plus Host) is signed, so set the headers to
// protect before calling sign; headers the transport adds later
// (User-Agent, Accept-Encoding) stay unsigned, which SigV4 allows.
func (s signer) sign(req *http.Request, payloadHash string, now time.Time) {
	now = now.UTC()
	req.Header.Set("X-Amz-Date", now.Format(amzDateFormat))
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	canonical, signedHeaders := canonicalRequest(req, payloadHash)
	scope := s.scope(now)
	toSign := stringToSign(now, scope, canonical)
	signature := hex.EncodeToString(hmacSHA256(s.signingKey(now), toSign))
	req.Header.Set("Authorization", sigAlgorithm+" Credential="+s.accessKeyID+"/"+scope+
		", SignedHeaders="+signedHeaders+", Signature="+signature)
}

// scope is date/region/service/aws4_request.
func (s signer) scope(t time.Time) string {
	return t.Format("20060102") + "/" + s.region + "/" + s.service + "/aws4_request"
}

// signingKey derives the day's key from the secret through the HMAC chain
// date, region, service, "aws4_request".
func (s signer) signingKey(t time.Time) []byte {
	k := hmacSHA256([]byte("AWS4"+s.secret.Reveal()), t.Format("20060102"))
	k = hmacSHA256(k, s.region)
	k = hmacSHA256(k, s.service)
	return hmacSHA256(k, "aws4_request")
}

func stringToSign(t time.Time, scope, canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	return sigAlgorithm + "\n" + t.Format(amzDateFormat) + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
}

// canonicalRequest returns the canonical form of req and the sorted,
// semicolon-separated names of the signed headers.
func canonicalRequest(req *http.Request, payloadHash string) (canonical, signedHeaders string) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	headers := map[string]string{"host": normalizeHeaderValue(host)}
	for name, values := range req.Header {
		lower := strings.ToLower(name)
		if lower == "authorization" {
			continue
		}
		normalized := make([]string, len(values))
		for i, v := range values {
			normalized[i] = normalizeHeaderValue(v)
		}
		headers[lower] = strings.Join(normalized, ",")
	}
	names := make([]string, 0, len(headers))
	for name := range headers {
		names = append(names, name)
	}
	sort.Strings(names)

	var b strings.Builder
	b.WriteString(req.Method)
	b.WriteByte('\n')
	b.WriteString(canonicalURI(req.URL))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(req.URL.Query()))
	b.WriteByte('\n')
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(headers[name])
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	signedHeaders = strings.Join(names, ";")
	b.WriteString(signedHeaders)
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String(), signedHeaders
}

// canonicalURI is the path, each byte outside the unreserved set
// percent-encoded once (S3 does not normalize or double-encode paths).
func canonicalURI(u *url.URL) string {
	p := u.Path
	if p == "" {
		return "/"
	}
	return awsEscape(p, false)
}

// canonicalQuery sorts parameters by name, then value, and encodes both.
func canonicalQuery(q url.Values) string {
	if len(q) == 0 {
		return ""
	}
	type pair struct{ k, v string }
	var pairs []pair
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, pair{awsEscape(k, true), awsEscape(v, true)})
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// awsEscape percent-encodes every byte except the RFC 3986 unreserved
// characters (and '/' unless encodeSlash), with upper-case hex digits.
func awsEscape(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// normalizeHeaderValue trims the value and collapses inner runs of spaces.
func normalizeHeaderValue(v string) string {
	return strings.Join(strings.Fields(v), " ")
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
