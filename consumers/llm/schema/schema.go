// Package schema is the small JSON Schema subset Errata emits for LLM
// function tools and structured answers, and a validator for exactly that
// subset.
//
// The subset is what OpenAI's strict mode accepts and what the investigator
// needs: the types object, array, string, boolean, integer, number and null;
// properties (kept in declaration order, because strict-mode models write
// fields in schema order), required, additionalProperties false, items,
// minItems, maxItems, enum (of strings) and the string format "uri".
// Anything outside the subset cannot be expressed, so the validator never
// meets a keyword it does not enforce.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Type is a JSON Schema primitive type name.
type Type string

// The types of the subset.
const (
	Object  Type = "object"
	Array   Type = "array"
	String  Type = "string"
	Boolean Type = "boolean"
	Integer Type = "integer"
	Number  Type = "number"
	Null    Type = "null"
)

// FormatURI is the one string format the subset knows: an absolute http or
// https URL with a host.
const FormatURI = "uri"

// Schema is one node of the subset. Build nodes with the constructors
// (Obj, Str, Bool, Arr, ...) rather than by hand: they produce strict nodes.
type Schema struct {
	Type        Type
	Description string
	// Object keywords. Properties keep their declaration order on the wire.
	Properties []Property
	Required   []string
	// AllowAdditional is false for every node the constructors build, which
	// is emitted as "additionalProperties": false (strict mode requires it).
	AllowAdditional bool
	// Array keywords.
	Items    *Schema
	MinItems *int
	MaxItems *int
	// String keywords.
	Enum   []string
	Format string
}

// Property is one named member of an object schema.
type Property struct {
	Name   string
	Schema *Schema
}

// Prop pairs a property name with its schema.
func Prop(name string, s *Schema) Property { return Property{Name: name, Schema: s} }

// Obj is a closed object whose properties are all required (strict mode).
func Obj(description string, props ...Property) *Schema {
	req := make([]string, len(props))
	for i, p := range props {
		req[i] = p.Name
	}
	return &Schema{Type: Object, Description: description, Properties: props, Required: req}
}

// Str is a string.
func Str(description string) *Schema { return &Schema{Type: String, Description: description} }

// URI is a string holding an absolute http(s) URL.
func URI(description string) *Schema {
	return &Schema{Type: String, Description: description, Format: FormatURI}
}

// Enum is a string restricted to the given values.
func Enum(description string, values ...string) *Schema {
	return &Schema{Type: String, Description: description, Enum: values}
}

// Bool is a boolean.
func Bool(description string) *Schema { return &Schema{Type: Boolean, Description: description} }

// Int is an integer.
func Int(description string) *Schema { return &Schema{Type: Integer, Description: description} }

// Arr is an array of items with at least minItems elements (0: no minimum).
func Arr(description string, items *Schema, minItems int) *Schema {
	s := &Schema{Type: Array, Description: description, Items: items}
	if minItems > 0 {
		s.MinItems = &minItems
	}
	return s
}

