package storetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/store"
)

func testReopen(t *testing.T, open func(t *testing.T, dir string, opts store.Options) (store.Store, error)) {
	dir := t.TempDir()
	a, p := rhineV1().write(), ports().write()
	u := universeOf(a, p)
	st, err := open(t, dir, Options())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	mustWrite(t, st, a, p)
	if err := st.SetStatus(ctxFor(t), store.Document{ID: "doc-pending", Path: "later.md"}, store.StatusFailed, "no text"); err != nil {
		t.Fatal(err)
	}
	q := Embedder().Vector("port city")
	before := takeSnapshot(t, st, u)
	hitsBefore, err := st.SearchEntities(ctxFor(t), q, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	st, err = open(t, dir, Options())
	if err != nil {
		t.Fatalf("reopen with the same embedder: %v", err)
	}
	defer st.Close()
	sameSnapshot(t, "after reopen", takeSnapshot(t, st, u), before)
	hits, err := st.SearchEntities(ctxFor(t), q, 3)
	if err != nil || len(hits) != len(hitsBefore) {
		t.Fatalf("SearchEntities after reopen = %d hits, %v; want %d", len(hits), err, len(hitsBefore))
	}
	for i := range hits {
		if hits[i].ID != hitsBefore[i].ID {
			t.Errorf("SearchEntities after reopen hit %d = %s, want %s", i, hits[i].ID, hitsBefore[i].ID)
		}
	}
	// The reopened store is fully writable.
	if err := st.DeleteDocument(ctxFor(t), a.Document.ID); err != nil {
		t.Fatalf("DeleteDocument after reopen: %v", err)
	}
	wantEnts, _ := expectedGraph(t, p)
	if got := takeSnapshot(t, st, u); len(got.Entities) != len(wantEnts) {
		t.Errorf("after reopen and delete: %d entities, want %d", len(got.Entities), len(wantEnts))
	}
}

func testEmbedderMismatch(t *testing.T, open func(t *testing.T, dir string, opts store.Options) (store.Store, error)) {
	dir := t.TempDir()
	st, err := open(t, dir, Options())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	mustWrite(t, st, ports().write())
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	held := Options().Embedder
	for _, other := range []store.EmbedderInfo{
		{Name: "other-model", Dimension: held.Dimension},
		{Name: held.Name, Dimension: held.Dimension * 2},
	} {
		opts := Options()
		opts.Embedder = other
		st, err := open(t, dir, opts)
		if err == nil {
			st.Close()
			t.Errorf("open with embedder %+v over a store of %+v succeeded", other, held)
			continue
		}
		if !errors.Is(err, store.ErrEmbedderMismatch) {
			t.Errorf("open with embedder %+v: error %v does not wrap ErrEmbedderMismatch", other, err)
		}
		if !strings.Contains(err.Error(), held.Name) {
			t.Errorf("mismatch error %q does not name the embedder the store holds (%s)", err, held.Name)
		}
	}
	// The refused opens changed nothing.
	st, err = open(t, dir, Options())
	if err != nil {
		t.Fatalf("reopen with the right embedder after refusals: %v", err)
	}
	defer st.Close()
	if stats, err := st.Stats(ctxFor(t)); err != nil || stats.Documents != 1 || stats.Embedder != held {
		t.Errorf("Stats after refused opens = %+v, %v", stats, err)
	}
}
