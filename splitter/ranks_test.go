package splitter

import (
	"testing"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// TestLoadRanksMatchesLoader: our reading of the embedded file gives the
// loader's own map, token for token, and a decoder that inverts it.
func TestLoadRanksMatchesLoader(t *testing.T) {
	want, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe("cl100k_base.tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	got, decoder, err := loadRanks("cl100k_base.tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(decoder) != len(want) {
		t.Fatalf("%d ranks and %d decoded, want %d", len(got), len(decoder), len(want))
	}
	for tok, r := range want {
		if got[tok] != r || decoder[r] != tok {
			t.Fatalf("token %q: rank %d and decoder %q, want %d", tok, got[tok], decoder[r], r)
		}
	}
	if _, _, err := loadRanks("no-such.tiktoken"); err == nil {
		t.Error("a missing encoding loaded")
	}
}

// BenchmarkLoadRanks against the loader's LoadTiktokenBpe, which every
// one-shot query process pays before it answers (2 cores: 28.6 -> 12.8 ms).
func BenchmarkLoadRanks(b *testing.B) {
	b.Run("loader", func(b *testing.B) {
		for b.Loop() {
			if _, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe("cl100k_base.tiktoken"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("loadRanks", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := loadRanks("cl100k_base.tiktoken"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
