package httpsafe

import "errors"

// Errors callers branch on with errors.Is. Every error Client.Do returns for
// a refused or failed fetch wraps one of these or a transport error.
var (
	// ErrInvalidURL: the URL does not parse, or has no host, or carries
	// user info (credentials in a URL are never sent).
	ErrInvalidURL = errors.New("httpsafe: invalid URL")
	// ErrBlockedScheme: a scheme other than http or https, on the first
	// request or on a redirect.
	ErrBlockedScheme = errors.New("httpsafe: scheme not allowed")
	// ErrBlockedAddress: the host is, or resolves to, an address that must not
	// be reached (private, loopback, link-local, reserved, ...).
	ErrBlockedAddress = errors.New("httpsafe: address not allowed")
	// ErrBlockedPort: a port outside the allowed set.
	ErrBlockedPort = errors.New("httpsafe: port not allowed")
	// ErrTooManyRedirects: the redirect limit was reached.
	ErrTooManyRedirects = errors.New("httpsafe: too many redirects")
	// ErrTooLarge: the response body exceeds the size limit.
	ErrTooLarge = errors.New("httpsafe: response too large")
	// ErrTimeout: the total timeout or the caller's deadline expired.
	ErrTimeout = errors.New("httpsafe: timeout")
)

// IsPolicyError reports whether err is a refusal by this package's policy
// (blocked URL, address, port or scheme; too many redirects; too large): a
// retry would be refused the same way.
func IsPolicyError(err error) bool {
	for _, target := range []error{
		ErrInvalidURL, ErrBlockedScheme, ErrBlockedAddress, ErrBlockedPort,
		ErrTooManyRedirects, ErrTooLarge,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
