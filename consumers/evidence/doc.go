// Package evidence is Errata's evidence engine: it decides, by recorded
// deterministic rules, whether the evidence gathered for a claim is enough
// to show that claim as incorrect.
//
// The engine takes a claim and its passages (each a source URL with its
// tier from the source registry, a stance — probabilities of entail,
// contradict and neutral — and optional numeric and recency checks) and
// computes:
//
//   - Tsao's features (e_max, e_mean3, c_max, agree_dom, rel_avg, rec_max,
//     num_ok), the weighted raw score and score = round(100·σ((raw−0.5)/0.15));
//   - the verdict, with explicit precedence: Contested, Refuted, Supported,
//     Not enough evidence;
//   - FactHarbor's Gate 4 (evidence sufficiency: HIGH, MEDIUM, LOW,
//     INSUFFICIENT);
//   - the publish decision for an inline flag, with the reason when a claim
//     is withheld.
//
// Thresholds, weights and the publish rule form a Policy, identified by a
// version and a content hash that every assessment records, so a replay
// reproduces it exactly. Nothing here does I/O: stance comes from a Stancer
// (a provider, or a local NLI model), sources from the registry in
// sources/, and both are recorded in events before the engine runs.
package evidence
