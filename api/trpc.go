package api

import (
	"github.com/gofiber/fiber/v2"
)

// Code is a tRPC error code name (CONTRACT.md, "Envelopes").
type Code string

// The tRPC error codes Errata emits.
const (
	CodeParseError          Code = "PARSE_ERROR"
	CodeBadRequest          Code = "BAD_REQUEST"
	CodeUnauthorized        Code = "UNAUTHORIZED"
	CodeForbidden           Code = "FORBIDDEN"
	CodeNotFound            Code = "NOT_FOUND"
	CodeConflict            Code = "CONFLICT"
	CodePreconditionFailed  Code = "PRECONDITION_FAILED"
	CodeTimeout             Code = "TIMEOUT"
	CodePayloadTooLarge     Code = "PAYLOAD_TOO_LARGE"
	CodeTooManyRequests     Code = "TOO_MANY_REQUESTS"
	CodeInternalServerError Code = "INTERNAL_SERVER_ERROR"
)

var codeNumbers = map[Code]struct {
	rpc  int
	http int
}{
	CodeParseError:          {-32700, 400},
	CodeBadRequest:          {-32600, 400},
	CodeUnauthorized:        {-32001, 401},
	CodeForbidden:           {-32003, 403},
	CodeNotFound:            {-32004, 404},
	CodeConflict:            {-32009, 409},
	CodePreconditionFailed:  {-32012, 412},
	CodeTimeout:             {-32008, 408},
	CodePayloadTooLarge:     {-32013, 413},
	CodeTooManyRequests:     {-32029, 429},
	CodeInternalServerError: {-32603, 500},
}

// codeOfStatus is the code whose HTTP status is status; BAD_REQUEST for a
// 4xx status no code has, INTERNAL_SERVER_ERROR for any other.
func codeOfStatus(status int) Code {
	if status == 400 {
		return CodeBadRequest
	}
	for code, n := range codeNumbers {
		if n.http == status {
			return code
		}
	}
	if status >= 400 && status < 500 {
		return CodeBadRequest
	}
	return CodeInternalServerError
}

// Error is a procedure failure rendered as a tRPC error envelope.
type Error struct {
	Code    Code
	Message string
	// Extra are additional data fields (e.g. openerrataCode).
	Extra map[string]any
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func newError(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

type errorEnvelope struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Message string         `json:"message"`
	Code    int            `json:"code"`
	Data    map[string]any `json:"data"`
}

// writeError renders e for the procedure path (e.g. "post.recordViewAndGetStatus").
func writeError(c *fiber.Ctx, path string, e *Error) error {
	n, ok := codeNumbers[e.Code]
	if !ok {
		n = codeNumbers[CodeInternalServerError]
	}
	data := map[string]any{"code": string(e.Code), "httpStatus": n.http, "path": path}
	for k, v := range e.Extra {
		data[k] = v
	}
	return c.Status(n.http).JSON(errorEnvelope{Error: errorBody{Message: e.Message, Code: n.rpc, Data: data}})
}

type resultEnvelope struct {
	Result resultBody `json:"result"`
}

type resultBody struct {
	Data any `json:"data"`
}

// writeResult renders a successful procedure output.
func writeResult(c *fiber.Ctx, data any) error {
	return c.Status(fiber.StatusOK).JSON(resultEnvelope{Result: resultBody{Data: data}})
}
