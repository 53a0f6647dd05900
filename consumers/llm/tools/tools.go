// Package tools holds the function tools and answer schemas of the
// two-stage investigator: submit_correction and retain_correction (stage 1)
// and the validator's verdict (stage 2), as strict JSON schemas with Go
// types and checked decoders for their arguments.
//
// Every function returns a fresh value, so callers may adjust their copy.
// The wording of the descriptions is part of what the model sees: changing
// it changes the prompt, so version it with the prompts.
package tools

import (
	"encoding/json"
	"fmt"

	"github.com/errata-dev/errata/consumers/llm"
	"github.com/errata-dev/errata/consumers/llm/schema"
)

// Tool names.
const (
	SubmitCorrectionName = "submit_correction"
	RetainCorrectionName = "retain_correction"
	VerdictName          = "validation_verdict"
)

// CorrectionSchema is the argument schema of submit_correction.
func CorrectionSchema() *schema.Schema {
	return schema.Obj("One factual error found in the post, with its evidence.",
		schema.Prop("text", schema.Str(
			"The incorrect claim, copied character for character from the post text: no paraphrase, no ellipsis, no added quotation marks.")),
		schema.Prop("context", schema.Str(
			"The same claim with roughly ten words of the surrounding post text on each side, copied exactly, so the claim can be located without doubt.")),
		schema.Prop("summary", schema.Str(
			"One or two plain sentences for a reader of the post: what the claim gets wrong and what is actually the case.")),
		schema.Prop("reasoning", schema.Str(
			"Why the claim is wrong: which evidence in the sources contradicts it and why those sources can be trusted on this point.")),
		schema.Prop("sources", schema.Arr(
			"The sources that establish the correction; at least one.",
			schema.Obj("A source consulted for the correction.",
				schema.Prop("url", schema.URI("The address of the source page.")),
				schema.Prop("title", schema.Str("The title of the source page.")),
				schema.Prop("snippet", schema.Str("A short passage quoted from the source that bears out the correction.")),
			), 1)),
	)
}

// RetainSchema is the argument schema of retain_correction.
func RetainSchema() *schema.Schema {
	return schema.Obj("A correction from the previous investigation to keep.",
		schema.Prop("id", schema.Str("The id of a correction from the previous investigation of this post.")),
	)
}

// VerdictSchema is the validator's answer: a structured output or the
// arguments of a verdict tool.
func VerdictSchema() *schema.Schema {
	return schema.Obj("The verdict on one proposed correction.",
		schema.Prop("approved", schema.Bool(
			"True only if the claim is quoted exactly from the post, it is factually wrong, and the cited sources show that.")),
		schema.Prop("reason", schema.Str("A short explanation of the verdict.")),
	)
}

// SubmitCorrection is the stage-1 tool that reports one incorrect claim.
func SubmitCorrection() llm.Tool {
	return llm.Tool{
		Name: SubmitCorrectionName,
		Description: "Report one claim in the post that is factually wrong. Call it once per claim, as soon as you have " +
			"concrete evidence from credible sources that contradicts the claim; a lack of supporting evidence is not enough.",
		Parameters: CorrectionSchema(),
	}
}

// RetainCorrection is the stage-1 tool of update runs that keeps a prior
// correction whose claim is still in the new version of the post.
func RetainCorrection() llm.Tool {
	return llm.Tool{
		Name: RetainCorrectionName,
		Description: "Keep a correction from the previous investigation of this post because the new version still " +
			"contains the same error. Corrections you do not keep are dropped.",
		Parameters: RetainSchema(),
	}
}

// Verdict is a verdict tool for validators that answer with a tool call
// rather than a structured output.
func Verdict() llm.Tool {
	return llm.Tool{
		Name:        VerdictName,
		Description: "Give the verdict on the proposed correction.",
		Parameters:  VerdictSchema(),
	}
}

// Source is one source of a correction.
type Source struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
}

// Correction is the arguments of submit_correction.
type Correction struct {
	Text      string   `json:"text"`
	Context   string   `json:"context"`
	Summary   string   `json:"summary"`
	Reasoning string   `json:"reasoning"`
	Sources   []Source `json:"sources"`
}

// Retain is the arguments of retain_correction.
type Retain struct {
	ID string `json:"id"`
}

// VerdictAnswer is the validator's verdict.
type VerdictAnswer struct {
	Approved bool   `json:"approved"`
	Reason   string `json:"reason"`
}

// DecodeCorrection checks raw arguments against CorrectionSchema and
// decodes them.
func DecodeCorrection(raw []byte) (Correction, error) {
	var c Correction
	return c, decode(CorrectionSchema(), raw, &c)
}

// DecodeRetain checks raw arguments against RetainSchema and decodes them.
func DecodeRetain(raw []byte) (Retain, error) {
	var r Retain
	return r, decode(RetainSchema(), raw, &r)
}

// DecodeVerdict checks a raw verdict against VerdictSchema and decodes it.
func DecodeVerdict(raw []byte) (VerdictAnswer, error) {
	var v VerdictAnswer
	return v, decode(VerdictSchema(), raw, &v)
}

func decode(s *schema.Schema, raw []byte, dst any) error {
	if err := s.ValidateJSON(raw); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	return nil
}
