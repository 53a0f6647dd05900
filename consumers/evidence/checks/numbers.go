package checks

import (
	"math"

	"github.com/errata-dev/errata/consumers/evidence"
)

// Limits on what Numbers reads. A claim is a sentence or two and a passage
// a snippet or a page; beyond these limits the text is not read (a figure
// cut in two by the limit is not read either).
const (
	MaxClaimBytes      = 16 << 10
	MaxPassageBytes    = 128 << 10
	maxClaimFigures    = 64
	maxPassageFigures  = 4096
	relativeTolerance  = 0.02 // ±2%
	approxWidth        = 0.10 // "about", "nearly": within 10%
	magnitudeWindow    = 10.0 // figures more than ten times apart are about different things
	nearZeroStepsLimit = 10.0
)

// Numbers checks the figures of a claim against those of a passage: the
// numbers, measures and dates each states (see the package documentation
// for what is read and the exact rule). It returns NumMatch when the
// passage agrees with the claim's figures, NumMismatch when it states
// figures of the same kind and none agrees, and NumNotApplicable when the
// claim has no figure, the passage none of the same kind, or the answer is
// not certain.
func Numbers(claim, passage string) evidence.Num {
	cf := extract(claim, MaxClaimBytes, maxClaimFigures)
	if len(cf) == 0 {
		return evidence.NumNotApplicable
	}
	byKind := map[string][]figure{}
	for _, f := range extract(passage, MaxPassageBytes, maxPassageFigures) {
		byKind[f.kind] = append(byKind[f.kind], f)
	}
	var quantities, dates []outcome
	hasQuantity := false
	for _, f := range cf {
		isDate := f.kind == kindDate
		hasQuantity = hasQuantity || !isDate
		o := judge(f, byKind[f.kind])
		switch {
		case o == silent:
		case isDate:
			dates = append(dates, o)
		default:
			quantities = append(quantities, o)
		}
	}
	q, d := combine(quantities), combine(dates)
	if hasQuantity {
		// The claim's quantities decide; its dates only make a mismatch
		// inconclusive (the passage may describe another time).
		switch {
		case q == agree:
			return evidence.NumMatch
		case q == disagree && d != disagree && d != unsure:
			return evidence.NumMismatch
		}
		return evidence.NumNotApplicable
	}
	switch d {
	case agree:
		return evidence.NumMatch
	case disagree:
		return evidence.NumMismatch
	}
	return evidence.NumNotApplicable
}

// outcome is how a passage bears on one figure of a claim.
type outcome uint8

const (
	silent   outcome = iota // no figure of its kind (or magnitude) in the passage
	agree                   // some passage figure agrees
	disagree                // the passage has figures of its kind and all exclude it
	unsure                  // neither
)

// combine reduces the outcomes of several claim figures: all agree, all
// disagree, or unsure when they differ.
func combine(os []outcome) outcome {
	if len(os) == 0 {
		return silent
	}
	first := os[0]
	for _, o := range os[1:] {
		if o != first {
			return unsure
		}
	}
	return first
}

// judge compares one claim figure with the passage's figures of its kind.
func judge(c figure, ps []figure) outcome {
	considered, doubt := false, false
	for _, p := range ps {
		if !sameMeasure(c, p) {
			continue
		}
		considered = true
		switch compare(c, p) {
		case agree:
			return agree
		case unsure:
			doubt = true
		}
	}
	switch {
	case !considered:
		return silent
	case doubt:
		return unsure
	}
	return disagree
}

// interval is a set of values; an infinite end is open.
type interval struct {
	lo, hi         float64
	loOpen, hiOpen bool
}

func closed(lo, hi float64) interval { return interval{lo: lo, hi: hi} }

// within reports whether a ⊆ b.
func (a interval) within(b interval) bool {
	loOK := a.lo > b.lo || (a.lo == b.lo && (!b.loOpen || a.loOpen))
	hiOK := a.hi < b.hi || (a.hi == b.hi && (!b.hiOpen || a.hiOpen))
	return loOK && hiOK
}

// disjoint reports whether a and b share no value.
func (a interval) disjoint(b interval) bool {
	return a.hi < b.lo || b.hi < a.lo ||
		(a.hi == b.lo && (a.hiOpen || b.loOpen)) || (b.hi == a.lo && (b.hiOpen || a.loOpen))
}

// tolerance is how far a claim's stated value may be from the truth and
// still agree: 2% of it or one unit of its last stated digit, whichever
// is larger. slack adds the rounding of the written number ("9,000" may
// stand for anything from 8,500 to 9,500) before a passage counts as
// excluding it.
func tolerance(f figure, v float64) (tol, slack float64) {
	tol = math.Max(relativeTolerance*math.Abs(v), f.step)
	return tol, math.Max(tol, f.place/2)
}

