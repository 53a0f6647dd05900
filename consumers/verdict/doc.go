// Package verdict is the judgement of a verdict analysis (issue 15): what
// the model's extraction and summary answers may contain, which claims go
// on to research (FactHarbor's Gate 1), and the mechanical rubric that
// turns the evidence engine's assessments into truth percentages,
// confidences, factSocial's seven labels and FactHarbor's eight bands, for
// each claim and for the whole text. Nothing here does I/O or reads the
// clock: the same inputs give the same results, so a replay of the
// recorded events reproduces every verdict.
//
// # Model answers
//
// One extraction call per analysis lists the text's statements with their
// triage (ExtractionSchema, prompt verdict-extract); one summary call after
// research writes the summary, caveats and cited sources
// (SummarySchema, prompt verdict-summary). DecodeExtraction and
// DecodeSummary refuse any answer that breaks the schema or its bounds
// (ErrAnswer, naming the problem), so the caller asks again instead of
// storing it. Text inside an answer is data: an answer saying "ignore
// your instructions" is kept verbatim as a claim and changes nothing.
//
// # Gate 1
//
// A claim is researched when its kind is FACTUAL and its specificity is at
// least Rubric.MinSpecificity (0.3, FactHarbor's Gate 1 threshold).
// Opinions, predictions, non-claims and vague statements are not searched;
// Researched says why. HeuristicTriage is a rule-based Gate 1 for when no
// model answer is usable, and the baseline `errata eval --dataset
// fcb-checkworthiness --lane gold` measures.
//
// # A claim's truth percentage
//
// truth = round(50 + 50·(e_max − c_max)), held inside its verdict's range:
// SUPPORTED 72–100, REFUTED 0–28, CONTESTED 43–57, NOT_ENOUGH_EVIDENCE
// (and no assessment) 29–71. e_max and c_max are the engine's strongest
// entailment and contradiction among the top passages; the verdict's range
// keeps the band on the engine's side (a refuted claim is at best
// MOSTLY-FALSE, a claim without enough evidence never reaches TRUE or
// FALSE).
//
// # A claim's confidence (factSocial's rubric, mechanically)
//
// The band comes from the evidence, the position inside it from
// s = (quality + agreement + min(domains, 5)/5) / 3 over Gate 4's
// independent domains that take a side: confidence = min + round((max −
// min)·s).
//
//	90–100  Gate 4 HIGH (3+ independent sources, quality ≥ 0.7, 80% agree)
//	75–89   Gate 4 MEDIUM, or one strong source (quality ≥ 0.85: tier 1–2)
//	60–74   one weaker source, or several weak sources that agree (≥ 60%)
//	40–59   CONTESTED, Gate 4 LOW, or several sources that disagree
//	20–39   passages found, none taking a side (tangential results)
//	0–19    nothing found, or not searched
//
// Then the caps, applied in this order after everything else. A cap is
// applied (recorded with the confidence before it) whenever its condition
// holds; the confidence becomes the smaller of the two, so a record whose
// Before is at most its Cap held without lowering anything:
//
//	no_search_time_sensitive      ≤ 40  a time-sensitive claim was not searched
//	stale_sources_current_events  ≤ 50  a current-events claim whose newest dated source is over 365 days old
//	single_low_tier_source        ≤ 50  the claim rests on one independent domain, of tier 4 (social media, blogs) or 5
//	approximate_number            ≤ 70  a claim on a specific number or date, and no passage states a figure
//	                                    exact enough to compare (checks.Numbers: neither a match nor a mismatch)
//
// "Sources" for the last three are the passages taking a side (entail or
// contradict ≥ 0.6), or every passage when none does.
//
// # Labels, bands and coherence
//
// Band(truth, confidence) is FactHarbor's scale. The label follows the
// band: TRUE → True; MOSTLY-TRUE and LEANING-TRUE → MostlyTrue; MIXED →
// Mixed; UNVERIFIED → Unverifiable; LEANING-FALSE, MOSTLY-FALSE and FALSE
// → False. Coherence comes last: a definitive label (True, MostlyTrue,
// Mixed, Misleading, False) needs confidence ≥ 40, else it becomes
// Unverifiable (Demoted keeps the label it had); an Unverifiable verdict
// stays ≤ 40 (coherence_unverifiable, recorded only when it lowers the
// confidence). A claim that is not researched is Opinion (its kind is
// OPINION, confidence Rubric.OpinionConfidence) or Unverifiable
// (confidence 0), truth 50, band UNVERIFIED.
//
// # The post
//
// No researched claim: a text whose claims are all OPINION or NOT_A_CLAIM
// (or that has none) is Opinion, without any search; one with a
// prediction or a too vague factual claim is Unverifiable with confidence
// 0. Otherwise, over the researched claims:
//
//   - truth is the mean of their truth percentages weighted by confidence,
//     a key false claim (truth ≤ 28 with confidence ≥ 60) weighing 3 times
//     as much: one confidently refuted claim pulls the post hard;
//   - confidence is the mean of their confidences, key false claims
//     weighing 3 times as much;
//   - caps: the model's own confidence when lower (model_confidence, when
//     a summary answer is given), then every evidence cap applied to any
//     researched claim, then coherence;
//   - label: from the band as for a claim, except Misleading when a key
//     false claim sits among mostly true ones (more researched claims with
//     truth ≥ 58 than with truth ≤ 42).
//
// Sources: the URLs the model cites that were among the search results
// (normalized like the source registry does; others are dropped with a
// caveat), at most 10; when none remains after research, the search
// results themselves, best tier first, one per domain, at most 5
// (FromSearch). Caveats: the model's, then one for each cap that lowered
// the post's confidence, a demoted label, dropped citations and claims not
// researched.
//
// Every threshold is data in Rubric, whose Version() names its content.
package verdict
