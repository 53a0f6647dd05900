package checks

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// days is the day number of a date, for the expected figures below.
func days(t *testing.T, y, m, d int) float64 {
	t.Helper()
	v, ok := day(y, m, d)
	require.True(t, ok)
	return v
}

// fig is a figure without its step and place, for comparisons.
type fig struct {
	kind string
	op   op
	v    float64
	v2   float64
}

func figsOf(s string) []fig {
	var out []fig
	for _, f := range extract(s, MaxPassageBytes, maxPassageFigures) {
		out = append(out, fig{kind: f.kind, op: f.op, v: round6(f.v), v2: round6(f.v2)})
	}
	return out
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func TestExtract(t *testing.T) {
	d := func(y, m, dd int) float64 { return days(t, y, m, dd) }
	yr := func(from, to int) fig {
		lo, hi := yearSpan(from, to)
		return fig{kind: kindDate, op: opRange, v: lo, v2: hi}
	}
	tests := []struct {
		name, in string
		want     []fig
	}{
		{name: "seed claim", in: "The official number of active spacecraft orbiting Earth, as of the beginning of 2024, exceeded 9,000.",
			want: []fig{yr(2024, 2024), {kind: kindCount, op: opGT, v: 9000}}},
		{name: "seed passage", in: "Our database recorded 9,210 operational satellites as of January 1, 2024.",
			want: []fig{{kind: kindCount, v: 9210}, {kind: kindDate, op: opRange, v: d(2024, 1, 1), v2: d(2024, 1, 2)}}},
		{name: "comparator across an article", in: "surpassed the 9k mark in late 2023",
			want: []fig{{kind: kindCount, op: opGT, v: 9000}, yr(2023, 2023)}},
		{name: "estimate", in: "about 7,500 satellites", want: []fig{{kind: kindCount, op: opApprox, v: 7500}}},
		{name: "space and dot grouping", in: "9 210 people, 1.234.567 votes, 9.21 points",
			want: []fig{{kind: kindCount, v: 9210}, {kind: kindCount, v: 1234567}, {kind: kindCount, v: 9.21}}},
		{name: "magnitudes", in: "9.2 million, 5bn, 3 thousand, 2.5 trillion",
			want: []fig{{kind: kindCount, v: 9.2e6}, {kind: kindCount, v: 5e9}, {kind: kindCount, v: 3000}, {kind: kindCount, v: 2.5e12}}},
		{name: "currencies", in: "$9.2 million, €5bn, £300k, US$5, A$7, 40 euros, USD 12",
			want: []fig{{kind: "money:USD", v: 9.2e6}, {kind: "money:EUR", v: 5e9}, {kind: "money:GBP", v: 3e5},
				{kind: "money:USD", v: 5}, {kind: "money:AUD", v: 7}, {kind: "money:EUR", v: 40}, {kind: "money:USD", v: 12}}},
		{name: "percentages", in: "90 per cent, 3.5%, 12 percent, 2 percentage points",
			want: []fig{{kind: kindPercent, v: 90}, {kind: kindPercent, v: 3.5}, {kind: kindPercent, v: 12}, {kind: kindPercent, v: 2}}},
		{name: "units", in: "1.2 km, 5 miles, 2 lb, 3 tonnes, 500 square miles, 20 mph, 400 ppm, 3 hours",
			want: []fig{{kind: kindLength, v: 1200}, {kind: kindLength, v: 8046.72}, {kind: kindMass, v: 0.907185},
				{kind: kindMass, v: 3000}, {kind: kindArea, v: 1294994055.168}, {kind: kindSpeed, v: 8.9408},
				{kind: kindConcentration, v: 400}, {kind: kindDuration, v: 10800}}},
		{name: "attached units and powers", in: "5km, 2.5 km², 3 m³, 10mph, a 30-year trend",
			want: []fig{{kind: kindLength, v: 5000}, {kind: kindArea, v: 2.5e6}, {kind: kindVolume, v: 3000},
				{kind: kindSpeed, v: 4.4704}, {kind: kindDuration, v: 30 * year}}},
		{name: "temperatures", in: "100°F; -5 °C; it was 2°C warmer; rose by 3.6 °F",
			want: []fig{{kind: kindTemp, v: 37.777778}, {kind: kindTemp, v: -5}, {kind: kindTempChange, v: 2}, {kind: kindTempChange, v: 2}}},
		{name: "dates", in: "2024-03-04, 4 March 2024, 4th of March 2024, October 16, 1898, March 2024",
			want: []fig{{kind: kindDate, op: opRange, v: d(2024, 3, 4), v2: d(2024, 3, 5)}, {kind: kindDate, op: opRange, v: d(2024, 3, 4), v2: d(2024, 3, 5)},
				{kind: kindDate, op: opRange, v: d(2024, 3, 4), v2: d(2024, 3, 5)}, {kind: kindDate, op: opRange, v: d(1898, 10, 16), v2: d(1898, 10, 17)},
				{kind: kindDate, op: opRange, v: d(2024, 3, 1), v2: d(2024, 4, 1)}}},
		{name: "decades centuries and periods", in: "in the 1970s; the 19th century; the twenty-first century; (1979–2000); from 1979 to 2000",
			want: []fig{yr(1970, 1979), yr(1800, 1900), yr(2000, 2100), yr(1979, 2000), yr(1979, 2000)}},
		{name: "years need a cue", in: "In 1975 the 1975 election; 2023 was hot. The 1500 people",
			want: []fig{yr(1975, 1975), yr(2023, 2023)}},
		{name: "bounded dates are not read", in: "since 1997, before 2020, by 2030, circa 1500, pre-2000",
			want: nil},
		{name: "a comparator makes a year-like number a count", in: "more than 2000 people",
			want: []fig{{kind: kindCount, op: opGT, v: 2000}}},
		{name: "ordinals", in: "the 3rd, the second-largest economy, at first, a second time",
			want: []fig{{kind: kindOrdinal, v: 3}, {kind: kindOrdinal, v: 2}}},
		{name: "ranges", in: "5-10%, 80 to 90 years, between 2 and 4 km, $5–$10",
			want: []fig{{kind: kindPercent, op: opRange, v: 5, v2: 10}, {kind: kindDuration, op: opRange, v: 80 * year, v2: 90 * year},
				{kind: kindLength, op: opRange, v: 2000, v2: 4000}, {kind: "money:USD", op: opRange, v: 5, v2: 10}}},
		{name: "a change is two figures", in: "rose from 5% to 10%",
			want: []fig{{kind: kindPercent, v: 5}, {kind: kindPercent, v: 10}}},
		{name: "comparators", in: "at least 5, under 3, at most 7, nearly 9,000, ~12, 9,000+, 50 or more, >4, ≤8",
			want: []fig{{kind: kindCount, op: opGE, v: 5}, {kind: kindCount, op: opLT, v: 3}, {kind: kindCount, op: opLE, v: 7},
				{kind: kindCount, op: opNearly, v: 9000}, {kind: kindCount, op: opApprox, v: 12}, {kind: kindCount, op: opGE, v: 9000},
				{kind: kindCount, op: opGE, v: 50}, {kind: kindCount, op: opGT, v: 4}, {kind: kindCount, op: opLE, v: 8}}},
		{name: "negation", in: "did not exceed 9,000; didn't reach 5; is not 12; never more than 3",
			want: []fig{{kind: kindCount, op: opLE, v: 9000}, {kind: kindCount, v: 5}, {kind: kindCount, op: opLE, v: 3}}},
		{name: "words", in: "five years, fifty-five thousand, ten per cent, one of the factors, three people",
			want: []fig{{kind: kindDuration, v: 5 * year}, {kind: kindCount, v: 55000}, {kind: kindPercent, v: 10}}},
		{name: "rates", in: "$70 a barrel, 3% a year, 40 Gt per year, 3 per 100,000, 12 per capita",
			want: []fig{{kind: "money:USD/barrel", v: 70}, {kind: "percent/year", v: 3}, {kind: "mass/year", v: 4e13},
				{kind: "count/person", v: 12}}},
		{name: "not figures", in: "CO2 COVID-19 F-35 Q1 #5 [12] 24/7 3:45 1/3 03/04/2024 192.168.1.1 1,5 4G 5m 5 pounds 1e400 NaN 200 A.D. 4 March",
			want: nil},
		{name: "degrees without a scale are not read", in: "a 45° angle, 2 degrees warmer, 31 February 2024, the 2500s, the 40th century",
			want: nil},
		{name: "huge numbers", in: strings.Repeat("9", 39) + " and " + strings.Repeat("9", 41) + " and 1e99 and 1e101",
			want: []fig{{kind: kindCount, v: 1e39}, {kind: kindCount, v: 1e99}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, figsOf(tt.in))
		})
	}
}