// claimZones are the values for which the claim figure holds (agree) and
// beyond which the claim is false whatever the rounding (loose).
func claimZones(f figure) (agreeZone, loose interval) {
	inf := math.Inf(1)
	tol, slack := tolerance(f, f.v)
	a := math.Max(approxWidth*math.Abs(f.v), tol)
	switch f.op {
	case opApprox:
		return closed(f.v-a, f.v+a), closed(f.v-a-slack, f.v+a+slack)
	case opNearly:
		return closed(f.v-a, f.v), closed(f.v-a-slack, f.v+slack)
	case opGT:
		return interval{lo: f.v, hi: inf, loOpen: true, hiOpen: true}, interval{lo: f.v - slack, hi: inf, loOpen: true, hiOpen: true}
	case opGE:
		return interval{lo: f.v, hi: inf, hiOpen: true}, interval{lo: f.v - slack, hi: inf, loOpen: true, hiOpen: true}
	case opLT:
		return interval{lo: -inf, hi: f.v, loOpen: true, hiOpen: true}, interval{lo: -inf, hi: f.v + slack, loOpen: true, hiOpen: true}
	case opLE:
		return interval{lo: -inf, hi: f.v, loOpen: true}, interval{lo: -inf, hi: f.v + slack, loOpen: true, hiOpen: true}
	case opRange:
		tol2, slack2 := tolerance(f, f.v2)
		return closed(f.v-tol, f.v2+tol2), closed(f.v-slack, f.v2+slack2)
	}
	return closed(f.v-tol, f.v+tol), closed(f.v-slack, f.v+slack)
}

// passageZones are what a passage figure asserts exactly (core: its value,
// or its bound) and at most (span: its value give or take its rounding,
// or the width of "about").
func passageZones(f figure) (core, span interval) {
	inf := math.Inf(1)
	round := f.place / 2
	a := math.Max(approxWidth*math.Abs(f.v), round)
	point := closed(f.v, f.v)
	switch f.op {
	case opApprox:
		return point, closed(f.v-a, f.v+a)
	case opNearly:
		return point, closed(f.v-a, f.v)
	case opGT:
		x := interval{lo: f.v, hi: inf, loOpen: true, hiOpen: true}
		return x, x
	case opGE:
		x := interval{lo: f.v, hi: inf, hiOpen: true}
		return x, x
	case opLT:
		x := interval{lo: -inf, hi: f.v, loOpen: true, hiOpen: true}
		return x, x
	case opLE:
		x := interval{lo: -inf, hi: f.v, loOpen: true}
		return x, x
	case opRange:
		x := closed(f.v, f.v2)
		return x, x
	}
	return point, closed(f.v-round, f.v+round)
}

// compare judges one passage figure against one claim figure of the same
// kind.
func compare(c, p figure) outcome {
	switch c.kind {
	case kindDate:
		// Dates agree at the coarser of the two stated precisions: "2024"
		// agrees with "1 January 2024" and the other way round.
		a := interval{lo: c.v, hi: c.v2, hiOpen: true}
		b := interval{lo: p.v, hi: p.v2, hiOpen: true}
		switch {
		case a.within(b) || b.within(a):
			return agree
		case a.disjoint(b):
			return disagree
		}
		return unsure
	case kindOrdinal:
		if c.v == p.v {
			return agree
		}
		return disagree
	}
	agreeZone, loose := claimZones(c)
	core, span := passageZones(p)
	switch {
	case core.within(agreeZone):
		return agree
	case span.disjoint(loose):
		return disagree
	}
	return unsure
}

// sameMeasure reports whether a passage figure may be about what the
// claim figure measures: dates and ordinals always; other figures when
// their magnitudes are within a factor of ten ("9 companies" says nothing
// about "9,000 satellites").
func sameMeasure(c, p figure) bool {
	if c.kind == kindDate || c.kind == kindOrdinal {
		return true
	}
	for _, cv := range ends(c) {
		for _, pv := range ends(p) {
			if near(cv, pv, c) {
				return true
			}
		}
	}
	return false
}

func ends(f figure) []float64 {
	if f.op == opRange {
		return []float64{f.v, f.v2}
	}
	return []float64{f.v}
}

func near(cv, pv float64, c figure) bool {
	if cv == 0 || pv == 0 || (cv < 0) != (pv < 0) {
		tol, _ := tolerance(c, cv)
		return math.Abs(cv-pv) <= nearZeroStepsLimit*tol
	}
	r := math.Abs(pv / cv)
	return r >= 1/magnitudeWindow && r <= magnitudeWindow
}
