package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

func openTemp(t *testing.T, opts store.Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "nested", "dir", "graph.db"), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, storetest.Options()) })
}

func TestConformanceReopen(t *testing.T) {
	storetest.RunReopen(t, func(t *testing.T, dir string, opts store.Options) (store.Store, error) {
		s, err := Open(context.Background(), filepath.Join(dir, "graph.db"), opts)
		if err != nil {
			return nil, err
		}
		return s, nil
	})
}

func TestOpenByURL(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ url, file string }{
		{filepath.Join(dir, "bare", "g.db"), filepath.Join(dir, "bare", "g.db")},
		{"sqlite://" + filepath.Join(dir, "abs", "g.db"), filepath.Join(dir, "abs", "g.db")},
		{"file://" + filepath.Join(dir, "file", "g.db"), filepath.Join(dir, "file", "g.db")},
		{filepath.Join(dir, "odd?name#1%", "g.db"), filepath.Join(dir, "odd?name#1%", "g.db")},
	} {
		s, err := store.Open(context.Background(), c.url, storetest.Options())
		if err != nil {
			t.Errorf("store.Open(%s): %v", c.url, err)
			continue
		}
		if err := s.SetStatus(context.Background(), store.Document{ID: "d", Path: "p"}, store.StatusPending, ""); err != nil {
			t.Errorf("%s: SetStatus: %v", c.url, err)
		}
		s.Close()
		if _, err := os.Stat(c.file); err != nil {
			t.Errorf("store.Open(%s) did not create %s: %v", c.url, c.file, err)
		}
	}
}

func TestOpenWithoutEmbedderAdoptsStored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(context.Background(), path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatalf("open without an embedder: %v", err)
	}
	defer s.Close()
	if got, want := s.Embedder(), storetest.Options().Embedder; got != want {
		t.Errorf("Embedder() = %+v, want the stored %+v", got, want)
	}
}

func TestMismatchMessageSaysWhatToDo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(context.Background(), path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	opts := storetest.Options()
	opts.Embedder = store.EmbedderInfo{Name: "ollama:nomic-embed-text", Dimension: 768}
	_, err = Open(context.Background(), path, opts)
	if !errors.Is(err, store.ErrEmbedderMismatch) {
		t.Fatalf("err = %v, want ErrEmbedderMismatch", err)
	}
	for _, want := range []string{storetest.Embedder().Name(), "ollama:nomic-embed-text", "--embedder", "--store", path} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestFTSQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{`" * - : AND`, `"and"`},
		{"Rhine's mouth", `"rhine" OR "s" OR "mouth"`},
		{`NEAR(a b) text:x`, `"near" OR "a" OR "b" OR "text" OR "x"`},
		{"Rhine rhine RHINE", `"rhine"`},
		{"Zürich 2024", `"zürich" OR "2024"`},
	} {
		if got := ftsQuery(c.in); got != c.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestCancelMidTransaction cancels the context from inside the merge, after
// the old rows are deleted and the new ones inserted: the write must fail and
// leave the previous version in place.
func TestCancelMidTransaction(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := storetest.Options()
	m := &cancellingMerger{Merger: opts.Merger, cancel: cancel}
	opts.Merger = m
	s := openTemp(t, opts)
	defer s.Close()

	w := synthetic(syntheticSize{docID: "doc-1", path: "a.md", chunks: 20, entities: 60, relations: 80, pool: 40, dim: storetest.Dimension})
	if err := s.WriteDocument(ctx, w); err != nil {
		t.Fatal(err)
	}
	before, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.armed.Store(true)
	w2 := synthetic(syntheticSize{docID: "doc-2", path: "a.md", chunks: 30, entities: 90, relations: 120, pool: 70, seed: 2, dim: storetest.Dimension})
	w2.Replaces = []string{"doc-1"}
	if err := s.WriteDocument(ctx, w2); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteDocument cancelled mid-merge: err = %v, want context.Canceled", err)
	}
	after, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if after.Chunks != before.Chunks || after.Entities != before.Entities || after.Relations != before.Relations || after.Mentions != before.Mentions {
		t.Errorf("after a cancelled write Stats = %+v, want %+v", after, before)
	}
	if d, err := s.Document(context.Background(), "doc-1"); err != nil || d.Chunks != 20 {
		t.Errorf("old version after cancelled replace = %+v, %v", d, err)
	}
	if _, err := s.Document(context.Background(), "doc-2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("new version after cancelled replace: err = %v, want ErrNotFound", err)
	}
}

