package sqlite

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

// TestNeighborPlansUseIndexes checks that the passage graph reads look
// everything up by index: the only scans are of the id list and of the
// statements' own small intermediate tables, never of entity_mentions or
// documents (aliases m and d), whose size grows with the corpus.
func TestNeighborPlansUseIndexes(t *testing.T) {
	s := openTemp(t, storetest.Options())
	defer s.Close()
	scan := regexp.MustCompile(`^SCAN (\w+)`)
	for name, stmt := range map[string]string{"entities": stmtEntityNeighbors, "chunks": stmtChunkNeighbors} {
		rows, err := s.rdb.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+stmt, `[1]`, 41, 40)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		searches := 0
		for _, step := range plan {
			if m := scan.FindStringSubmatch(step); m != nil {
				switch m[1] {
				case "m", "d", "e", "k", "ch", "hm", "hc", "hd", "entity_mentions", "documents", "chunks", "entities", "entity_counts":
					t.Errorf("%s: plan scans a table: %q", name, step)
				}
			}
			if strings.HasPrefix(step, "SEARCH m USING COVERING INDEX entity_mentions_by_") || strings.HasPrefix(step, "SEARCH d USING INDEX sqlite_autoindex_documents_1") ||
				strings.HasPrefix(step, "SEARCH hm USING COVERING INDEX entity_mentions_by_") {
				searches++
			}
			if strings.HasPrefix(step, "SEARCH m USING INDEX") || strings.HasPrefix(step, "SEARCH hm USING INDEX") {
				t.Errorf("%s: mentions read through an index that does not cover them: %q", name, step)
			}
		}
		if searches < 3 {
			t.Errorf("%s: %d index searches of entity_mentions and documents; the plan is not what it was:\n%s", name, searches, strings.Join(plan, "\n"))
		}
	}
}

// TestMentionIndexesUpgrade: a version 3 store written before the covering
// mention indexes still reads, and its next writable open swaps its old
// indexes for the covering ones.
func TestMentionIndexesUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP INDEX entity_mentions_by_entity`, `DROP INDEX entity_mentions_by_chunk`,
		`CREATE INDEX entity_mentions_entity ON entity_mentions(entity, ord)`,
		`CREATE INDEX entity_mentions_chunk ON entity_mentions(chunk)`,
	} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	indexes := func(s *Store) string {
		var names []string
		rows, err := s.rdb.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entity_mentions' ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			rows.Scan(&n)
			names = append(names, n)
		}
		return strings.Join(names, ",")
	}
	r, err := Open(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("a store with the old indexes does not open for reading: %v", err)
	}
	if _, err := r.ChunkNeighbors(ctx, []string{"x"}, 40); err != nil {
		t.Errorf("reading the passage graph through the old indexes: %v", err)
	}
	if got := indexes(r); got != "entity_mentions_chunk,entity_mentions_entity" {
		t.Errorf("a reader changed the indexes: %s", got)
	}
	r.Close()
	w, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := indexes(w); got != "entity_mentions_by_chunk,entity_mentions_by_entity" {
		t.Errorf("after a writable open the indexes are %s", got)
	}
}

// TestGraphVersionWithoutCounting: the version is read from meta, kept by
// triggers, and a store written before them still has a version that
// moves with a status change until its next writable open adds them.
func TestGraphVersionWithoutCounting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	doc := store.Document{ID: "d1", Path: "/a.md", Title: "A"}
	if err := s.WriteDocument(ctx, &store.DocumentWrite{Document: doc}); err != nil {
		t.Fatal(err)
	}
	v1, _ := s.GraphVersion(ctx)
	if !strings.Contains(v1, "/m") {
		t.Fatalf("version %q is not read from done_moves", v1)
	}
	if err := s.SetStatus(ctx, doc, store.StatusFailed, "x"); err != nil {
		t.Fatal(err)
	}
	if v2, _ := s.GraphVersion(ctx); v2 == v1 {
		t.Errorf("a done document that failed left the version at %q", v2)
	}
	// As an older docgraph left it: no triggers, no done_moves.
	for _, q := range []string{`DROP TRIGGER documents_done_in`, `DROP TRIGGER documents_done_moved`,
		`DROP TRIGGER documents_done_out`, `DELETE FROM meta WHERE key = 'done_moves'`} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	r, err := Open(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.GraphVersion(ctx); err != nil || strings.Contains(v, "/m") {
		t.Errorf("an older store's version: %q, %v", v, err)
	}
	r.Close()
	w, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	v3, _ := w.GraphVersion(ctx)
	if err := w.SetStatus(ctx, doc, store.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	if v4, _ := w.GraphVersion(ctx); v4 == v3 || !strings.Contains(v4, "/m") {
		t.Errorf("after the upgrade, a status change moved the version %q -> %q", v3, v4)
	}
}
