// Package prompts holds the investigator's, the validator's, the evidence
// engine's (stance) and the verdict analysis's instructions, registered by
// name, version and sha256 so that every LLM exchange can be audited
// against the exact text that produced it.
//
// # Files and versions
//
// Each prompt version is one embedded file, text/<name>/<version>.md, with
// versions v1, v2, ... The current version of a prompt is its highest one.
// Released versions are never edited or deleted: a changed prompt is a new
// file with the next version. versions.lock records name, version and the
// sha256 of every released file; TestPromptLock fails when a file's text no
// longer matches its line (bump the version instead) or a locked version is
// gone, and `go test ./consumers/investigator/prompts -run TestPromptLock
// -update-lock` only ever appends lines for new versions.
//
// # Templates
//
// A prompt file is a Go text/template rendered with Vars, a map of string
// variables. The variables a template uses are exactly the ones it must be
// given (Prompt.Variables lists them): Render refuses missing, unknown and
// empty values, so nothing is ever silently rendered as "<no value>". The
// released prompts use:
//
//	FenceOpen    the line that opens each block of untrusted data (see Fence)
//	FenceClose   the line that closes it
//	CurrentDate  today's date in UTC, YYYY-MM-DD
//
// A leading {{/* comment */ -}} documents a template's variables; it is part
// of the registered text and its hash but never of the rendered output.
// Render's result is the exact instructions string sent to the model, the
// one the audit record stores.
//
// # Input layout
//
// The instructions describe the input the orchestrator sends alongside
// them: sections, each a heading line (HeadingPost, HeadingChanges,
// HeadingPriorClaims, HeadingCandidate) followed by its content between the
// fence lines. Section builds one text-only section. Untrusted content
// (everything taken from a post, and claims derived from one) is only ever
// placed inside the fence; the prompts tell the model never to follow
// instructions found there.
//
//	investigator-fresh   HeadingPost
//	investigator-update  HeadingPost, HeadingChanges (lines "-" removed,
//	                     "+" added, others unchanged), HeadingPriorClaims
//	                     (a JSON list of {id, quote, correction})
//	validator            HeadingPost, HeadingCandidate (the claim as JSON)
//	stance               HeadingClaim, then PassageHeading(1), PassageHeading(2),
//	                     ... (one section per passage, its text as is)
//	verdict-extract      HeadingText
//	verdict-summary      HeadingText, HeadingClaimVerdicts (JSON),
//	                     HeadingSearchResults (JSON)
//
// The tools the prompts name are ToolSubmitCorrection, ToolRetainCorrection
// and ToolFetchURL, plus the provider's web search.
package prompts
