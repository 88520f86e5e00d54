package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// writeCorpus writes n small documents that share names, so their
// transactions touch the same entities.
func writeCorpus(t *testing.T, dir string, n int) {
	t.Helper()
	for i := range n {
		write(t, filepath.Join(dir, fmt.Sprintf("doc%02d.md", i)), fmt.Sprintf(
			"# Note %d\n\nAda Lovelace met Charles Babbage in London in year %d. Mary Somerville introduced them at Note %d.\n", i, 1800+i, i))
	}
}

func TestIngestGroupsWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	writeCorpus(t, docs, 30)
	settings := pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8, Concurrency: 4}

	grouped, st := newPipeline(t, filepath.Join(dir, "grouped.db"), settings)
	sum, err := grouped.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := sum.Writes
	if sum.Added != 30 || w == nil || w.Documents != 30 || w.Failed != 0 {
		t.Fatalf("summary %+v, writes %+v; want 30 documents added and written", sum, w)
	}
	if w.Transactions >= w.Documents {
		t.Errorf("%d documents took %d transactions; want them grouped", w.Documents, w.Transactions)
	}

	single, st1 := newPipeline(t, filepath.Join(dir, "single.db"), settings)
	single.Batch = store.BatchOptions{MaxDocuments: 1}
	sum1, err := single.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum1.Writes.Transactions != 30 {
		t.Errorf("one document per transaction took %d transactions for 30", sum1.Writes.Transactions)
	}
	a, _ := st.Stats(ctx)
	b, _ := st1.Stats(ctx)
	if a.Documents != b.Documents || a.Chunks != b.Chunks || a.Entities != b.Entities || a.Relations != b.Relations || a.Mentions != b.Mentions {
		t.Errorf("grouped writes hold %+v, one by one %+v", a, b)
	}
	for _, name := range []string{"Ada Lovelace", "Charles Babbage", "London"} {
		x, _ := st.Entities(ctx, []string{graphbuild.EntityID(name)})
		y, _ := st1.Entities(ctx, []string{graphbuild.EntityID(name)})
		if len(x) != 1 || len(y) != 1 || x[0].Description != y[0].Description || x[0].Mentions != y[0].Mentions {
			t.Errorf("%s grouped %+v, one by one %+v", name, x, y)
		}
	}
}

// unreachable is a store whose writes start failing as a lost server's do.
type unreachable struct {
	store.Store
	after atomic.Int64 // writes that still succeed
}

func (u *unreachable) fail() error {
	if u.after.Add(-1) >= 0 {
		return nil
	}
	return fmt.Errorf("neo4j store bolt://db:7687: write: %w: connection refused", store.ErrUnavailable)
}

func (u *unreachable) WriteDocument(ctx context.Context, w *store.DocumentWrite) error {
	if err := u.fail(); err != nil {
		return err
	}
	return u.Store.WriteDocument(ctx, w)
}

func (u *unreachable) WriteDocuments(ctx context.Context, ws ...*store.DocumentWrite) error {
	if err := u.fail(); err != nil {
		return err
	}
	return u.Store.(store.BatchWriter).WriteDocuments(ctx, ws...)
}

// TestIngestStopsWhenStoreUnavailable checks that a store that cannot be
// reached stops the run with its error instead of failing every document,
// leaves nothing half-done, and that the next run completes the work.
func TestIngestStopsWhenStoreUnavailable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	writeCorpus(t, docs, 12)
	settings := pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8, Concurrency: 2}
	p, st := newPipeline(t, filepath.Join(dir, "g.db"), settings)
	down := &unreachable{Store: st}
	down.after.Store(1)
	p.Store = down
	p.Batch = store.BatchOptions{MaxDocuments: 3}
	sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Ingest error = %v, want one wrapping store.ErrUnavailable", err)
	}
	if sum.Failed != 0 {
		t.Errorf("%d documents reported failed; an unreachable store is the run's failure, not theirs: %+v", sum.Failed, sum.Failures)
	}
	stored, err := st.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range stored {
		if d.Status != store.StatusDone {
			t.Errorf("%s left %s", d.Path, d.Status)
		}
	}

	p.Store = st
	sum, err = p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil || sum.Failed != 0 || sum.Added+sum.Unchanged != 12 {
		t.Fatalf("re-run: %+v, %v; want all 12 documents stored", sum, err)
	}
}
