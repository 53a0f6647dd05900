// Package parse extracts the JSON answer from free-form model output (the
// Chat Completions mode, where models are not held to a schema) and checks
// it against a schema.
//
// What it tolerates: <think>…</think> (and <thinking>) blocks, a missing
// opening <think> tag (reasoning then </think>), Markdown code fences with
// or without a language tag, prose before and after the JSON, and a value
// cut off at the very end of the output when the cut is unambiguous: the
// text is a valid JSON prefix ending after a complete value or inside a
// string, so that only closing quotes and brackets are missing. Everything
// else is an error, never a guess: a cut after a comma, a key, a colon, an
// opening bracket, inside a number, literal, escape or key; several
// different candidate values; syntax errors (comments, trailing commas,
// single quotes); duplicate keys.
package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/errata-dev/errata/consumers/llm/schema"
)

// Errors of Extract and Decode (match with errors.Is). Schema violations are
// *schema.ValidationError.
var (
	// ErrNoJSON: the output holds no JSON object or array.
	ErrNoJSON = errors.New("parse: no JSON object or array in the model output")
	// ErrAmbiguous: several different JSON values could be the answer.
	ErrAmbiguous = errors.New("parse: several different JSON values in the model output")
	// ErrMalformed: a value meant as JSON has a syntax error (comments,
	// trailing commas, single quotes, a value cut inside a closed fence).
	ErrMalformed = errors.New("parse: malformed JSON in the model output")
	// ErrTruncated: the output was cut off where the rest cannot be known.
	ErrTruncated = errors.New("parse: the model output is truncated and cannot be repaired unambiguously")
)

// Extracted is the JSON value found in a model output.
type Extracted struct {
	// JSON is the value's text exactly as the model wrote it, plus Appended
	// when Repaired.
	JSON json.RawMessage
	// Repaired is true when the output was cut off and the closing quotes
	// and brackets in Appended were added.
	Repaired bool
	Appended string
	// Fenced is true when the value came from a Markdown code fence.
	Fenced bool
}

var (
	thinkBlockRE = regexp.MustCompile(`(?is)<(think|thinking)>.*?</(think|thinking)>`)
	thinkOpenRE  = regexp.MustCompile(`(?i)<(think|thinking)>`)
	thinkCloseRE = regexp.MustCompile(`(?i)</(think|thinking)>`)
)

// StripThinking removes reasoning blocks. Text before a closing tag that
// has no opening tag is reasoning too (templates that put <think> in the
// prompt). An opening tag that is never closed means the output ended while
// the model was still reasoning: ErrTruncated.
func StripThinking(text string) (string, error) {
	if loc := thinkCloseRE.FindStringIndex(text); loc != nil {
		if open := thinkOpenRE.FindStringIndex(text); open == nil || open[0] > loc[0] {
			text = text[loc[1]:]
		}
	}
	text = thinkBlockRE.ReplaceAllString(text, "")
	if thinkOpenRE.MatchString(text) {
		return "", fmt.Errorf("%w: the output ends inside a <think> block", ErrTruncated)
	}
	return text, nil
}

// segment is a region of the output searched for JSON; atEnd says whether
// it reaches the end of the output (only then may a cut be repaired).
type segment struct {
	text   string
	atEnd  bool
	fenced bool
}

// fences returns the contents of the Markdown code fences in text. An
// unterminated fence runs to the end of the output.
func fences(text string) []segment {
	var out []segment
	rest := text
	for {
		open := strings.Index(rest, "```")
		if open < 0 {
			return out
		}
		body := rest[open+3:]
		// Skip an info string such as json or JSON on the opening line.
		k := 0
		for k < len(body) && body[k] != '\n' && body[k] != '{' && body[k] != '[' && body[k] != '`' {
			k++
		}
		body = body[k:]
		closeAt := strings.Index(body, "```")
		if closeAt < 0 {
			return append(out, segment{text: body, atEnd: true, fenced: true})
		}
		out = append(out, segment{text: body[:closeAt], fenced: true})
		rest = body[closeAt+3:]
	}
}

type candidate struct {
	Extracted
	// truncated candidates carry the reason when they cannot be repaired;
	// malformed ones are JSON-looking values with a syntax error.
	truncated bool
	malformed bool
	why       string
}

// candidates lists the top-level JSON objects and arrays of seg, values
// that were clearly meant as JSON but are malformed, and a truncated value
// running to the end of seg if any.
func candidates(seg segment) []candidate {
	var out []candidate
	s := seg.text
	for i := 0; i < len(s); i++ {
		if s[i] != '{' && s[i] != '[' {
			continue
		}
		r := scanValue(s[i:])
		switch {
		case r.complete:
			out = append(out, candidate{Extracted: Extracted{JSON: json.RawMessage(s[i : i+r.end]), Fenced: seg.fenced}})
			i += r.end - 1
		case r.truncated && !seg.atEnd:
			// Cut short inside a closed fence: malformed, not truncated output.
			return append(out, candidate{malformed: true, why: "a value in a code fence is incomplete", Extracted: Extracted{JSON: json.RawMessage(s[i:]), Fenced: true}})
		case r.truncated:
			c := candidate{truncated: true, Extracted: Extracted{Fenced: seg.fenced}}
			if r.repairable {
				body := strings.TrimRight(s[i:], " \t\r\n")
				c.JSON = json.RawMessage(body + r.repair)
				c.Repaired, c.Appended = true, r.repair
			} else {
				c.JSON = json.RawMessage(s[i:])
				c.why = r.why
			}
			return append(out, c)
		default:
			if meantAsJSON(s[i:], r) {
				out = append(out, candidate{malformed: true, why: fmt.Sprintf("%s at offset %d of the value", r.why, r.at), Extracted: Extracted{JSON: json.RawMessage(s[i : i+r.at]), Fenced: seg.fenced}})
			}
			// Skip what the broken value consumed, so its members are not
			// taken for answers.
			if r.at > 1 {
				i += r.at - 1
			}
		}
	}
	return out
}

