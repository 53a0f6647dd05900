package checks_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/errata-dev/errata/consumers/evidence"
	"github.com/errata-dev/errata/consumers/evidence/checks"
)

const (
	na       = evidence.NumNotApplicable
	match    = evidence.NumMatch
	mismatch = evidence.NumMismatch
)

// spacecraft is the claim of Tsao's worked example (seed 002).
const spacecraft = "The official number of active spacecraft orbiting Earth, as of the beginning of 2024, exceeded 9,000."

func TestNumbers(t *testing.T) {
	tests := []struct {
		name, claim, passage string
		want                 evidence.Num
	}{
		// Tsao's worked example and its neighbours.
		{name: "seed: 9,210 operational satellites", claim: spacecraft,
			passage: "Our database recorded 9,210 operational satellites as of January 1, 2024, confirming the growth trend.", want: match},
		{name: "seed: surpassed the 9k mark in late 2023", claim: spacecraft,
			passage: "With the recent launches, the total count of active spacecraft surpassed the 9k mark in late 2023.", want: match},
		{name: "seed: about 7,500", claim: spacecraft, passage: "There were about 7,500 active satellites at the time.", want: mismatch},
		{name: "seed: about 7,500 in the same year", claim: spacecraft, passage: "In 2024 there were about 7,500 active satellites.", want: mismatch},
		{name: "seed: 7,500 in another year is not a contradiction", claim: spacecraft,
			passage: "In 2019 there were about 7,500 active satellites.", want: na},
		{name: "seed: exactly 9,000 does not exceed it but may be rounded", claim: spacecraft, passage: "Roughly 9,000 satellites were active.", want: na},
		{name: "seed: figures of another magnitude say nothing", claim: spacecraft, passage: "In 2023, 9 companies launched 210 rockets.", want: na},
		{name: "seed: no figures", claim: spacecraft, passage: "The number of satellites keeps growing.", want: na},
		{name: "claim without figures", claim: "Global warming is driving polar bears toward extinction",
			passage: "The population fell by 40% between 2001 and 2010.", want: na},

		// Percentages.
		{name: "percent agrees", claim: "Unemployment fell to 3.5% in March 2024.", passage: "The jobless rate was 3.5 per cent in March 2024.", want: match},
		{name: "percent disagrees", claim: "Unemployment fell to 3.5% in March 2024.", passage: "The jobless rate was 4.1 percent in March 2024.", want: mismatch},
		{name: "percent within two percent", claim: "90 per cent of the world's coral reefs will disappear", passage: "91% of reefs could vanish.", want: match},
		{name: "percent far off", claim: "90 per cent of the world's coral reefs will disappear", passage: "about 30% of reefs are at risk", want: mismatch},
		{name: "an upper bound neither confirms nor excludes", claim: "90 per cent of the world's coral reefs will disappear",
			passage: "up to 90% of reefs could be lost", want: na},
		{name: "more than 100 per cent", claim: "more than 100 per cent of the warming over the past century is due to human actions",
			passage: "Human influence explains about 110% of the observed warming.", want: match},

		// Dates, exact at their precision.
		{name: "same day written two ways", claim: "The treaty was signed on 10 December 1898.", passage: "It was signed on December 10, 1898, in Paris.", want: match},
		{name: "ISO and written dates", claim: "The report came out on 2024-03-04.", passage: "Published 4 March 2024.", want: match},
		{name: "month agrees with a day in it", claim: "The treaty was signed on 10 December 1898.", passage: "signed in December 1898", want: match},
		{name: "another day", claim: "The battle began on October 16, 1898.", passage: "The battle began on October 17, 1898.", want: mismatch},
		{name: "another year", claim: "2023 was the hottest year on record.", passage: "In 2016 the record was set.", want: mismatch},
		{name: "a year is never within one of another", claim: "The law passed in 1975.", passage: "The law passed in 1976.", want: mismatch},
		{name: "decade holds a year", claim: "Emissions peaked in the 1970s.", passage: "Emissions peaked in 1973.", want: match},
		{name: "decade excludes a year", claim: "Emissions peaked in the 1970s.", passage: "Emissions peaked in 1985.", want: mismatch},
		{name: "a century holds a year", claim: "The treaty dates from the 19th century.", passage: "It was signed in 1898.", want: match},
		{name: "a century excludes a year", claim: "The treaty dates from the nineteenth century.", passage: "It was signed in 1921.", want: mismatch},
		{name: "bounded dates are not compared", claim: "Emissions have declined since 1997.", passage: "Emissions declined from 2005.", want: na},

		// Units.
		{name: "km and metres", claim: "The bridge is 1.2 km long.", passage: "The bridge spans 1,200 metres.", want: match},
		{name: "km disagree", claim: "The bridge is 1.2 km long.", passage: "The bridge spans 1.5 kilometres.", want: mismatch},
		{name: "fahrenheit and celsius", claim: "The water reached 100 °F.", passage: "It was measured at 37.8 °C.", want: match},
		{name: "pounds mass and kilograms", claim: "The device weighs 2 lb.", passage: "It weighs 0.9 kg.", want: match},
		{name: "square miles and km²", claim: "The lake covers 500 square miles.", passage: "Its area is 1,295 km².", want: match},
		{name: "a temperature change is not a level", claim: "The world was 2°C warmer.", passage: "The average was 15°C.", want: na},
		{name: "temperature change in F and C", claim: "Temperatures rose by 1.1°C.", passage: "Temperatures rose by 2 °F.", want: match},
		{name: "durations", claim: "The atmospheric residency time of carbon dioxide is five years", passage: "a residence time of 5 years", want: match},
		{name: "durations disagree", claim: "The atmospheric residency time of carbon dioxide is five years",
			passage: "CO2 stays in the atmosphere for 300 to 1,000 years", want: na},
		{name: "money in another currency is not compared", claim: "The project cost $9.2 million.", passage: "The project cost €9.2 million.", want: na},
		{name: "money agrees", claim: "The project cost $9.2 million.", passage: "It cost 9.2 million dollars.", want: match},
		{name: "money disagrees", claim: "The project cost $9.2 million.", passage: "It cost US$12.5 million.", want: mismatch},

		// Comparators and small counts.
		{name: "fewer than: below", claim: "Fewer than 50 people died.", passage: "47 people died.", want: match},
		{name: "fewer than: above", claim: "Fewer than 50 people died.", passage: "62 people died.", want: mismatch},
		{name: "nearly: just below", claim: "Nearly 9,000 satellites orbit Earth.", passage: "8,900 satellites orbit Earth.", want: match},
		{name: "nearly: above is not certain", claim: "Nearly 9,000 satellites orbit Earth.", passage: "9,210 satellites orbit Earth.", want: na},
		{name: "negated bound", claim: "The count did not exceed 9,000.", passage: "The count was 12,400.", want: mismatch},
		{name: "one unit on a small count", claim: "Jupiter's moon count was 5 in 1900.", passage: "Astronomers knew 6 moons of Jupiter in 1900.", want: match},
		{name: "beyond one unit", claim: "Jupiter's moon count was 5 in 1900.", passage: "Astronomers knew 8 moons of Jupiter in 1900.", want: mismatch},
		{name: "a range holds a value", claim: "People lived between 80 and 90 years there.", passage: "Life expectancy was 85 years.", want: match},
		{name: "a range excludes a value", claim: "People lived between 80 and 90 years there.", passage: "Life expectancy was 120 years.", want: mismatch},
		{name: "space grouping", claim: "9 210 satellites", passage: "9,210 satellites", want: match},
		{name: "millions and digits", claim: "1.5 million people marched.", passage: "1,500,000 people marched.", want: match},
		{name: "rounded claim, near passage", claim: "9,000 satellites", passage: "9,400 satellites", want: na},
		{name: "ordinal agrees", claim: "It is the second-largest economy.", passage: "It is the 2nd largest economy.", want: match},
		{name: "ordinal disagrees", claim: "It is the second-largest economy.", passage: "It is the third-largest economy.", want: mismatch},
		{name: "two figures, one agrees", claim: "80 graphs from 58 peer-reviewed papers", passage: "58 papers were reviewed.", want: na},
		{name: "identifiers are not figures", claim: "COVID-19 killed 7 million people.", passage: "About 7 million COVID-19 deaths were reported.", want: match},
		{name: "identifiers only", claim: "COVID-19 killed 7 million people.", passage: "COVID-19 and H5N1 are viruses.", want: na},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, checks.Numbers(tt.claim, tt.passage))
		})
	}
}

