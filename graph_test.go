package docgraph_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph"
)

// TestOpenKeepsTheStoresEmbedder: a store built with one embedder is
// opened again with it when no embedder is chosen, and queried.
func TestOpenKeepsTheStoresEmbedder(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + filepath.Join(t.TempDir(), "graph.db")
	g, err := docgraph.Open(ctx, url, docgraph.WithEmbedder("hash:64"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Ingest(ctx, "testdata/corpus/systems"); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}

	g, err = docgraph.Open(ctx, url)
	if err != nil {
		t.Fatalf("reopening without an embedder: %v", err)
	}
	defer g.Close()
	st, err := g.Store().Stats(ctx)
	if err != nil || st.Embedder.Dimension != 64 {
		t.Fatalf("stats %+v, %v: want the store's 64-dimension embedder", st, err)
	}
	res, err := g.Query(ctx, "Who designed the Go programming language?", docgraph.WithTopK(1))
	if err != nil || len(res.Passages) != 1 || filepath.Base(res.Passages[0].DocPath) != "go-language.md" {
		t.Fatalf("query: %v %+v", err, res)
	}
}
