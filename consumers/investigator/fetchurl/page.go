package fetchurl

// The extraction fetch_url gives the model, for other readers of web pages
// (the workbench's URL submissions): one way to turn a page into its
// readable text.

// IsHTML reports whether a response with this Content-Type header and body
// is an HTML document (a missing or generic header is sniffed from the
// body; a body with NUL bytes at its start is binary whatever it claims).
func IsHTML(contentTypeHeader string, body []byte) bool {
	mediaType, _ := contentType(contentTypeHeader, body)
	return classify(mediaType, body) == kindHTML
}

// ReadHTML returns the title and readable text of an HTML document: the
// body is decoded by its byte order mark, the header's charset, a <meta>
// declaration, else as UTF-8 (windows-1252 when invalid), then reduced to
// the content of its <main>, largest <article> or body, as fetch_url does.
func ReadHTML(contentTypeHeader string, body []byte) (title, text string) {
	mediaType, params := contentType(contentTypeHeader, body)
	return extractHTML(decode(body, mediaType, params))
}