func TestNumbersHostile(t *testing.T) {
	filler := strings.Repeat("The satellites were counted again and again. ", 100<<10/45)
	tests := []struct {
		name, claim, passage string
		want                 evidence.Num
	}{
		{name: "100 KB passage, figure at the end", claim: spacecraft, passage: filler + "The count was 9,210.", want: match},
		{name: "figure beyond the read limit", claim: spacecraft,
			passage: strings.Repeat("x", checks.MaxPassageBytes) + " The count was 9,210.", want: na},
		{name: "NUL inside a number", claim: spacecraft, passage: "The count was 9,\x00210.", want: na},
		{name: "NUL around a number", claim: spacecraft, passage: "\x00The count was\x009,210\x00.", want: match},
		{name: "not UTF-8", claim: spacecraft, passage: "count \xff\xfe9,210\xc3", want: match},
		{name: "absurd number in the passage", claim: spacecraft, passage: "The count was 1e400.", want: na},
		{name: "absurd number in the claim", claim: "There are 1e400 satellites.", passage: "There are 9,210 satellites.", want: na},
		{name: "NaN and Inf", claim: "NaN satellites, Inf satellites", passage: "NaN Inf -Inf", want: na},
		{name: "many digits", claim: spacecraft, passage: "The count was " + strings.Repeat("9", 5000) + ".", want: na},
		{name: "huge but finite", claim: "There are 1e99 grains.", passage: "There are 1.01e99 grains.", want: match},
		{name: "figures beyond the first 4,096 are not read", claim: spacecraft, passage: strings.Repeat("7,500 ", 20000) + "9,210", want: mismatch},
		{name: "only separators", claim: ",,,...,,,", passage: "9,,,,,,210", want: na},
		{name: "empty", claim: "", passage: "", want: na},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, checks.Numbers(tt.claim, tt.passage))
		})
	}
}

