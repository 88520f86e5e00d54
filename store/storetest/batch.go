package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docgraph/docgraph/store"
)

// freshBatchWriter is s.fresh for a test of WriteDocuments: it skips the
// test when the store has none.
func (s suite) freshBatchWriter(t *testing.T) (store.Store, store.BatchWriter, func()) {
	t.Helper()
	st, closeFn := s.fresh(t)
	bw, ok := st.(store.BatchWriter)
	if !ok {
		t.Skip("store does not implement store.BatchWriter")
	}
	return st, bw, closeFn
}

// testBatchWrite checks WriteDocuments: several documents, one replacing
// an older version, in one transaction leave what writing them one by one
// leaves; a batch naming a document twice or holding one invalid write is
// refused whole.
func (s suite) testBatchWrite(t *testing.T) {
	st, bw, closeFn := s.freshBatchWriter(t)
	ctx := ctxFor(t)
	v1, v2, p := rhineV1().write(), rhineV2().write(v1ID()), ports().write()
	small := sized("doc-small", "small.md", "pebble", 2)
	mustWrite(t, st, v1)
	if err := bw.WriteDocuments(ctx, p, v2, small); err != nil {
		t.Fatalf("WriteDocuments: %v", err)
	}
	u := universeOf(v1, v2, p, small)
	got := takeSnapshot(t, st, u)

	bad := sized("doc-bad", "bad.md", "pebble", 1)
	bad.Chunks[0].Embedding = make([]float32, Dimension+1)
	for name, ws := range map[string][]*store.DocumentWrite{
		"a repeated document":  {rhineV2().write(), rhineV2().write()},
		"a repeated old id":    {rhineV2().write(v1ID()), ports().write(v1ID())},
		"one invalid document": {rhineV1().write(), bad},
	} {
		if err := bw.WriteDocuments(ctx, ws...); err == nil {
			t.Errorf("WriteDocuments with %s succeeded", name)
		}
		sameSnapshot(t, "after a refused batch with "+name, takeSnapshot(t, st, u), got)
	}
	closeFn()

	clean, _ := s.fresh(t)
	mustWrite(t, clean, p, rhineV2().write(), small)
	sameSnapshot(t, "batch vs one by one", got, takeSnapshot(t, clean, u))
}

