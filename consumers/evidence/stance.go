package evidence

import "context"

// StanceResult is the stance of one passage, or the neutral default with a
// note saying why there is no usable one.
type StanceResult struct {
	Stance Stance
	// Note is empty for a judged passage; otherwise why the stance is
	// NeutralStance (an answer that broke the schema twice, say).
	Note string
}

// Stancer judges passages against a claim: for each passage, the
// probabilities that it entails the claim, contradicts it, or neither. It
// returns exactly one result per passage, in order. An error means the
// whole batch could not be judged now (a transient provider failure) and
// may be retried; an answer that cannot be used for some passage is a
// neutral result with a note, never an error.
//
// The configured LLM provider implements it (stance/), and a local NLI
// model can replace it where one is available.
type Stancer interface {
	Stance(ctx context.Context, claim string, passages []string) ([]StanceResult, error)
}
