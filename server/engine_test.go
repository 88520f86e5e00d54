package server

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/pipeline"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// testEngine is a warm engine over testdata/corpus, ingested offline into
// a new store, with the default configuration.
func testEngine(t *testing.T) *Engine {
	t.Helper()
	ctx := context.Background()
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	emb := embedstore.NewHash()
	s := pipeline.Settings{Store: db}
	st, err := pipeline.OpenStore(ctx, s, emb, pipeline.NewMerger(emb))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Offline(s, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	corpus, _ := filepath.Abs("../testdata/corpus")
	sum, err := p.Ingest(ctx, []string{corpus}, pipeline.Options{})
	st.Close()
	if err != nil || sum.Added == 0 || sum.Failed != 0 {
		t.Fatalf("ingest: %+v %v", sum, err)
	}
	s.Embedder = "hash"
	e, err := OpenEngine(ctx, s, DefaultConfig(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}
