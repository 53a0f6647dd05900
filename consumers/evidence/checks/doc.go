// Package checks holds the deterministic checks of a (claim, passage)
// pair that need no model: the numeric/date check (num_ok) and the recency
// weight. Both are pure functions: no I/O, no clock.
//
// # The numeric/date check
//
// Numbers reads the figures of the claim and of the passage and compares
// those of the same kind. What is read (English conventions; a few German
// words):
//
//   - numbers: integers, decimals, thousands written "9,210", "9 210" or
//     "1.234.567", exponents "1.5e9", magnitudes "9k", "9.2 million", "5bn",
//     "$5m", numbers in words with a unit or a magnitude ("five years",
//     "fifty-five thousand"); a negative sign before a number;
//   - units, converted to a base unit per kind: percent (%, per cent,
//     percentage points); money per currency ($, US$, €, £, ¥, USD, euros …;
//     "$" alone is US dollars; currencies are never converted into each
//     other); length, area (km², sq mi, hectares, acres), volume, mass,
//     speed, power, energy, duration, concentration (ppm), ratios ("3
//     times"); temperature in °C, with °F converted, and a temperature
//     difference ("2°C warmer", "rose by 1.1°C", "1.5°C above") kept apart
//     from a temperature level; a rate ("per year", "a day", "/barrel")
//     is its own kind;
//   - dates: "2024-03-04", "4 March 2024", "October 16, 1898", "March
//     2024", a year, a decade ("the 1970s"), a century ("19th century",
//     which covers 1800 to 1900 so both conventions agree), a range of years
//     ("1979–2000", "from 1979 to 2000");
//   - ordinals: "3rd", and word ordinals of a rank ("second-largest").
//
// A bare four-digit number from 1000 to 2199 ("1975") is a year when it
// starts a sentence or an aside, or follows a year cue (in, of, during,
// early, late, mid-, a season); after a quantity comparator ("more than
// 2000") it is a count; otherwise it is ambiguous ("the 1500 people") and
// not read. Not read either, because they are not figures or cannot be
// compared: identifiers ("CO2", "COVID-19", "F-35", "Q1"), footnotes
// ("[12]"), fractions, times and slashed dates ("1/3", "3:45",
// "03/04/2024"), irregular numerals ("1,5", "192.168.1.1"), numbers that
// are not finite or beyond 1e100 ("1e400"), ambiguous units ("5m", "5
// pounds", "tons", "degrees"), days without a year ("4 March"), dates
// after a bound or a guess ("since 1997", "before 2020", "circa 1500"),
// years of an era ("200 A.D."), a bare "one", "three" without a unit, and
// figures after a negation ("is not 9,000"). A negated comparator is
// inverted ("did not exceed 9,000" is at most 9,000).
//
// Comparators before a figure make it a bound or an estimate: more than,
// over, exceeded, surpassed, above, > (greater); at least, or more, +
// (at least); less than, under, below, < (less); at most, up to, no more
// than (at most); nearly, almost, close to, just under (a little below:
// within 10%); about, around, approximately, roughly, some, ~ (within
// 10%). An article may come between: "surpassed the 9k mark".
//
// # The rule
//
// A claim figure of value v holds for the values within its tolerance,
// tol = max(2% of |v|, one unit of its last stated digit): "9,210" ±184,
// "12 km" ±1 km, "1.5°C" ±0.1 °C, "90%" ±1.8 points. Bounds hold beyond
// their value ("exceeded 9,000": above 9,000), estimates within 10% (or
// tol if larger), ranges between their ends ± tol. A claim figure is
// excluded only beyond that, widened by half the granularity of the
// written number: "9,000" may stand for 8,500 to 9,500, so a passage's
// 9,400 neither agrees nor excludes it.
//
// A passage figure asserts its value (or its bound, or its range), give or
// take half its own granularity or, for an estimate, 10%. For each claim
// figure, the passage figures of the same kind and of a comparable
// magnitude (within a factor of ten: "9 companies" says nothing about
// "9,000 satellites") are compared: one whose value lies within what the
// claim holds agrees; one whose possible values all lie beyond what the
// claim allows excludes it. The figure agrees when some passage figure
// agrees, disagrees when every compared passage figure excludes it, and is
// uncertain otherwise.
//
// Years and dates have no tolerance: they agree at the coarser of the two
// stated precisions ("2024" and "1 January 2024" agree, "March 2024" and
// "4 March 2024" agree) and disagree when their spans do not meet.
// Ordinals agree only when equal.
//
// The answer: when the claim has quantities (anything but dates), they
// decide: NumMatch when every quantity the passage speaks to agrees;
// NumMismatch when every one disagrees and the passage's dates do not
// disagree with the claim's (a figure for another year is not a
// contradiction); NumNotApplicable otherwise, including when the passage
// states no quantity of the claim's kinds. A claim with only dates is
// decided by its dates the same way. When unsure, the answer is
// NumNotApplicable.
//
// Limits: the first MaxClaimBytes of a claim and MaxPassageBytes of a
// passage are read, at most 64 figures of a claim and 4,096 of a passage.
//
// # The recency weight
//
// Recency decays exponentially with the source's age, with half-life
// DefaultHalfLife unless the caller passes another; a source without a
// date has no weight (the policy's UnknownRecency applies).
package checks
