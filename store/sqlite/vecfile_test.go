package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
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

// TestStreamFileMatchesSaveFile checks that a sidecar streamed from the rows
// (SaveSidecars) is, byte for byte, the file saveFile writes from the index
// loaded from the same rows, including rows the index leaves out.
func TestStreamFileMatchesSaveFile(t *testing.T) {
	ctx := context.Background()
	dim := storetest.Dimension
	cases := []struct {
		name  string
		docs  []string
		setup []string
		empty bool // a table ends up with no vectors: nothing to search
	}{
		{name: "plain", docs: []string{"d1", "d2", "d3"}},
		{name: "empty store"},
		{name: "rows left out", docs: []string{"d1", "d2"}, setup: []string{
			`UPDATE chunks SET embedding = NULL WHERE rowid = (SELECT min(rowid) FROM chunks)`,
			`UPDATE chunks SET embedding = zeroblob(` + fmt.Sprint(4*dim) + `) WHERE rowid = (SELECT max(rowid) FROM chunks)`,
			`UPDATE entities SET embedding = X'' WHERE rowid IN (SELECT rowid FROM entities ORDER BY rowid LIMIT 3)`,
			`UPDATE relations SET embedding = X'0000803f' WHERE rowid = (SELECT max(rowid) FROM relations)`,
		}},
		{name: "first vector sets an odd size", docs: []string{"d1"}, setup: []string{
			`UPDATE relations SET embedding = X'0000803f0000' WHERE rowid = (SELECT min(rowid) FROM relations)`,
			`UPDATE entities SET embedding = X'0000803f' WHERE rowid = (SELECT min(rowid) FROM entities)`,
		}, empty: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "g.db")
			s := sidecarStore(t, path, c.docs...)
			defer s.Close()
			for _, q := range c.setup {
				if _, err := s.wdb.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			gen, err := s.generation(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range s.vecIndexes() {
				os.Remove(x.file)
				if err := x.ensure(ctx, s.rdb, gen); err != nil { // loads the rows, saveFile writes
					t.Fatal(err)
				}
				want, err := os.ReadFile(x.file)
				if err != nil {
					t.Fatalf("%s: saveFile wrote nothing: %v", x.table, err)
				}
				x.mu.Lock()
				x.reset()
				x.mu.Unlock()
				os.Remove(x.file)
				if err := x.saveDropped(ctx, s.wdb, gen); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(x.file)
				if err != nil {
					t.Fatalf("%s: nothing streamed: %v", x.table, err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: streamed sidecar (%d bytes) differs from saveFile's (%d bytes)", x.table, len(got), len(want))
				}
				if x.loaded || x.vecs != nil {
					t.Errorf("%s: index held after saveDropped", x.table)
				}
			}
			if len(c.docs) == 0 || c.empty {
				return
			}
			// A fresh process maps the streamed files and answers as the rows do.
			s.Close()
			s = sidecarStore(t, path)
			if n := checkAgainstRows(t, s); mapsFiles() && n != 3 {
				t.Errorf("%d of 3 streamed sidecars mapped", n)
			}
		})
	}
}

// TestSaveSidecars checks the ingest path: files streamed at the store's
// generation, not rewritten while current, written from memory by an index
// already loaded, and never left behind by passes that disagree or a read
// that fails.
func TestSaveSidecars(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "g.db")
	s := sidecarStore(t, path, "d1", "d2")
	defer s.Close()
	if err := s.SaveSidecars(ctx); err != nil {
		t.Fatal(err)
	}
	first := readSidecars(t, path)
	gen, _ := s.generation(ctx)
	for _, x := range s.vecIndexes() {
		if x.loaded {
			t.Errorf("%s: SaveSidecars left the index loaded", x.table)
		}
		if !x.fileCurrent(gen) {
			t.Errorf("%s: streamed sidecar not current", x.table)
		}
	}
	// Current files are kept as they are (same inode: not rewritten).
	before, _ := os.Stat(path + ".vec-relations")
	if err := s.SaveSidecars(ctx); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path + ".vec-relations"); !os.SameFile(before, after) {
		t.Error("a current sidecar was rewritten")
	}

	// A write makes them stale; an index loaded at the new generation (a
	// search) writes its own matrix, equal to what streaming gives.
	writeSynthetic(t, s, "d3", 9)
	if _, err := s.SearchChunks(ctx, randomQueries(1)[0], 3); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + ".vec-chunks") // the search wrote it; make SaveSidecars write it again
	if err := s.SaveSidecars(ctx); err != nil {
		t.Fatal(err)
	}
	fromMemory := readSidecars(t, path)
	if sameSidecars(first, fromMemory) {
		t.Fatal("sidecars did not follow the write")
	}
	for _, x := range s.vecIndexes() {
		os.Remove(x.file)
	}
	if err := s.SaveSidecars(ctx); err != nil {
		t.Fatal(err)
	}
	if !sameSidecars(fromMemory, readSidecars(t, path)) {
		t.Error("streamed sidecars differ from the ones written from a loaded index")
	}

	// Passes that see rows in different orders leave no file, nor a temp one.
	x := s.relationVecs
	os.Remove(x.file)
	sizes := x.sizes
	x.sizes = sizes + ` ORDER BY rowid DESC`
	err := x.saveDropped(ctx, s.wdb, gen+1)
	x.sizes = sizes
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(x.file); !os.IsNotExist(err) {
		t.Errorf("passes that disagree left a sidecar: %v", err)
	}
	// A read that fails mid-way is an error and leaves nothing either.
	cctx, cancel := context.WithCancel(ctx)
	tx, err := s.wdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := x.streamFile(cctx, tx, gen+1); err == nil {
		t.Error("streamFile with a cancelled context reported no error")
	}
	tx.Rollback()
	if _, err := os.Stat(x.file); !os.IsNotExist(err) {
		t.Errorf("a failed read left a sidecar: %v", err)
	}
	if tmp, _ := filepath.Glob(x.file + ".tmp*"); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
