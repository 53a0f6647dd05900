package fakeopenai

// Stance reads r as a stance request of consumers/evidence/stance: the
// claim and the passages in order. ok is false for any other request; err
// reports a stance request that breaks the layout (answer it with
// BadStanceRequest). Tests with their own handler use it to answer the
// stance calls of the evidence engine next to the investigator's and the
// validator's.
func (r Request) Stance() (claim string, passages []string, ok bool, err error) {
	return stanceRequest(r.Endpoint, r.Body)
}

// StanceReply answers a stance request on ep with one judgement per
// passage, in order. A stance that breaks the answer schema is sent as
// given (tests of the engine's handling of bad answers).
func StanceReply(ep Endpoint, stances []ScriptStance) Step {
	return textReply(ep, stanceAnswer(stances))
}

// BadStanceRequest is the 400 answer to a stance request the fake cannot
// read.
func BadStanceRequest(err error) Step { return badStanceRequest(err) }
