package api

import (
	"bytes"
	"errors"

	"github.com/valyala/fasthttp"
)

// Why a request's body length is ambiguous.
var (
	errDuplicateContentLength = errors.New("Content-Length is given more than once")
	errLengthAndEncoding      = errors.New("Content-Length and Transfer-Encoding are both given")
)

// hardenServer configures the HTTP server under fiber for hostile clients:
//
//   - Its error texts never quote the request (fasthttp would put a
//     snippet of the raw headers, proxy headers and keys included, into
//     the error that becomes the 400 answer).
//   - A request whose body length is ambiguous, Content-Length given twice
//     or next to Transfer-Encoding, is refused. fasthttp would frame it by
//     the last Content-Length (or the chunked encoding) while a proxy in
//     front may have used another, and the rest of the stream would then be
//     read as a further request (request smuggling). Its body is not read
//     (the length is set to 0 as soon as the headers are in), it is answered
//     400 through the server's error handler, like every request the server
//     refuses, so the request log sees it, and its connection is closed, so
//     nothing sent after it is ever read.
func hardenServer(srv *fasthttp.Server) {
	srv.SecureErrorLogMessage = true
	srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if ambiguousFraming(h) != nil {
			h.SetContentLength(0)
		}
		return fasthttp.RequestConfig{}
	}
	next := srv.Handler
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		if err := ambiguousFraming(&ctx.Request.Header); err != nil {
			ctx.SetConnectionClose()
			// Read at call time: the request log wraps it after New.
			srv.ErrorHandler(ctx, err)
			return
		}
		next(ctx)
	}
}

var (
	headerContentLength    = []byte("Content-Length")
	headerTransferEncoding = []byte("Transfer-Encoding")
)

// ambiguousFraming checks the raw header lines as received: fasthttp's
// parsed header keeps only the last Content-Length.
func ambiguousFraming(h *fasthttp.RequestHeader) error {
	var lengths, encodings int
	raw := h.RawHeaders()
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		name, _, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		name = bytes.TrimSpace(name)
		switch {
		case bytes.EqualFold(name, headerContentLength):
			lengths++
		case bytes.EqualFold(name, headerTransferEncoding):
			encodings++
		}
	}
	switch {
	case lengths > 1:
		return errDuplicateContentLength
	case lengths > 0 && encodings > 0:
		return errLengthAndEncoding
	}
	return nil
}