// cancellingMerger is the real merger that, once armed, cancels the write's
// context after doing its work, as a client giving up mid-write would.
type cancellingMerger struct {
	store.Merger
	cancel context.CancelFunc
	armed  atomic.Bool
}

func (m *cancellingMerger) MergeEntities(ctx context.Context, g [][]store.EntityMention) ([]store.Entity, error) {
	out, err := m.Merger.MergeEntities(ctx, g)
	if m.armed.Load() {
		m.cancel()
	}
	return out, err
}

func TestIntegrityAfterChurn(t *testing.T) {
	s := openTemp(t, storetest.Options())
	defer s.Close()
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		w := synthetic(syntheticSize{docID: "doc-" + string(rune('a'+i%3)), path: "p" + string(rune('a'+i%3)), chunks: 15, entities: 50, relations: 70, pool: 60, seed: uint64(i), dim: storetest.Dimension})
		if err := s.WriteDocument(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteDocument(ctx, "doc-b"); err != nil {
		t.Fatal(err)
	}
	checkIntegrity(t, s.Path())
	checkCounts(t, s)
}

// checkCounts checks what the write path keeps instead of recomputing:
// every entity and relation left is backed by a mention, no relation
// dangles, every row has its vector and every vector its row, and the
// counts kept in entity and relation rows equal those of their mentions.
func checkCounts(t *testing.T, s *Store) {
	t.Helper()
	var orphans int
	err := s.rdb.QueryRow(`SELECT
		(SELECT count(*) FROM entities e WHERE NOT EXISTS (SELECT 1 FROM entity_mentions m WHERE m.entity = e.id)) +
		(SELECT count(*) FROM relations r WHERE NOT EXISTS (SELECT 1 FROM relation_mentions m WHERE m.relation = r.id)) +
		(SELECT count(*) FROM relations r WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = r.source)) +
		(SELECT count(*) FROM relations r WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = r.target)) +
		(SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.id = c.doc_id)) +
		(SELECT count(*) FROM entity_mentions m WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.seq = m.chunk)) +
		(SELECT count(*) FROM vectors v WHERE v.kind = 0 AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.seq = v.id)) +
		(SELECT count(*) FROM vectors v WHERE v.kind = 1 AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.seq = v.id)) +
		(SELECT count(*) FROM vectors v WHERE v.kind = 2 AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.seq = v.id)) +
		(SELECT count(*) FROM entities e WHERE ?1 AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.kind = 1 AND v.id = e.seq)) +
		(SELECT count(*) FROM relations r WHERE ?1 AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.kind = 2 AND v.id = r.seq)) +
		(SELECT count(*) FROM vectors v WHERE NOT ?1 AND v.kind > 0) +
		(SELECT count(*) FROM entities e JOIN entity_counts k ON k.seq = e.seq WHERE k.mentions <> (SELECT count(*) FROM entity_mentions m WHERE m.entity = e.id AND m.n = 0)) +
		(SELECT count(*) FROM entities e WHERE NOT EXISTS (SELECT 1 FROM entity_counts k WHERE k.seq = e.seq)) +
		(SELECT count(*) FROM entity_counts k WHERE NOT EXISTS (SELECT 1 FROM entities e WHERE e.seq = k.seq)) +
		(SELECT count(*) FROM relations r WHERE r.mentions <> (SELECT count(*) FROM relation_mentions m WHERE m.relation = r.id)) +
		(SELECT count(*) FROM relations r WHERE abs(r.weight - (SELECT sum(CASE WHEN m.weight > 0 THEN m.weight ELSE 1 END) FROM relation_mentions m WHERE m.relation = r.id)) > 1e-9)`, s.reembed == nil).Scan(&orphans)
	if err != nil || orphans != 0 {
		t.Errorf("rows out of step = %d, %v", orphans, err)
	}
	for _, fts := range []string{"chunks_fts", "entities_fts"} {
		if _, err := s.wdb.Exec(`INSERT INTO ` + fts + `(` + fts + `) VALUES('integrity-check')`); err != nil {
			t.Errorf("%s integrity-check: %v", fts, err)
		}
	}
	rows, err := s.rdb.Query(`SELECT e.id, k.names, k.types, m.name, m.type FROM entities e JOIN entity_counts k ON k.seq = e.seq JOIN entity_mentions m ON m.entity = e.id ORDER BY e.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type kept struct{ names, types string }
	have := map[int64]kept{}
	want := map[int64][2]map[string]int{}
	for rows.Next() {
		var id int64
		var names, types, name, typ string
		if err := rows.Scan(&id, &names, &types, &name, &typ); err != nil {
			t.Fatal(err)
		}
		have[id] = kept{names, types}
		w, ok := want[id]
		if !ok {
			w = [2]map[string]int{{}, {}}
			want[id] = w
		}
		w[0][name]++
		if typ != "" {
			w[1][typ]++
		}
	}
	for id, w := range want {
		if h := have[id]; h.names != encodeCounts(w[0]) || h.types != encodeCounts(w[1]) {
			t.Errorf("entity %s keeps counts %s %s, its mentions give %s %s", entityName(id), h.names, h.types, encodeCounts(w[0]), encodeCounts(w[1]))
			return
		}
	}
}

// checkIntegrity runs SQLite's own consistency checks, FTS indexes included.
func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	s, err := Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatalf("reopen for integrity check: %v", err)
	}
	defer s.Close()
	var res string
	if err := s.rdb.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check = %q, %v", res, err)
	}
	for _, fts := range []string{"chunks_fts", "entities_fts"} {
		if _, err := s.wdb.Exec(`INSERT INTO ` + fts + `(` + fts + `, rank) VALUES ('integrity-check', 1)`); err != nil {
			t.Errorf("%s integrity-check: %v", fts, err)
		}
	}
}

// TestBusyIsRetried holds the database's write lock from another
// connection (as another process would) past the busy timeout, then
// releases it: the store's write waits, retries and succeeds, and counts
// the retries.
func TestBusyIsRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out SQLite's busy timeout")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	st, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	other, err := sql.Open("sqlite", dsn(path, true, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil) // immediate: takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		// Held until the write has waited out busy_timeout(10000) and
		// retries, however late the write began.
		for deadline := time.Now().Add(time.Minute); st.WriteStats().Retries == 0 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		tx.Rollback()
		close(released)
	}()
	if err := st.SetStatus(ctx, store.Document{ID: "d1", Path: "a.md"}, store.StatusPending, ""); err != nil {
		t.Fatalf("write behind a lock held past the busy timeout: %v", err)
	}
	<-released
	if got := st.WriteStats(); got.Retries == 0 || got.Commits != 1 {
		t.Errorf("write stats %+v; want a retry and one commit", got)
	}
}

// TestLongLivedReadersMapLess: a store opened for a server maps at most
// 128 MB of the file on each read connection, writable or read-only open;
// a one-shot open maps up to 1 GB.
func TestLongLivedReadersMapLess(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	w, err := Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, tt := range []struct {
		name string
		opts store.Options
		want int64
	}{
		{"one-shot", store.Options{}, 1 << 30},
		{"one-shot read-only", store.Options{ReadOnly: true}, 1 << 30},
		{"server", store.Options{LongLived: true}, 128 << 20},
		{"server read-only", store.Options{ReadOnly: true, LongLived: true}, 128 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(ctx, path, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got int64
			if err := s.rdb.QueryRowContext(ctx, `PRAGMA mmap_size`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("reader mmap_size %d, want %d", got, tt.want)
			}
		})
	}
}

// TestFailingRowFailsTheWholeGroup: the writer's multi-row statements run
// OR FAIL (no statement journal), so a row the schema refuses half-way
// through a group stops the statement with the rows before it written;
// the transaction must still leave nothing of the group behind.
func TestFailingRowFailsTheWholeGroup(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, storetest.Options())
	a := ftsDoc("doc-a", "The Rhine flows past Basel.", "Rhine")
	if err := s.WriteDocument(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := ftsDoc("doc-b", "The Danube flows past Vienna.", "Danube")
	c := ftsDoc("doc-c", "The Elbe flows past Dresden.", "Elbe")
	c.Chunks[0].ID = a.Chunks[0].ID // taken by doc-a, which c does not replace
	c.Entities[0].ChunkID = c.Chunks[0].ID
	err := s.WriteDocuments(ctx, b, c)
	if err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Fatalf("a group naming another document's chunk: %v; want the schema's refusal", err)
	}
	docs, err := s.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].ID != "doc-a" {
		t.Errorf("documents after the failed group: %+v; want doc-a alone", docs)
	}
	for _, name := range []string{"Danube", "Elbe"} {
		if es, err := s.Entities(ctx, []string{graphbuild.EntityID(name)}); err != nil || len(es) != 0 {
			t.Errorf("entity %s after the failed group: %+v, %v", name, es, err)
		}
	}
	st, err := s.Stats(ctx)
	if err != nil || st.Chunks != 1 {
		t.Errorf("stats after the failed group: %+v, %v; want doc-a's one chunk", st, err)
	}
}
