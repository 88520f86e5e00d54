package sqlite

import "testing"

func TestGroupRows(t *testing.T) {
	for _, c := range []struct {
		stored int64
		want   int
	}{
		{0, minGroupRows},                    // a new store's first groups
		{10_000, minGroupRows},               // 15,000 is below the floor
		{40_000, 60_000},                     // one and a half times what is stored
		{100_000, slowGrowthRows},            // 150,000: where the fast growth ends
		{200_000, slowGrowthRows},            // not 300,000
		{400_000, slowGrowthRows},            // not a quarter (100,000) either
		{1_000_000, 250_000},                 // a quarter of what is stored, past the bound
		{2_000_000, 500_000},                 // still a quarter
		{5_000_000, maxGroupRows},            // never past the ceiling
		{1 << 40, maxGroupRows},              // nor overflowing
		{slowGrowthRows * 4, slowGrowthRows}, // both rules give the bound
	} {
		if got := groupRows(c.stored); got != c.want {
			t.Errorf("groupRows(%d) = %d, want %d", c.stored, got, c.want)
		}
	}
}
