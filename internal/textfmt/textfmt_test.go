package textfmt

import (
	"math"
	"testing"
)

func TestThousands(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {150000, "150,000"}, {1234567, "1,234,567"},
		{-1234, "-1,234"}, {-999, "-999"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Thousands(tc.n); got != tc.want {
			t.Errorf("Thousands(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