func TestParseNumber(t *testing.T) {
	tests := []struct {
		raw             string
		ok              bool
		value           float64
		decimals, zeros int
		plain           bool
	}{
		{raw: "9,210", ok: true, value: 9210, zeros: 1},
		{raw: "9,000", ok: true, value: 9000, zeros: 3},
		{raw: "1975", ok: true, value: 1975, plain: true},
		{raw: "9.21", ok: true, value: 9.21, decimals: 2},
		{raw: "9 210,5", ok: true, value: 9210.5, decimals: 1},
		{raw: "1.234,5", ok: true, value: 1234.5, decimals: 1},
		{raw: "1,234.5", ok: true, value: 1234.5, decimals: 1},
		{raw: "1.5e9", ok: true, value: 1.5e9, decimals: 1},
		{raw: "1,5"}, {raw: "1,2,3"}, {raw: "192.168.1.1"}, {raw: "1e400"}, {raw: "1,000e5"},
		{raw: strings.Repeat("1", 41)}, {raw: ""},
	}
	for _, tt := range tests {
		n, ok := parseNumber(tt.raw)
		require.Equal(t, tt.ok, ok, tt.raw)
		if ok {
			require.Equal(t, tt.value, n.value, tt.raw)
			require.Equal(t, tt.decimals, n.decimals, tt.raw)
			require.Equal(t, tt.zeros, n.zeros, tt.raw)
			require.Equal(t, tt.plain, n.plain, tt.raw)
		}
	}
}
