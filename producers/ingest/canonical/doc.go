// Package canonical fetches a post's canonical content from its platform,
// server side, so that registerObservedVersion can derive the version from
// what the platform serves rather than from what a client claims (spec 2.9,
// 2.13 point 2).
//
// Each platform method returns the canonical HTML, its normalized text
// (through the same events/content functions the client-side path uses,
// so hashes agree with the extension's) and the identity the platform
// reported. Bluesky posts are plain text: their canonical text is the
// record's text from the public AppView, normalized like any observed
// text, and there is no HTML. X and Threads have no public API and are
// never fetched. Identity that differs from what the client claimed is returned as
// IdentityMismatch values, not as an error: the server's identity wins and the
// caller records an integrity anomaly. Any error means "not verified": the
// caller falls back to the client's content (CLIENT_FALLBACK) and records the
// error message, which never contains credentials (none are sent).
//
// All traffic goes through an httpsafe.Client. Endpoints are injectable so
// tests can serve recorded responses from an httptest server.
package canonical