// Property returns the schema of the named property, or nil.
func (s *Schema) Property(name string) *Schema {
	for _, p := range s.Properties {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

// Clone returns a deep copy, so callers can adjust a shared schema safely.
func (s *Schema) Clone() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Properties = make([]Property, len(s.Properties))
	for i, p := range s.Properties {
		c.Properties[i] = Property{Name: p.Name, Schema: p.Schema.Clone()}
	}
	if s.Properties == nil {
		c.Properties = nil
	}
	c.Required = slices.Clone(s.Required)
	c.Enum = slices.Clone(s.Enum)
	c.Items = s.Items.Clone()
	if s.MinItems != nil {
		v := *s.MinItems
		c.MinItems = &v
	}
	if s.MaxItems != nil {
		v := *s.MaxItems
		c.MaxItems = &v
	}
	return &c
}

// MarshalJSON writes the node as JSON Schema, properties in declaration
// order, keywords in a fixed order (so the bytes are stable).
func (s *Schema) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	field := func(name string, v any) error {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b.Write(raw)
		return nil
	}
	if s.Type == "" {
		return nil, fmt.Errorf("schema: node without a type")
	}
	if err := field("type", s.Type); err != nil {
		return nil, err
	}
	if s.Description != "" {
		if err := field("description", s.Description); err != nil {
			return nil, err
		}
	}
	if s.Type == Object {
		if err := field("properties", orderedProps(s.Properties)); err != nil {
			return nil, err
		}
		req := s.Required
		if req == nil {
			req = []string{}
		}
		if err := field("required", req); err != nil {
			return nil, err
		}
		if err := field("additionalProperties", s.AllowAdditional); err != nil {
			return nil, err
		}
	}
	if s.Items != nil {
		if err := field("items", s.Items); err != nil {
			return nil, err
		}
	}
	if s.MinItems != nil {
		if err := field("minItems", *s.MinItems); err != nil {
			return nil, err
		}
	}
	if s.MaxItems != nil {
		if err := field("maxItems", *s.MaxItems); err != nil {
			return nil, err
		}
	}
	if len(s.Enum) > 0 {
		if err := field("enum", s.Enum); err != nil {
			return nil, err
		}
	}
	if s.Format != "" {
		if err := field("format", s.Format); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type orderedProps []Property

func (ps orderedProps) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Name)
		b.Write(k)
		b.WriteByte(':')
		raw, err := p.Schema.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", p.Name, err)
		}
		b.Write(raw)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Map returns the schema as a map whose "properties" value still marshals
// in declaration order (for APIs that take parameters as map[string]any).
func (s *Schema) Map() map[string]any {
	raw, err := s.MarshalJSON()
	if err != nil {
		return nil
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	if s.Type == Object {
		m["properties"] = orderedProps(s.Properties)
	}
	if s.Items != nil {
		m["items"] = s.Items
	}
	return m
}

// CheckStrict reports why the schema would not be accepted by OpenAI's
// strict mode: every object closed with all its properties required, every
// node typed, names unique, enums non-empty, bounds consistent.
func (s *Schema) CheckStrict() error {
	return s.checkStrict("$")
}

func (s *Schema) checkStrict(path string) error {
	if s == nil {
		return fmt.Errorf("%s: missing schema", path)
	}
	switch s.Type {
	case Object:
		if s.AllowAdditional {
			return fmt.Errorf("%s: objects must set additionalProperties to false", path)
		}
		seen := map[string]bool{}
		for _, p := range s.Properties {
			if p.Name == "" || seen[p.Name] {
				return fmt.Errorf("%s: empty or duplicate property name %q", path, p.Name)
			}
			seen[p.Name] = true
			if !slices.Contains(s.Required, p.Name) {
				return fmt.Errorf("%s: property %q must be required", path, p.Name)
			}
			if err := p.Schema.checkStrict(path + "." + p.Name); err != nil {
				return err
			}
		}
		if len(s.Required) != len(s.Properties) {
			return fmt.Errorf("%s: required names a property that does not exist", path)
		}
	case Array:
		if s.Items == nil {
			return fmt.Errorf("%s: arrays need items", path)
		}
		if s.MinItems != nil && s.MaxItems != nil && *s.MinItems > *s.MaxItems {
			return fmt.Errorf("%s: minItems above maxItems", path)
		}
		return s.Items.checkStrict(path + "[]")
	case String, Boolean, Integer, Number, Null:
	default:
		return fmt.Errorf("%s: unknown type %q", path, s.Type)
	}
	if s.Type != Object && (len(s.Properties) > 0 || len(s.Required) > 0) {
		return fmt.Errorf("%s: properties on a non-object", path)
	}
	if s.Type != Array && (s.Items != nil || s.MinItems != nil || s.MaxItems != nil) {
		return fmt.Errorf("%s: array keywords on a non-array", path)
	}
	if s.Type != String && (len(s.Enum) > 0 || s.Format != "") {
		return fmt.Errorf("%s: string keywords on a non-string", path)
	}
	if s.Format != "" && s.Format != FormatURI {
		return fmt.Errorf("%s: unsupported format %q", path, s.Format)
	}
	return nil
}
