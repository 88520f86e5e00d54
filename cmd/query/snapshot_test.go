package main

import (
	"testing"

	"github.com/docgraph/docgraph/pipeline"
)

// TestEmbeddedStore: only a store in a local file gets the in-memory
// passage snapshot; a server's store is never streamed whole.
func TestEmbeddedStore(t *testing.T) {
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"sqlite://./.docgraph/graph.db", true},
		{"file:///tmp/graph.db", true},
		{".docgraph/graph.db", true},
		{"neo4j://127.0.0.1:7687", false},
		{"bolt+s://db.example:7687/docs", false},
		{"neo4j+s://user@host", false},
	} {
		if got := pipeline.EmbeddedStore(c.url); got != c.want {
			t.Errorf("EmbeddedStore(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}
