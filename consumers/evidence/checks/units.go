package checks

import (
	"cmp"
	"slices"
	"strings"
)

// Kinds of figure. Two figures are compared only when their kinds are
// equal; units of one kind are converted to its base unit.
const (
	kindCount         = "count"              // a bare number: satellites, people, papers
	kindPercent       = "percent"            // %, per cent, percentage points
	kindLength        = "length"             // metres
	kindArea          = "area"               // square metres
	kindVolume        = "volume"             // litres
	kindMass          = "mass"               // kilograms
	kindTemp          = "temperature"        // degrees Celsius
	kindTempChange    = "temperature-change" // a difference in degrees Celsius ("2°C warmer")
	kindSpeed         = "speed"              // metres per second
	kindPower         = "power"              // watts
	kindEnergy        = "energy"             // joules
	kindDuration      = "duration"           // seconds
	kindConcentration = "concentration"      // parts per million
	kindRatio         = "ratio"              // "3 times", "3x", "3-fold"
	kindDate          = "date"               // a day, month, year, decade or century
	kindOrdinal       = "ordinal"            // "3rd", "second-largest"
	kindMoney         = "money:"             // a prefix: money:USD, money:EUR, money:GBP …
)

// ambiguous marks a unit word that names two different quantities
// ("pounds": mass or sterling); a figure with it is not read.
const ambiguous = "?"

// unit is one way of writing a unit: its tokens, its kind, and how to
// convert it to the kind's base unit (value·factor + offset).
type unit struct {
	words  []string
	kind   string
	factor float64
	offset float64
	// spaced: only when separated from the number ("5 g", not "5g", which
	// is more often a mobile network than grams).
	spaced bool
	// linear: a length unit that "²" or "³" turns into an area or volume.
	linear bool
}

const (
	year    = 31556952 // seconds in a Gregorian year (365.2425 days)
	fahrRat = 5.0 / 9
)

func u(words string, kind string, factor float64) unit {
	return unit{words: strings.Fields(words), kind: kind, factor: factor}
}

func spacedUnit(words string, kind string, factor float64) unit {
	x := u(words, kind, factor)
	x.spaced = true
	return x
}

func linearUnit(words string, factor float64, spaced bool) unit {
	x := u(words, kindLength, factor)
	x.linear, x.spaced = true, spaced
	return x
}

// unitTable lists the units read, by their first token, longest first.
var unitTable = buildUnits()

