package ner_test

import (
	"context"
	"testing"

	"github.com/docgraph/docgraph/ner"
)

// A generic heading used as a title must not become a document entity,
// or every README titled "Table of Contents" would share one.
func TestGenericTitleIsNoEntity(t *testing.T) {
	for _, tc := range []struct {
		title string
		want  bool
	}{{"Table of Contents", false}, {"Introduction", false}, {"Teutberga", true}} {
		x, err := ner.NewOffline().Extract(context.Background(), ner.Chunk{
			ID: "p0", DocTitle: tc.title,
			Text: "Teutberga was a queen of Lotharingia by marriage to Lothair II.",
		})
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, e := range x.Entities {
			if e.Type == "document" {
				got = true
				if e.Name != tc.title {
					t.Errorf("title %q: document entity %q", tc.title, e.Name)
				}
			}
		}
		if got != tc.want {
			t.Errorf("title %q: document entity = %v, want %v", tc.title, got, tc.want)
		}
	}
}
