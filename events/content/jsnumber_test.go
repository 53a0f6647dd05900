package content

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJSNumberConversions(t *testing.T) {
	t.Parallel()
	parse := []struct {
		in   string
		want float64
	}{
		{"3", 3}, {" 7 ", 7}, {"", 0}, {"  ", 0}, {"-2", -2}, {"+4", 4}, {"2.5", 2.5},
		{".5", 0.5}, {"5.", 5}, {"1e3", 1000}, {"1E-2", 0.01}, {"0x10", 16}, {"0o17", 15},
		{"0b101", 5}, {"Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}, {"1e400", math.Inf(1)},
	}
	for _, tc := range parse {
		require.Equal(t, tc.want, jsStringToNumber(tc.in), "%q", tc.in)
	}
	for _, bad := range []string{"x", "1x", "0x", "-0x10", "1_000", "e5", ".", "+", "inf", "NaN", "1e", "0x1g"} {
		require.True(t, math.IsNaN(jsStringToNumber(bad)), "%q", bad)
	}

	a, b := 0.1, 0.2
	point3 := a + b
	format := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {3, "3"}, {-2, "-2"}, {2.5, "2.5"}, {1000, "1000"},
		{1e21, "1e+21"}, {1.5e21, "1.5e+21"}, {123456789012345680000, "123456789012345680000"},
		{1e-7, "1e-7"}, {1.5e-7, "1.5e-7"}, {0.000001, "0.000001"}, {point3, "0.30000000000000004"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
	}
	for _, tc := range format {
		require.Equal(t, tc.want, jsNumberToString(tc.in), "%v", tc.in)
	}
}
