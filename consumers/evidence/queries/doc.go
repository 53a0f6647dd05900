// Package queries plans the searches the evidence engine runs for a claim
// (query decomposition, after FAKTCHECK v3): two or three short keyword
// queries instead of the whole sentence, pronouns replaced by the names
// they stand for in the post, and a timeline query only for causal claims.
// Decompose is a pure, deterministic function of the claim and its
// context: no I/O, no clock, no model.
package queries
