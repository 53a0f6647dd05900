// Package events is Errata's event contract: the envelope every Kafka record
// carries, the versioned payload types, the registry that maps type strings to
// payloads and topics, and the deterministic identifiers derived from them.
//
// The Kafka log is the source of truth. Payloads are plain fields with
// snake_case JSON names, never domain structs, so that a change to code
// elsewhere can never change the shape of history. A breaking change gets a new
// type string (…v2) and a golden fixture under testdata/ that is kept forever.
package events
