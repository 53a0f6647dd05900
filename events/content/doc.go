// Package content turns platform HTML and observed text into the canonical
// text, version identity and Markdown that the rest of Errata stores, hashes
// and hands to investigators.
//
// Everything here must agree byte for byte with the OpenErrata reference
// implementation (the browser extension computes the same values and the API
// rejects a mismatch), so the rules follow that implementation's observable
// behaviour rather than Go conventions:
//
//   - Text semantics are JavaScript's: whitespace is the ECMAScript \s set,
//     lengths and offsets count UTF-16 code units, lower-casing and JSON
//     escaping follow String.prototype.toLowerCase and JSON.stringify.
//   - HTML is parsed as an HTML5 fragment in a <template> context (what parse5
//     does when no context element is given), so table parts at the top level
//     keep their structure.
//   - Markdown follows the Turndown 7.2 converter configured the way the
//     reference renderer configures it (ATX headings, "-" bullets, fenced code,
//     inline emphasis flattened to plain text, [IMAGE:N] placeholders).
//
// The package is pure: no I/O, no globals that change, safe for concurrent use.
// Untrusted input never panics; the only HTML input rejected is markup nested
// deeper than the Go HTML parser's 512-element limit.
//
// Invalid UTF-8 in a Go string has no JavaScript counterpart; every entry
// point replaces each invalid byte with U+FFFD before doing anything else.
package content