// meantAsJSON tells a malformed JSON value (an object with at least a key,
// an array of objects, arrays or strings, single-quoted pseudo-JSON) from
// brackets in prose.
func meantAsJSON(s string, r scanResult) bool {
	rest := strings.TrimLeft(s[1:], " \t\r\n")
	if rest == "" {
		return false
	}
	first := rest[0]
	if first == '\'' {
		return true
	}
	if s[0] == '{' {
		return r.tokens >= 2
	}
	return r.tokens >= 2 && strings.IndexByte(`{["`, first) >= 0
}

func allCandidates(text string) ([]candidate, error) {
	text, err := StripThinking(text)
	if err != nil {
		return nil, err
	}
	var found []candidate
	for _, seg := range fences(text) {
		found = append(found, candidates(seg)...)
	}
	if len(found) == 0 {
		found = candidates(segment{text: text, atEnd: true})
	}
	return found, nil
}

// Extract returns the one JSON object or array in a model output. Several
// different values are ErrAmbiguous; use Decode with a schema to pick by
// shape.
func Extract(text string) (Extracted, error) {
	return Decode(text, nil)
}

// Decode finds the JSON answer in a model output and validates it against
// s (nil: no validation). Candidates whose top-level type differs from the
// schema's are ignored (a "[1]" in prose is not the answer object); among
// several candidates of the right type, exactly one may validate.
func Decode(text string, s *schema.Schema) (Extracted, error) {
	found, err := allCandidates(text)
	if err != nil {
		return Extracted{}, err
	}
	var complete, malformed []candidate
	var tail *candidate
	for i := range found {
		c := found[i]
		if s != nil && !rootMatches(s, c.JSON) {
			continue
		}
		switch {
		case c.truncated:
			tail = &c
		case c.malformed:
			malformed = append(malformed, c)
		default:
			complete = append(complete, c)
		}
	}
	complete = dedupe(complete)
	switch {
	case tail != nil && len(complete)+len(malformed) > 0:
		return Extracted{}, fmt.Errorf("%w: %d other value(s) and a truncated one at the end", ErrAmbiguous, len(complete)+len(malformed))
	case tail != nil && tail.why != "":
		return Extracted{}, fmt.Errorf("%w: %s", ErrTruncated, tail.why)
	case tail != nil:
		return check(tail.Extracted, s)
	case len(malformed) > 0 && len(complete) == 0:
		return Extracted{}, fmt.Errorf("%w: %s", ErrMalformed, malformed[0].why)
	case len(malformed) > 0:
		return Extracted{}, fmt.Errorf("%w: %d well-formed value(s) next to a malformed one (%s)", ErrAmbiguous, len(complete), malformed[0].why)
	case len(complete) == 0:
		if len(found) > 0 && s != nil {
			return Extracted{}, fmt.Errorf("%w: no %s at the top level", ErrNoJSON, s.Type)
		}
		return Extracted{}, ErrNoJSON
	case len(complete) == 1:
		return check(complete[0].Extracted, s)
	}
	if s == nil {
		return Extracted{}, fmt.Errorf("%w: %d candidates", ErrAmbiguous, len(complete))
	}
	var valid []Extracted
	var lastErr error
	for _, c := range complete {
		if e, err := check(c.Extracted, s); err == nil {
			valid = append(valid, e)
		} else {
			lastErr = err
		}
	}
	switch len(valid) {
	case 1:
		return valid[0], nil
	case 0:
		return Extracted{}, fmt.Errorf("none of %d JSON values matches the schema; the last: %w", len(complete), lastErr)
	}
	return Extracted{}, fmt.Errorf("%w: %d values match the schema", ErrAmbiguous, len(valid))
}

// DecodeInto is Decode followed by json.Unmarshal into dst.
func DecodeInto(text string, s *schema.Schema, dst any) (Extracted, error) {
	e, err := Decode(text, s)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(e.JSON, dst); err != nil {
		return e, fmt.Errorf("parse: %w", err)
	}
	return e, nil
}

func check(e Extracted, s *schema.Schema) (Extracted, error) {
	v, err := schema.DecodeStrict(e.JSON)
	if err != nil {
		return Extracted{}, err
	}
	if s != nil {
		if err := s.Validate(v); err != nil {
			return Extracted{}, err
		}
	}
	return e, nil
}

func rootMatches(s *schema.Schema, raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return false
	}
	switch s.Type {
	case schema.Object:
		return raw[0] == '{'
	case schema.Array:
		return raw[0] == '['
	}
	return false
}

func dedupe(cs []candidate) []candidate {
	var out []candidate
	seen := map[string]bool{}
	for _, c := range cs {
		var b bytes.Buffer
		if err := json.Compact(&b, c.JSON); err != nil {
			b.Reset()
			b.Write(c.JSON)
		}
		if !seen[b.String()] {
			seen[b.String()] = true
			out = append(out, c)
		}
	}
	return out
}