func buildUnits() map[string][]unit {
	list := []unit{
		u("%", kindPercent, 1), u("per cent", kindPercent, 1), u("percent", kindPercent, 1), u("pct", kindPercent, 1),
		u("percentage points", kindPercent, 1), u("percentage point", kindPercent, 1), u("prozent", kindPercent, 1),

		u("° c", kindTemp, 1), u("º c", kindTemp, 1), u("ºc", kindTemp, 1), u("℃", kindTemp, 1),
		u("degrees celsius", kindTemp, 1), u("degree celsius", kindTemp, 1), u("degrees centigrade", kindTemp, 1),
		u("degrees c", kindTemp, 1), u("grad celsius", kindTemp, 1),
		{words: []string{"°", "f"}, kind: kindTemp, factor: fahrRat, offset: -32 * fahrRat},
		{words: []string{"º", "f"}, kind: kindTemp, factor: fahrRat, offset: -32 * fahrRat},
		{words: []string{"ºf"}, kind: kindTemp, factor: fahrRat, offset: -32 * fahrRat},
		{words: []string{"℉"}, kind: kindTemp, factor: fahrRat, offset: -32 * fahrRat},
		{words: []string{"degrees", "fahrenheit"}, kind: kindTemp, factor: fahrRat, offset: -32 * fahrRat},
		{words: []string{"degree", "fahrenheit"}, kind: kindTemp, factor: fahrRat, offset: -32 * fahrRat},
		{words: []string{"degrees", "f"}, kind: kindTemp, factor: fahrRat, offset: -32 * fahrRat},

		linearUnit("mm", 0.001, false), linearUnit("millimetres", 0.001, false), linearUnit("millimeters", 0.001, false),
		linearUnit("millimetre", 0.001, false), linearUnit("millimeter", 0.001, false),
		linearUnit("cm", 0.01, false), linearUnit("centimetres", 0.01, false), linearUnit("centimeters", 0.01, false),
		linearUnit("centimetre", 0.01, false), linearUnit("centimeter", 0.01, false),
		linearUnit("m", 1, true), linearUnit("metres", 1, false), linearUnit("meters", 1, false),
		linearUnit("metre", 1, false), linearUnit("meter", 1, false),
		linearUnit("km", 1000, false), linearUnit("kms", 1000, false), linearUnit("kilometres", 1000, false),
		linearUnit("kilometers", 1000, false), linearUnit("kilometre", 1000, false), linearUnit("kilometer", 1000, false),
		linearUnit("inches", 0.0254, false), linearUnit("inch", 0.0254, false),
		linearUnit("ft", 0.3048, false), linearUnit("feet", 0.3048, false), linearUnit("foot", 0.3048, false),
		linearUnit("yd", 0.9144, false), linearUnit("yards", 0.9144, false), linearUnit("yard", 0.9144, false),
		linearUnit("mi", 1609.344, false), linearUnit("miles", 1609.344, false), linearUnit("mile", 1609.344, false),
		u("nautical miles", kindLength, 1852), u("nautical mile", kindLength, 1852),

		u("sq km", kindArea, 1e6), u("sq . km", kindArea, 1e6), u("sq mi", kindArea, 2589988.110336),
		u("sq ft", kindArea, 0.09290304), u("sq m", kindArea, 1),
		u("square kilometres", kindArea, 1e6), u("square kilometers", kindArea, 1e6), u("square km", kindArea, 1e6),
		u("square metres", kindArea, 1), u("square meters", kindArea, 1), u("square miles", kindArea, 2589988.110336),
		u("square mile", kindArea, 2589988.110336), u("square feet", kindArea, 0.09290304),
		u("hectares", kindArea, 1e4), u("hectare", kindArea, 1e4), spacedUnit("ha", kindArea, 1e4),
		u("acres", kindArea, 4046.8564224), u("acre", kindArea, 4046.8564224),

		spacedUnit("l", kindVolume, 1), u("litres", kindVolume, 1), u("liters", kindVolume, 1),
		u("litre", kindVolume, 1), u("liter", kindVolume, 1), u("ml", kindVolume, 0.001),
		u("millilitres", kindVolume, 0.001), u("milliliters", kindVolume, 0.001),
		u("gallons", kindVolume, 3.785411784), u("gallon", kindVolume, 3.785411784),
		u("cubic metres", kindVolume, 1000), u("cubic meters", kindVolume, 1000),
		u("cubic kilometres", kindVolume, 1e12), u("cubic kilometers", kindVolume, 1e12),
		u("barrels", kindVolume, 158.987294928), u("barrel", kindVolume, 158.987294928), u("bbl", kindVolume, 158.987294928),

		u("mg", kindMass, 1e-6), u("milligrams", kindMass, 1e-6), spacedUnit("g", kindMass, 0.001),
		u("grams", kindMass, 0.001), u("gram", kindMass, 0.001), u("grammes", kindMass, 0.001),
		u("kg", kindMass, 1), u("kilograms", kindMass, 1), u("kilogram", kindMass, 1), u("kilos", kindMass, 1),
		spacedUnit("t", kindMass, 1000), u("tonnes", kindMass, 1000), u("tonne", kindMass, 1000),
		u("metric tons", kindMass, 1000), u("metric tonnes", kindMass, 1000), u("metric ton", kindMass, 1000),
		u("megatonnes", kindMass, 1e9), u("gt", kindMass, 1e12), u("gigatonnes", kindMass, 1e12),
		u("gigatons", kindMass, 1e12), u("lb", kindMass, 0.45359237), u("lbs", kindMass, 0.45359237),
		u("oz", kindMass, 0.028349523125), u("ounces", kindMass, 0.028349523125), u("ounce", kindMass, 0.028349523125),
		u("tons", ambiguous, 1), u("ton", ambiguous, 1), u("pounds", ambiguous, 1), u("pound", ambiguous, 1),
		u("degrees", ambiguous, 1), u("degree", ambiguous, 1), u("°", ambiguous, 1), u("º", ambiguous, 1),

		u("km / h", kindSpeed, 1/3.6), u("km / hr", kindSpeed, 1/3.6), u("kph", kindSpeed, 1/3.6), u("kmh", kindSpeed, 1/3.6),
		u("km per hour", kindSpeed, 1/3.6), u("kilometres per hour", kindSpeed, 1/3.6),
		u("kilometers per hour", kindSpeed, 1/3.6), u("mph", kindSpeed, 0.44704), u("miles per hour", kindSpeed, 0.44704),
		u("m / s", kindSpeed, 1), u("metres per second", kindSpeed, 1), u("meters per second", kindSpeed, 1),
		u("knots", kindSpeed, 1852.0/3600),

		spacedUnit("w", kindPower, 1), u("watts", kindPower, 1), u("watt", kindPower, 1),
		u("kw", kindPower, 1e3), u("kilowatts", kindPower, 1e3), u("kilowatt", kindPower, 1e3),
		u("mw", kindPower, 1e6), u("megawatts", kindPower, 1e6), u("megawatt", kindPower, 1e6),
		u("gw", kindPower, 1e9), u("gigawatts", kindPower, 1e9), u("gigawatt", kindPower, 1e9),
		u("tw", kindPower, 1e12), u("terawatts", kindPower, 1e12),
		u("wh", kindEnergy, 3600), u("kwh", kindEnergy, 3.6e6), u("mwh", kindEnergy, 3.6e9),
		u("gwh", kindEnergy, 3.6e12), u("twh", kindEnergy, 3.6e15),
		u("kilowatt hours", kindEnergy, 3.6e6), u("kilowatt - hours", kindEnergy, 3.6e6),
		u("terawatt hours", kindEnergy, 3.6e15), u("joules", kindEnergy, 1), u("joule", kindEnergy, 1),
		u("kj", kindEnergy, 1e3), u("mj", kindEnergy, 1e6), u("gj", kindEnergy, 1e9), u("ej", kindEnergy, 1e18),
		u("exajoules", kindEnergy, 1e18),

		spacedUnit("s", kindDuration, 1), u("sec", kindDuration, 1), u("secs", kindDuration, 1),
		u("seconds", kindDuration, 1), u("second", kindDuration, 1),
		u("min", kindDuration, 60), u("mins", kindDuration, 60), u("minutes", kindDuration, 60), u("minute", kindDuration, 60),
		spacedUnit("h", kindDuration, 3600), u("hr", kindDuration, 3600), u("hrs", kindDuration, 3600),
		u("hours", kindDuration, 3600), u("hour", kindDuration, 3600),
		u("days", kindDuration, 86400), u("day", kindDuration, 86400),
		u("weeks", kindDuration, 7*86400), u("week", kindDuration, 7*86400),
		u("months", kindDuration, year/12), u("month", kindDuration, year/12),
		u("years", kindDuration, year), u("year", kindDuration, year), u("yr", kindDuration, year), u("yrs", kindDuration, year),
		u("decades", kindDuration, 10*year), u("decade", kindDuration, 10*year),
		u("centuries", kindDuration, 100*year), u("century", kindDuration, 100*year),
		u("millennia", kindDuration, 1000*year), u("millennium", kindDuration, 1000*year),
		u("jahre", kindDuration, year), u("jahren", kindDuration, year),

		u("ppm", kindConcentration, 1), u("parts per million", kindConcentration, 1),
		u("ppb", kindConcentration, 0.001), u("parts per billion", kindConcentration, 0.001),

		u("times", kindRatio, 1), u("fold", kindRatio, 1), u("- fold", kindRatio, 1),

		u("dollars", kindMoney+"USD", 1), u("dollar", kindMoney+"USD", 1), u("usd", kindMoney+"USD", 1),
		u("us dollars", kindMoney+"USD", 1), u("euros", kindMoney+"EUR", 1), u("euro", kindMoney+"EUR", 1),
		u("eur", kindMoney+"EUR", 1), u("gbp", kindMoney+"GBP", 1), u("pounds sterling", kindMoney+"GBP", 1),
		u("sterling", kindMoney+"GBP", 1), u("yen", kindMoney+"JPY", 1), u("jpy", kindMoney+"JPY", 1),
		u("chf", kindMoney+"CHF", 1), u("swiss francs", kindMoney+"CHF", 1),
	}
	out := map[string][]unit{}
	for _, x := range list {
		out[x.words[0]] = append(out[x.words[0]], x)
	}
	for _, xs := range out {
		slices.SortStableFunc(xs, func(a, b unit) int { return cmp.Compare(len(b.words), len(a.words)) })
	}
	return out
}

