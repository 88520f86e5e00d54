package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/ann"
	"github.com/docgraph/docgraph/store/storetest"
)

// annDocs are documents with enough entities, relations and chunks that
// the index files hold something of every kind.
func annDocs(n, dim int) []*store.DocumentWrite {
	var docs []*store.DocumentWrite
	for i := 0; i < n; i++ {
		docs = append(docs, synthetic(syntheticSize{docID: fmt.Sprintf("a%03d", i), path: fmt.Sprintf("/a%03d.txt", i),
			chunks: 4, entities: 30, relations: 20, pool: 200, seed: uint64(100 + i), dim: dim}))
	}
	return docs
}

// searchAll runs the three vector searches for q.
func searchAll(t *testing.T, s *Store, q []float32, k int) (chunks, ents, rels []string) {
	t.Helper()
	ctx := context.Background()
	ch, err := s.SearchChunks(ctx, q, k)
	if err != nil {
		t.Fatal(err)
	}
	es, err := s.SearchEntities(ctx, q, k)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := s.SearchRelations(ctx, q, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range ch {
		chunks = append(chunks, h.ID)
	}
	for _, h := range es {
		ents = append(ents, h.ID)
	}
	for _, h := range rs {
		rels = append(rels, h.ID)
	}
	return
}

// exactAll is searchAll by scanning every vector, the index set aside.
func exactAll(t *testing.T, s *Store, q []float32, k int) (chunks, ents, rels []string) {
	t.Helper()
	saved := s.ann
	s.ann = newANNSet(s)
	for _, kk := range s.ann.kinds {
		kk.path = "" // no index: every search scans
	}
	defer func() { s.ann = saved }()
	return searchAll(t, s, q, k)
}

// filesCurrent checks that every index file of the store at path holds
// its generation, and some vectors.
func filesCurrent(t *testing.T, s *Store, path string) {
	t.Helper()
	gen, _ := s.generation(context.Background())
	for _, name := range annNames {
		r, err := ann.OpenReader(path + ".ann-" + name)
		if err != nil {
			t.Fatalf("index %s: %v", name, err)
		}
		if int64(r.Generation()) != gen || r.Len() == 0 {
			t.Errorf("index %s holds generation %d (%d vectors), the store is at %d", name, r.Generation(), r.Len(), gen)
		}
		r.Close()
	}
}

// sameAsScanning checks that searches by a chunk vector of each of docs
// find through the index files what scanning every vector finds, and find
// something of every kind.
func sameAsScanning(t *testing.T, s *Store, when string, docs []*store.DocumentWrite) {
	t.Helper()
	for i, w := range docs {
		q := w.Chunks[1].Embedding
		c1, e1, r1 := searchAll(t, s, q, 8)
		c2, e2, r2 := exactAll(t, s, q, 8)
		if !slices.Equal(c1, c2) || !slices.Equal(e1, e2) || !slices.Equal(r1, r2) {
			t.Errorf("%s, query %d: through the index\n%v %v %v\nscanning\n%v %v %v", when, i, c1, e1, r1, c2, e2, r2)
		}
		if len(c1) == 0 || len(e1) == 0 || len(r1) == 0 {
			t.Errorf("%s, query %d: empty results %v %v %v", when, i, c1, e1, r1)
		}
	}
}

// TestIndexFilesFollowWrites: after writes (and Close, which waits for the
// files), the index files hold the store's generation, and searches
// through them find what scanning every vector finds, also from another
// process's handle, and after a delete.
func TestIndexFilesFollowWrites(t *testing.T) {
	ctx := context.Background()
	opts := storetest.Options()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs := annDocs(12, opts.Embedder.Dimension)
	if err := s.WriteDocuments(ctx, docs[:8]...); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close (waits for the index files): %v", err)
	}
	s, err = Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	filesCurrent(t, s, path)
	check := func(st *Store, when string) {
		t.Helper()
		sameAsScanning(t, st, when, docs[:3])
	}
	check(s, "after close and reopen")
	if s.ann.searched.Load() == 0 || s.ann.scanned.Load() != 0 || s.ann.overlaid.Load() != 0 {
		t.Errorf("with files up to date: %d searches through them, %d scans, %d vectors from the log; want only the first",
			s.ann.searched.Load(), s.ann.scanned.Load(), s.ann.overlaid.Load())
	}

	// Another handle writes; this one searches before and after that
	// handle's files catch up: its snapshot's answers either way.
	other, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.WriteDocuments(ctx, docs[8:]...); err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteDocument(ctx, docs[0].Document.ID); err != nil {
		t.Fatal(err)
	}
	check(s, "while the files lag behind another writer")
	if s.ann.overlaid.Load() == 0 {
		t.Error("no search scored the other writer's new vectors from the log: the lagging files were not exercised")
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	check(s, "after the other writer closed")
	hits, err := s.SearchChunks(ctx, docs[0].Chunks[1].Embedding, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.DocID == docs[0].Document.ID {
			t.Fatalf("a deleted document's chunk %s is still found", h.ID)
		}
	}
	var logged, floor int64
	s.rdb.QueryRow(`SELECT count(*) FROM vector_log`).Scan(&logged)
	floor, _ = logFloor(ctx, s.rdb)
	if gen, _ := s.generation(ctx); floor > gen {
		t.Errorf("log floor %d is past the generation %d", floor, gen)
	}
	t.Logf("vector log: %d rows, floor %d", logged, floor)
}

// TestDamagedIndexFile: a damaged index file is never trusted: searches
// scan until a writer builds it again.
func TestDamagedIndexFile(t *testing.T) {
	ctx := context.Background()
	opts := storetest.Options()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs := annDocs(4, opts.Embedder.Dimension)
	if err := s.WriteDocuments(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	s.Close()
	file := path + ".ann-relations"
	if err := os.WriteFile(file, []byte("not an index"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(ctx, path, store.Options{Embedder: opts.Embedder, Merger: opts.Merger, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	q := docs[1].Chunks[0].Embedding
	c1, e1, r1 := searchAll(t, ro, q, 5)
	c2, e2, r2 := exactAll(t, ro, q, 5)
	if !slices.Equal(r1, r2) || !slices.Equal(c1, c2) || !slices.Equal(e1, e2) || len(r1) == 0 {
		t.Errorf("with a damaged file: %v %v %v, scanning %v %v %v", c1, e1, r1, c2, e2, r2)
	}
	ro.Close()
	// A writer opening the store builds it again.
	w, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := ann.OpenReader(file)
	if err != nil || r.Len() == 0 {
		t.Fatalf("index not rebuilt: %v", err)
	}
	r.Close()
}

// TestStreamDraftsIndexFiles: a stream of writes into a new store builds
// its index files as drafts while it goes on, and installs them when it
// ends; the files then answer as scanning does, after documents were
// rewritten (entities shared with others change) and deleted in the
// middle of the stream. A stream into a store with index files changes
// them in place instead.
func TestStreamDraftsIndexFiles(t *testing.T) {
	ctx := context.Background()
	opts := storetest.Options()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(ctx, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs := annDocs(16, opts.Embedder.Dimension)
	// reopen closes the store (which waits for its files) and opens it
	// again; it returns how many drafts the closed handle installed.
	reopen := func() int64 {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		installed := s.ann.installed.Load()
		if s, err = Open(ctx, path, opts); err != nil {
			t.Fatal(err)
		}
		return installed
	}
	// commit writes and waits for the maintainer's draft step.
	commit := func(write func() error) {
		t.Helper()
		if err := write(); err != nil {
			t.Fatal(err)
		}
		gen, _ := s.generation(ctx)
		deadline := time.Now().Add(30 * time.Second)
		for s.ann.draftedGen.Load() < gen {
			if time.Now().After(deadline) {
				t.Fatalf("no draft step for generation %d", gen)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	s.StreamStarted()
	for lo := 0; lo < 12; lo += 3 {
		commit(func() error { return s.WriteDocuments(ctx, docs[lo:lo+3]...) })
	}
	// Rewritten: the same document with other content (its old rows go),
	// and one deleted.
	again := synthetic(syntheticSize{docID: "a001-v2", path: docs[1].Document.Path,
		chunks: 4, entities: 30, relations: 20, pool: 200, seed: 999, dim: opts.Embedder.Dimension})
	again.Replaces = []string{docs[1].Document.ID}
	commit(func() error { return s.WriteDocuments(ctx, again) })
	commit(func() error { return s.DeleteDocument(ctx, docs[2].Document.ID) })
	if err := s.WriteDocuments(ctx, docs[12:14]...); err != nil { // not drafted before the end
		t.Fatal(err)
	}
	s.StreamEnded()
	if got := reopen(); got != 3 {
		t.Fatalf("%d index files installed from drafts, want 3", got)
	}
	filesCurrent(t, s, path)
	check := func(when string) {
		t.Helper()
		sameAsScanning(t, s, when, []*store.DocumentWrite{docs[0], again, docs[13]})
		hits, err := s.SearchChunks(ctx, docs[2].Chunks[1].Embedding, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.DocID == docs[2].Document.ID || h.DocID == docs[1].Document.ID {
				t.Errorf("%s: chunk %s of a deleted or replaced document found", when, h.ID)
			}
		}
	}
	check("after the drafted stream")
	if s.ann.scanned.Load() != 0 || s.ann.overlaid.Load() != 0 {
		t.Errorf("%d scans, %d vectors from the log: the files are not current", s.ann.scanned.Load(), s.ann.overlaid.Load())
	}

	// A second stream, into a store whose files are current: no drafts.
	s.StreamStarted()
	commit(func() error { return s.WriteDocuments(ctx, docs[14:]...) })
	s.StreamEnded()
	if got := reopen(); got != 0 {
		t.Errorf("a stream into current files installed %d drafts", got)
	}
	defer s.Close()
	check("after a second stream")
}
