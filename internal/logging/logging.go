// Package logging builds the process logger (log/slog) and holds the Secret
// type that keeps sensitive values out of log lines.
package logging

import (
	"fmt"
	"io"
	"log/slog"
)

// New returns a logger writing text or JSON at the given level.
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text", "":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("log format %q is not text or json", format)
	}
}

// Discard is a logger that drops everything (for tests).
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Secret is a string that never prints: fmt, slog and JSON see a mask.
type Secret string

// LogValue implements slog.LogValuer.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// String implements fmt.Stringer.
func (Secret) String() string { return "[redacted]" }

// GoString implements fmt.GoStringer.
func (Secret) GoString() string { return "[redacted]" }

// MarshalText keeps secrets out of JSON and text encodings.
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Reveal returns the plain value, for the one place that must use it.
func (s Secret) Reveal() string { return string(s) }