// FuzzNumbers checks that Numbers never panics, answers one of its three
// values, and answers the same twice.
func FuzzNumbers(f *testing.F) {
	seeds := [][2]string{
		{spacecraft, "Our database recorded 9,210 operational satellites as of January 1, 2024."},
		{spacecraft, "about 7,500"},
		{"90 per cent of reefs", "5-10% of 1.234.567 and 9 210,5"},
		{"between 1979 and 2000", "from 1979 to 2000, (1979–2000), the 1970s, 19th century"},
		{"$9.2 million", "US$5 €5bn £300k 3 per 100,000 $70 a barrel"},
		{"did not exceed 9,000", "didn't reach 5 ≤8 >=4 ~12 9,000+"},
		{"2°C warmer", "100°F -5 °C 1.5°C above 3.6 °F"},
		{"1e400 NaN", "\x00\xff 1e-400 --5 −5 $-$ 9k9k 2024-13-45 31 February 2024"},
		{"twenty-first century fifty-five thousand", "one hundred and five ninety-nine-nine"},
		{"the second-largest", "1st 2nd 3rd 11th 21st 2th 1000000000th"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, claim, passage string) {
		got := checks.Numbers(claim, passage)
		require.Contains(t, []evidence.Num{na, match, mismatch}, got)
		require.Equal(t, got, checks.Numbers(claim, passage))
	})
}

func BenchmarkNumbers(b *testing.B) {
	snippet := "Our database recorded 9,210 operational satellites as of January 1, 2024, confirming the growth trend " +
		"that began in the 2010s; launches rose from 586 in 2021 to about 2,800 in 2023, at a cost of $9.2 billion."
	page := strings.Repeat(snippet+" ", 100<<10/len(snippet))
	b.Run("snippet", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			checks.Numbers(spacecraft, snippet)
		}
	})
	b.Run("100KB", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			checks.Numbers(spacecraft, page)
		}
	})
}
