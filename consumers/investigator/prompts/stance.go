package prompts

import "strconv"

// Input layout and answer of the stance prompt (consumers/evidence/stance):
// the claim under HeadingClaim, then each passage under its own heading
// PassageHeading(1), PassageHeading(2), ..., every body between the fence
// lines; the answer is a structured output named StanceSchemaName.
const (
	HeadingClaim = "### Claim"
	// HeadingPassage is followed by a space and the passage's 1-based
	// number, the index the answer refers to.
	HeadingPassage   = "### Passage"
	StanceSchemaName = "stance_judgements"
)

// PassageHeading is the heading of the n-th passage (1-based).
func PassageHeading(n int) string { return HeadingPassage + " " + strconv.Itoa(n) }
