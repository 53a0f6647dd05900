package graphql

import (
	"fmt"
	"io"
	"time"
)

// PublicPost is a post as the public API shows it; PostID (not in the
// schema) lets PublicPost.author batch its lookups.
type PublicPost struct {
	Platform   Platform
	ExternalID string
	URL        string
	PostID     string
}

// PublicInvestigation is a COMPLETE investigation's public record.
type PublicInvestigation struct {
	ID                 string
	Origin             *InvestigationOrigin
	CorroborationCount int
	CheckedAt          time.Time
	PromptVersion      string
	Provider           string
	Model              string
	// ConfigurationID names the configuration the configuration field
	// loads; ExperimentID the experiment (empty: none).
	ConfigurationID string
	// ConfigurationName and ConfigurationActive answer for a
	// configuration not declared yet.
	ConfigurationName   string
	ConfigurationActive bool
	Supersedes          *string
	SupersededBy        *string
	ExperimentID        string
	Arm                 *string
	Visible             bool
}

// PostInvestigationSummary is one COMPLETE investigation of a post.
type PostInvestigationSummary struct {
	ID                 string
	ContentHash        string
	Origin             *InvestigationOrigin
	CorroborationCount int
	CheckedAt          time.Time
	ClaimCount         int
	// ConfigurationID, ConfigurationName and ConfigurationActive as on
	// PublicInvestigation.
	ConfigurationID     string
	ConfigurationName   string
	ConfigurationActive bool
	Supersedes          *string
	SupersededBy        *string
	Visible             bool
}

// RawJSON is an already encoded JSON value, written as is.
type RawJSON []byte

// MarshalGQL writes the value (null when empty).
func (j RawJSON) MarshalGQL(w io.Writer) {
	if len(j) == 0 {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}

// UnmarshalGQL refuses input: JSON is an output-only scalar.
func (j *RawJSON) UnmarshalGQL(any) error {
	return fmt.Errorf("JSON is an output-only scalar")
}
