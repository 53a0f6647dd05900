package prompts

// The verdict analysis's prompts (consumers/verdict): claim extraction with
// Gate-1 triage, then the verdict summary once the claims are researched.
const (
	NameVerdictExtract = "verdict-extract"
	NameVerdictSummary = "verdict-summary"
)

// Input layout and answers of the verdict prompts. Every section is a
// heading line followed by its body between the fence lines (Section);
// everything in a body comes from the analysed text or from web pages and
// is untrusted.
//
//	verdict-extract  HeadingText (the analysed text as is); the answer is
//	                 a structured output named VerdictExtractionSchemaName
//	verdict-summary  HeadingText, HeadingClaimVerdicts (a JSON list of the
//	                 claims with their triage and verdicts),
//	                 HeadingSearchResults (a JSON list of the search results
//	                 the claims were judged on); the answer is a
//	                 structured output named VerdictSummarySchemaName
const (
	HeadingText                 = "### Text"
	HeadingClaimVerdicts        = "### Claim verdicts"
	HeadingSearchResults        = "### Search results"
	VerdictExtractionSchemaName = "verdict_extraction"
	VerdictSummarySchemaName    = "verdict_summary"
)
