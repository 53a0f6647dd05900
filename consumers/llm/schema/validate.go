package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Violation is one place where a value breaks its schema.
type Violation struct {
	Path    string // JSONPath-like: $, $.sources[0].url
	Message string
}

func (v Violation) String() string { return v.Path + ": " + v.Message }

// ValidationError lists every violation found (in document order).
type ValidationError struct {
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return "schema violation: " + strings.Join(parts, "; ")
}

// ErrInvalidJSON wraps input that is not exactly one well-formed JSON value
// (syntax errors, trailing data, duplicate object keys).
var ErrInvalidJSON = errors.New("invalid JSON")

// ValidateJSON decodes raw strictly (one value, no duplicate keys, numbers
// kept exact) and validates it. Errors are ErrInvalidJSON (wrapped) or a
// *ValidationError.
func (s *Schema) ValidateJSON(raw []byte) error {
	v, err := DecodeStrict(raw)
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// Validate checks a value decoded from JSON (maps, slices, string, bool,
// json.Number or float64, nil) against the schema. It returns nil or a
// *ValidationError.
func (s *Schema) Validate(v any) error {
	var out []Violation
	s.validate("$", v, &out)
	if len(out) > 0 {
		return &ValidationError{Violations: out}
	}
	return nil
}

func (s *Schema) validate(path string, v any, out *[]Violation) {
	add := func(format string, args ...any) {
		*out = append(*out, Violation{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	got := typeOf(v)
	if !typeMatches(s.Type, v) {
		add("expected %s, got %s", s.Type, got)
		return
	}
	switch s.Type {
	case Object:
		obj := v.(map[string]any)
		for _, name := range s.Required {
			if _, ok := obj[name]; !ok {
				add("missing required property %q", name)
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ps := s.Property(k)
			if ps == nil {
				if !s.AllowAdditional {
					add("property %q is not allowed", k)
				}
				continue
			}
			ps.validate(path+"."+k, obj[k], out)
		}
	case Array:
		arr := v.([]any)
		if s.MinItems != nil && len(arr) < *s.MinItems {
			add("expected at least %d items, got %d", *s.MinItems, len(arr))
		}
		if s.MaxItems != nil && len(arr) > *s.MaxItems {
			add("expected at most %d items, got %d", *s.MaxItems, len(arr))
		}
		if s.Items != nil {
			for i, item := range arr {
				s.Items.validate(path+"["+strconv.Itoa(i)+"]", item, out)
			}
		}
	case String:
		str := v.(string)
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			add("%q is not one of %s", str, strings.Join(s.Enum, ", "))
		}
		if s.Format == FormatURI && !isHTTPURL(str) {
			add("%q is not an absolute http(s) URL", str)
		}
	}
}

func typeMatches(t Type, v any) bool {
	switch t {
	case Object:
		_, ok := v.(map[string]any)
		return ok
	case Array:
		_, ok := v.([]any)
		return ok
	case String:
		_, ok := v.(string)
		return ok
	case Boolean:
		_, ok := v.(bool)
		return ok
	case Null:
		return v == nil
	case Number:
		switch v.(type) {
		case json.Number, float64:
			return true
		}
	case Integer:
		switch n := v.(type) {
		case json.Number:
			if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
				return true
			}
			f, err := n.Float64()
			return err == nil && f == float64(int64(f))
		case float64:
			return n == float64(int64(n))
		}
	}
	return false
}

func typeOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// DecodeStrict decodes exactly one JSON value: no trailing data, no
// duplicate keys in any object, numbers as json.Number. Errors wrap
// ErrInvalidJSON.
func DecodeStrict(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidJSON, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the value", ErrInvalidJSON)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				if _, dup := obj[k]; dup {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				obj[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}
