package pipeline

import (
	"testing"

	"github.com/docgraph/docgraph/store"
)

func TestRebuildTextFillsGapsAndOverlaps(t *testing.T) {
	text := "Alpha beta.\n\nGamma delta epsilon. Zeta"
	chunks := []store.Chunk{
		{Start: 0, End: 11, Text: text[0:11]},   // "Alpha beta."
		{Start: 13, End: 33, Text: text[13:33]}, // after a trimmed "\n\n"
		{Start: 19, End: 38, Text: text[19:38]}, // overlaps the one before
	}
	got := RebuildText(chunks)
	if want := "Alpha beta.\n\nGamma delta epsilon. Zeta"; got != want {
		t.Errorf("RebuildText = %q, want %q", got, want)
	}
}
