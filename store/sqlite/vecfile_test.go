package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"docgraph/store"
	"docgraph/store/storetest"
)

// TestVectorSidecar checks that a fresh process serves searches from the
// sidecar written by the first load, and never from a stale or foreign one.
func TestVectorSidecar(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "g.db")
	open := func() *Store {
		s, err := Open(ctx, path, storetest.Options())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	emb := storetest.Embedder()
	vec := func(text string) []float32 {
		v, _ := emb.EmbedQuery(ctx, text)
		return v
	}
	write := func(s *Store, id, text string) {
		w := &store.DocumentWrite{
			Document: store.Document{ID: id, Path: "/" + id, Status: store.StatusDone},
			Chunks:   []store.Chunk{{ID: id + ":0000", DocID: id, Text: text, End: len(text), Embedding: vec(text)}},
		}
		if err := s.WriteDocument(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	s := open()
	write(s, "d1", "alpha beta gamma")
	write(s, "d2", "delta epsilon")
	hits, err := s.SearchChunks(ctx, vec("delta epsilon"), 1)
	if err != nil || len(hits) != 1 || hits[0].DocID != "d2" {
		t.Fatalf("first search: %+v %v", hits, err)
	}
	s.Close()
	side := path + ".vec-chunks"
	if _, err := os.Stat(side); err != nil {
		t.Fatalf("no sidecar written: %v", err)
	}

	// A fresh process reads the sidecar; the result is the same.
	s = open()
	hits, err = s.SearchChunks(ctx, vec("delta epsilon"), 1)
	if err != nil || len(hits) != 1 || hits[0].DocID != "d2" || !s.chunkVecs.loaded {
		t.Fatalf("search from sidecar: %+v %v", hits, err)
	}
	// A write moves the generation: the sidecar is stale and not used.
	write(s, "d3", "zeta eta theta")
	s.Close()
	s = open()
	hits, _ = s.SearchChunks(ctx, vec("zeta eta theta"), 1)
	if len(hits) != 1 || hits[0].DocID != "d3" {
		t.Fatalf("stale sidecar served: %+v", hits)
	}
	s.Close()

	// A new database at the same path must not use the old one's sidecar,
	// even when their generations coincide.
	stale, _ := os.ReadFile(side)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(f)
	}
	s = open()
	write(s, "x1", "alpha beta gamma")
	write(s, "x2", "something else")
	write(s, "x3", "more")
	os.WriteFile(side, stale, 0o644)
	hits, _ = s.SearchChunks(ctx, vec("delta epsilon"), 3)
	for _, h := range hits {
		if h.DocID == "d2" {
			t.Fatal("a sidecar of another database was used")
		}
	}
	s.Close()
	// A damaged sidecar is ignored.
	os.WriteFile(side, stale[:len(stale)/2], 0o644)
	s = open()
	defer s.Close()
	if hits, err := s.SearchChunks(ctx, vec("more"), 1); err != nil || len(hits) != 1 || hits[0].DocID != "x3" {
		t.Fatalf("damaged sidecar: %+v %v", hits, err)
	}
}