// testBatcher runs the one-writer path ingest uses: documents submitted
// concurrently are grouped into transactions, a bad document fails alone,
// and a new version submitted after the old one wins.
func (s suite) testBatcher(t *testing.T) {
	st, closeFn := s.fresh(t)
	ctx := ctxFor(t)
	b := store.NewBatcher(st, store.BatchOptions{MaxDocuments: 8, MaxDelay: 50 * time.Millisecond})
	var ws []*store.DocumentWrite
	for i := range 20 {
		ws = append(ws, sized(fmt.Sprintf("doc-%02d", i), fmt.Sprintf("batch/%02d.md", i), "batched", 1+i%3))
	}
	bad := sized("doc-bad", "batch/bad.md", "batched", 1)
	bad.Chunks[0].Embedding = make([]float32, Dimension+1)

	var mu sync.Mutex
	failed := map[string]error{}
	var wg sync.WaitGroup
	submit := func(w *store.DocumentWrite) {
		defer wg.Done()
		if err := b.Write(ctx, w); err != nil {
			mu.Lock()
			failed[w.Document.ID] = err
			mu.Unlock()
		}
	}
	wg.Add(len(ws) + 1)
	go submit(bad)
	for _, w := range ws {
		go submit(w)
	}
	wg.Wait()
	// An old version and its replacement in one burst: never one group,
	// and the later one wins.
	v1, v2, p := rhineV1().write(), rhineV2().write(v1ID()), ports().write()
	var outcome [3]error
	wg.Add(3)
	for i, w := range []*store.DocumentWrite{v1, p, v2} {
		done := func(err error) { outcome[i] = err; wg.Done() }
		if err := b.Submit(ctx, w, done); err != nil {
			t.Fatalf("Submit(%s): %v", w.Document.ID, err)
		}
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := b.Submit(ctx, p, func(error) {}); !errors.Is(err, store.ErrBatcherClosed) {
		t.Errorf("Submit after Close = %v, want ErrBatcherClosed", err)
	}
	for i, err := range outcome {
		if err != nil {
			t.Errorf("write %d of the versions: %v", i, err)
		}
	}
	if len(failed) != 1 || failed[bad.Document.ID] == nil {
		t.Errorf("failed writes = %v; want only %s", failed, bad.Document.ID)
	}
	stats := b.Stats()
	if stats.Documents != int64(len(ws)+3) || stats.Failed != 1 {
		t.Errorf("batcher stats %+v; want %d documents written, 1 failed", stats, len(ws)+3)
	}
	if _, ok := st.(store.BatchWriter); ok && stats.Transactions >= stats.Documents {
		t.Errorf("batcher stats %+v: %d documents took %d transactions, want them grouped", stats, stats.Documents, stats.Transactions)
	}
	all := append(ws, v1, v2, p, bad)
	got := takeSnapshot(t, st, universeOf(all...))
	closeFn()

	clean, _ := s.fresh(t)
	mustWrite(t, clean, ws...)
	mustWrite(t, clean, p, rhineV2().write())
	sameSnapshot(t, "batcher vs one by one", got, takeSnapshot(t, clean, universeOf(all...)))
}

// groupLimited is a store whose groups a GroupLimiter caps at rows.
type groupLimited struct {
	store.Store
	store.BatchWriter
	rows int
}

func (g groupLimited) MaxGroupRows() int { return g.rows }

// testBatcherGroupLimit checks that a Batcher keeps its groups within the
// store's MaxGroupRows (while still grouping documents that fit), and that
// a document bigger than the limit is written whole.
func (s suite) testBatcherGroupLimit(t *testing.T) {
	st, bw, _ := s.freshBatchWriter(t)
	ctx := ctxFor(t)
	var ws []*store.DocumentWrite
	total := 0
	for i := range 12 {
		w := sized(fmt.Sprintf("doc-limit-%02d", i), fmt.Sprintf("limit/%02d.md", i), "limited", 2)
		ws = append(ws, w)
		total += 1 + len(w.Chunks) + len(w.Entities) + len(w.Relations)
	}
	big := sized("doc-limit-big", "limit/big.md", "limited", 8)
	limit := 3 * total / len(ws) // three documents a group
	b := store.NewBatcher(groupLimited{st, bw, limit}, store.BatchOptions{MaxDelay: time.Hour})
	for _, w := range append(ws, big) {
		if err := b.Submit(ctx, w, func(err error) {
			if err != nil {
				t.Errorf("write %s: %v", w.Document.ID, err)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	stats := b.Stats()
	if stats.Documents != int64(len(ws)+1) || stats.Transactions < int64(len(ws)/3+1) || stats.Transactions > int64(len(ws)/2+1) {
		t.Errorf("batcher stats %+v; want %d documents in %d to %d transactions (groups of at most %d rows)",
			stats, len(ws)+1, len(ws)/3+1, len(ws)/2+1, limit)
	}
	for _, w := range append(ws, big) {
		got, err := st.DocumentChunks(ctx, w.Document.ID)
		if err != nil || len(got) != len(w.Chunks) {
			t.Errorf("%s: %d chunks stored (%v), want %d", w.Document.ID, len(got), err, len(w.Chunks))
		}
	}
}

// testBatcherCancelled checks that documents whose submitter gave up before
// their group started are never written.
func (s suite) testBatcherCancelled(t *testing.T) {
	st, _ := s.fresh(t)
	ctx, cancel := context.WithCancel(ctxFor(t))
	b := store.NewBatcher(st, store.BatchOptions{MaxDelay: time.Hour, MaxDocuments: 1000})
	errs := make(chan error, 3)
	for i := range 3 {
		w := sized(fmt.Sprintf("doc-gone-%d", i), fmt.Sprintf("gone/%d.md", i), "gone", 1)
		if err := b.Submit(ctx, w, func(err error) { errs <- err }); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	b.Close()
	for range 3 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled document's outcome = %v, want context.Canceled", err)
		}
	}
	stats, err := st.Stats(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	if stats.Documents != 0 {
		t.Errorf("store holds %d documents after every submitter gave up; want none", stats.Documents)
	}
}