// currencySymbols are the currencies written before a number. "$" alone
// is read as US dollars.
var currencySymbols = map[string]string{"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}

// dollarPrefixes qualify "$": "US$", "A$", "C$" …
var dollarPrefixes = map[string]string{"us": "USD", "a": "AUD", "au": "AUD", "c": "CAD", "ca": "CAD", "nz": "NZD", "hk": "HKD", "s": "SGD", "r": "BRL"}

// currencyCodes are codes written before a number: "USD 5", "EUR 5".
var currencyCodes = map[string]string{"usd": "USD", "eur": "EUR", "gbp": "GBP", "jpy": "JPY", "chf": "CHF"}

// multipliers are the magnitude words written after a number. "m" and "b"
// count only after a currency ("$5m"), where they cannot be metres.
var multipliers = map[string]float64{
	"thousand": 1e3, "thousands": 1e3, "tausend": 1e3,
	"million": 1e6, "millions": 1e6, "mn": 1e6, "mio": 1e6, "millionen": 1e6,
	"billion": 1e9, "billions": 1e9, "bn": 1e9, "milliarde": 1e9, "milliarden": 1e9, "mrd": 1e9,
	"trillion": 1e12, "trillions": 1e12, "tn": 1e12, "trn": 1e12,
}

var months = map[string]int{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

var cardinals = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
	"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

var scales = map[string]float64{"hundred": 100, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}

var ordinalWords = map[string]int{
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
	"ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
	"sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
}

// rankWords follow a word ordinal that is a rank ("second-largest"); a
// word ordinal elsewhere ("at first", "a second time") is not a figure.
var rankWords = map[string]bool{
	"largest": true, "biggest": true, "smallest": true, "highest": true, "lowest": true, "most": true,
	"least": true, "place": true, "richest": true, "poorest": true, "busiest": true, "tallest": true,
	"longest": true, "oldest": true, "hottest": true, "warmest": true, "coldest": true, "deadliest": true,
}

// timeUnits end a rate: "per year", "a day".
var timeUnits = map[string]string{
	"second": "second", "minute": "minute", "hour": "hour", "day": "day", "week": "week", "month": "month",
	"year": "year", "decade": "decade", "annum": "year", "capita": "person", "person": "person", "head": "person",
}
