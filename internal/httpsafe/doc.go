// Package httpsafe is the one HTTP client Errata uses for every outbound
// fetch whose target is influenced by users: platform verification of
// observed posts today, investigation-time image downloads and the LLM's
// fetch_url tool later.
//
// Those targets come from untrusted input (a post id, a language code, an
// image URL, a redirect chosen by a remote server), so the client defends
// against server-side request forgery:
//
//   - every address is checked when the connection is dialled, after DNS
//     resolution, so neither a hostname that resolves to an internal address
//     nor DNS rebinding between a check and the connect can reach the
//     internal network (see IsBlockedAddr for the blocked ranges);
//   - only http and https URLs without user info, and only ports 80 and 443
//     unless configured otherwise;
//   - every redirect hop is re-validated, and at most 5 are followed;
//   - a total timeout (10 s) covers dialling, redirects and the body;
//   - bodies are read whole up to a size limit (5 MiB by default, settable
//     per request); a larger body is an ErrTooLarge error, never a silent
//     truncation that could be mistaken for the real content;
//   - proxies from the environment (HTTP_PROXY, ...) are ignored, so the
//     process environment cannot route fetches around the checks.
//
// Nothing here is configured from the environment. The only way to reach a
// loopback address is AllowLoopbackForTests or AllowLoopbackAddrsForTests,
// which only _test.go files call: a test over every other file of the
// module proves it, so no production binary can open the internal network
// through them (and none links the testing package).
package httpsafe
