package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/pgraph"
	"github.com/docgraph/docgraph/store/sqlite"
)

// ingestDirs ingests the folders into the store at db with the offline
// pipeline and closes it, which leaves the passage graph file current.
func ingestDirs(t *testing.T, db string, dirs ...string) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	opts, emb := offlineOptions()
	st, err := sqlite.Open(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Offline(pipeline.Settings{}, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := p.Ingest(ctx, dirs, pipeline.Options{}); err != nil || sum.Failed != 0 {
		t.Fatalf("ingest: %+v %v", sum, err)
	}
	return st
}

func corpusDB(t *testing.T) string {
	t.Helper()
	if !pgraph.Supported {
		t.Skip("no passage graph file on this system")
	}
	db := filepath.Join(t.TempDir(), "graph.db")
	corpus, _ := filepath.Abs("../../testdata/corpus")
	st := ingestDirs(t, db, corpus)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if n := st.PassageFileBuilds(); n != 1 {
		t.Errorf("ingest built the passage graph file %d times, want 1", n)
	}
	if _, err := os.Stat(db + ".pgraph"); err != nil {
		t.Fatalf("no passage graph file after an ingest: %v", err)
	}
	return db
}

func openRead(t *testing.T, db string, file bool) *sqlite.Store {
	t.Helper()
	opts, _ := offlineOptions()
	opts.ReadOnly = true
	st, err := sqlite.Open(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !file {
		st.WithoutPassageFile()
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// graphIDs lists the passage graph's entities and chunks as st holds it
// now, with ids it does not know.
func graphIDs(t *testing.T, st *sqlite.Store) (entities, chunks []string) {
	t.Helper()
	seen := map[string]bool{}
	err := st.ScanMentions(context.Background(), func(m store.Mention) error {
		if !seen[m.EntityID] {
			seen[m.EntityID] = true
			entities = append(entities, m.EntityID)
		}
		if !seen[m.ChunkID] {
			seen[m.ChunkID] = true
			chunks = append(chunks, m.ChunkID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(entities) < 50 || len(chunks) < 5 {
		t.Fatalf("a small graph: %d entities, %d chunks", len(entities), len(chunks))
	}
	sort.Strings(entities)
	sort.Strings(chunks)
	return append(entities, "e0000000000000000", "not an id"), append(chunks, "no such chunk")
}

// answersOf is everything st's PassageGraph says about the ids, as text.
func answersOf(t *testing.T, st *sqlite.Store, entities, chunks []string, maxChunks int) string {
	t.Helper()
	ctx := context.Background()
	es, err := st.EntityNeighbors(ctx, entities, maxChunks)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := st.ChunkNeighbors(ctx, chunks, maxChunks)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%+v\n%+v", es, cs)
}

// sameAnswers holds the file reader's answers to the statements', for
// every node of the graph the statements see, at several hub limits, and
// reports whether the file answered them.
func sameAnswers(t *testing.T, file, stmts *sqlite.Store, when string) (fromFile bool) {
	t.Helper()
	n := compareAnswers(t, file, stmts, when)
	if n != 0 && n != 6 {
		t.Fatalf("%s: the file answered %d calls of 6", when, n)
	}
	return n == 6
}

// compareAnswers is sameAnswers for a time the file may become current
// during the calls: it returns how many of the six the file answered.
func compareAnswers(t *testing.T, file, stmts *sqlite.Store, when string) int {
	t.Helper()
	entities, chunks := graphIDs(t, stmts)
	before, declinedBefore := file.PassageFileUse()
	for _, maxChunks := range []int{0, 2, 40} {
		if a, b := answersOf(t, file, entities, chunks, maxChunks), answersOf(t, stmts, entities, chunks, maxChunks); a != b {
			t.Errorf("%s, limit %d: the file reader answers\n%.600s\nthe statements\n%.600s", when, maxChunks, a, b)
		}
	}
	answered, declined := file.PassageFileUse()
	if answered-before+declined-declinedBefore != 6 {
		t.Fatalf("%s: the file answered %d calls and declined %d of 6", when, answered-before, declined-declinedBefore)
	}
	return int(answered - before)
}

// TestPassageFileAnswersAsStatements: on the test corpus the file answers
// every node exactly as the statements do (chunks in id order, documents
// and titles, hubs left out and counted), also while a claimed document
// makes the statements count hubs only up to the limit.
func TestPassageFileAnswersAsStatements(t *testing.T) {
	db := corpusDB(t)
	file, stmts := openRead(t, db, true), openRead(t, db, false)
	if !sameAnswers(t, file, stmts, "after the ingest") {
		t.Fatal("the current file did not answer")
	}
	ctx := context.Background()
	if !file.PassageFileCurrent(ctx) {
		t.Error("PassageFileCurrent: false for the file that answered")
	}
	if stmts.PassageFileCurrent(ctx) {
		t.Error("PassageFileCurrent: true for a reader without the file")
	}
	opts, _ := offlineOptions()
	w, err := sqlite.Open(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Claim(ctx, store.Document{ID: "claimed", Path: "/claimed.md"}, store.Lease{Owner: "test", TTL: 3600e9}); err != nil {
		t.Fatal(err)
	}
	if !sameAnswers(t, file, stmts, "with a claimed document") {
		t.Error("a claim moved no graph version, yet the file did not answer")
	}
}

// TestPassageFileFollowsWrites: after a write or delete the file is not
// used until a writer has built it for the new version, and the answers
// are the store's throughout; a file of an older version put back is not
// used either.
func TestPassageFileFollowsWrites(t *testing.T) {
	db := corpusDB(t)
	old, err := os.ReadFile(db + ".pgraph")
	if err != nil {
		t.Fatal(err)
	}
	file, stmts := openRead(t, db, true), openRead(t, db, false)
	if !sameAnswers(t, file, stmts, "after the ingest") {
		t.Fatal("the current file did not answer")
	}

	// A write in progress: the file is stale until the writer is done.
	notes := filepath.Join(t.TempDir(), "notes")
	writeNotes(t, notes, 0, 3)
	w := ingestDirs(t, db, notes)
	compareAnswers(t, file, stmts, "with the writer open") // the file may become current meanwhile
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !sameAnswers(t, file, stmts, "after the write") {
		t.Error("the writer left no current file")
	}

	// An older file put back (a writer that died before rebuilding). The
	// reader holding the current one may go on with it; a new reader
	// finds only the old one.
	putFile(t, db+".pgraph", old)
	compareAnswers(t, file, stmts, "with an older file put back")
	fresh := openRead(t, db, true)
	if sameAnswers(t, fresh, stmts, "with an older file") {
		t.Error("a file of an older version answered")
	}
	if fresh.PassageFileCurrent(context.Background()) {
		t.Error("PassageFileCurrent: true for a file of an older version")
	}

	// A delete: the next writer rebuilds the stale file and then the
	// file answers for the store without the document.
	ctx := context.Background()
	opts, _ := offlineOptions()
	w, err = sqlite.Open(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := w.Documents(ctx)
	if err != nil || len(docs) < 4 {
		t.Fatalf("documents: %d, %v", len(docs), err)
	}
	if err := w.DeleteDocument(ctx, docs[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !sameAnswers(t, file, stmts, "after a delete") {
		t.Error("the writer left no current file after the delete")
	}
}

// putFile replaces path with data as a writer does (a new file renamed
// over it), so readers holding the old one look again.
func putFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".put"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestPassageFileDamaged: a truncated, damaged or foreign file is not
// used (no panic, the statements' answers), and the next writer that
// opens the store builds a good one.
func TestPassageFileDamaged(t *testing.T) {
	db := corpusDB(t)
	path := db + ".pgraph"
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := openRead(t, db, false)
	flip := func(at int) []byte {
		d := append([]byte(nil), good...)
		d[at] ^= 0xff
		return d
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)/2]},
		{"one byte short", good[:len(good)-1]},
		{"header byte", flip(20)},
		{"body byte", flip(len(good) - 100)},
		{"body byte early", flip(len(good) / 3)},
		{"another format", append([]byte("not a passage graph"), good[19:]...)},
	} {
		putFile(t, path, c.data)
		file := openRead(t, db, true)
		if sameAnswers(t, file, stmts, c.name) {
			t.Errorf("%s: the file answered", c.name)
		}
		// Asked again, the reader does not trust the same file anew.
		if sameAnswers(t, file, stmts, c.name+", again") {
			t.Errorf("%s, again: the file answered", c.name)
		}
		// A writer opening the store builds it again.
		opts, _ := offlineOptions()
		w, err := sqlite.Open(context.Background(), db, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.PassageFileBuilds() != 1 {
			t.Errorf("%s: a writer built the file %d times, want 1", c.name, w.PassageFileBuilds())
		}
		if !sameAnswers(t, file, stmts, c.name+", rebuilt") {
			t.Errorf("%s: the rebuilt file did not answer", c.name)
		}
	}
}
