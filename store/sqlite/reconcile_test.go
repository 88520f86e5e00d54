package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

// TestReconcileInPagesMatchesOneGo: merging touched entities and relations
// a page at a time leaves exactly the rows, vectors, full-text entries and
// search results of the one-page store.
func TestReconcileInPagesMatchesOneGo(t *testing.T) {
	ctx := context.Background()
	opts := storetest.Options()
	dim := opts.Embedder.Dimension
	whole, paged := openTemp(t, opts), openTemp(t, opts)
	defer whole.Close()
	defer paged.Close()
	setPages := func(page int) func() {
		oldPage := reconcilePage
		reconcilePage = page
		return func() { reconcilePage = oldPage }
	}
	docs := []*store.DocumentWrite{
		synthetic(syntheticSize{docID: "d1", path: "/d1.txt", chunks: 12, entities: 120, relations: 60, pool: 80, seed: 1, dim: dim}),
		synthetic(syntheticSize{docID: "d2", path: "/d2.txt", chunks: 10, entities: 100, relations: 50, pool: 80, seed: 2, dim: dim}),
	}
	query := docs[0].Chunks[0].Embedding
	steps := []func(s *Store) error{
		func(s *Store) error { return s.WriteDocument(ctx, docs[0]) },
		func(s *Store) error { _, err := s.SearchEntities(ctx, query, 5); return err }, // loads the index
		func(s *Store) error { return s.WriteDocument(ctx, docs[1]) },
		func(s *Store) error { return s.DeleteDocument(ctx, "d1") },
	}
	for i, step := range steps {
		if err := step(whole); err != nil {
			t.Fatalf("step %d, one page: %v", i, err)
		}
		restore := setPages(7)
		err := step(paged)
		restore()
		if err != nil {
			t.Fatalf("step %d, pages of 7: %v", i, err)
		}
		for k, q := range []string{
			`SELECT e.id, name, type, description, mentions, names, types FROM entities e JOIN entity_counts k ON k.seq = e.seq ORDER BY e.id`,
			`SELECT id, source, target, keywords, description, weight, mentions FROM relations ORDER BY id`,
			`SELECT kind, id, hex(vec) FROM vectors ORDER BY kind, id`,
			`SELECT e.id, f.name, f.description FROM entities_fts f JOIN entities e ON e.id = f.rowid ORDER BY e.id`,
			`SELECT id FROM dangling_relations ORDER BY id`,
		} {
			a, b := dump(t, whole.wdb, q), dump(t, paged.wdb, q)
			if a != b {
				t.Fatalf("step %d: %s differs:\none page: %.300s\npaged:    %.300s", i, q, a, b)
			}
			if i == 0 && k < 2 && strings.Count(a, "\n") <= 7 {
				t.Fatalf("step %d: %d rows do not fill two pages: %s", i, strings.Count(a, "\n"), q)
			}
		}
		ea, err1 := whole.SearchEntities(ctx, query, 10)
		eb, err2 := paged.SearchEntities(ctx, query, 10)
		ra, err3 := whole.SearchRelations(ctx, query, 10)
		rb, err4 := paged.SearchRelations(ctx, query, 10)
		if err := cmpErr(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ea) != fmt.Sprint(eb) || fmt.Sprint(ra) != fmt.Sprint(rb) {
			t.Fatalf("step %d: searches differ:\n%v\n%v\n%v\n%v", i, ea, eb, ra, rb)
		}
	}
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func dump(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(slices.Clip(out), "\n") + "\n"
}
