package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

// TestMergesMakeNoVectorsTheStoreDrops: a store that keeps no merged
// vectors merges without making them (the writer embedded every changed
// entity and relation only to drop the vector), and still reads back and
// searches the vectors the merge would have made.
func TestMergesMakeNoVectorsTheStoreDrops(t *testing.T) {
	ctx := context.Background()
	emb := storetest.NewCountingEmbedder()
	opts := storetest.Options()
	opts.Merger = graphbuild.NewMerger(emb)
	s := openTemp(t, opts)
	if s.reembed == nil {
		t.Fatal("fixture: the store keeps the vectors of a reproducible embedder")
	}
	w := rhineBasel()
	if err := s.WriteDocument(ctx, w); err != nil {
		t.Fatal(err)
	}
	if emb.Texts != 0 {
		t.Errorf("writing a document embedded %d merged texts", emb.Texts)
	}

	eager := graphbuild.NewMerger(storetest.Embedder())
	ents, err := s.Entities(ctx, []string{graphbuild.EntityID("Rhine"), graphbuild.EntityID("Basel")})
	if err != nil || len(ents) != 2 {
		t.Fatalf("Entities: %d, %v", len(ents), err)
	}
	for _, e := range ents {
		want, err := eager.EntityVectors(ctx, []store.Entity{e})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(e.Embedding, want[0]) {
			t.Errorf("entity %s reads back another vector than the merge makes", e.Name)
		}
		hits, err := s.SearchEntities(ctx, want[0], 1)
		if err != nil || len(hits) != 1 || hits[0].ID != e.ID {
			t.Errorf("SearchEntities by %s's vector = %+v, %v", e.Name, hits, err)
		}
	}
}

// TestIndexReadsStoredVectorsWhereThereAreAny: the index files read a
// reproducible embedder's entity and relation vectors made again, but a
// vector a store does hold for such a row (one written before the store
// kept none) is the one indexed, whether every row is read or some.
func TestIndexReadsStoredVectorsWhereThereAreAny(t *testing.T) {
	ctx := context.Background()
	opts := storetest.Options()
	opts.Merger = graphbuild.NewMerger(storetest.Embedder())
	s := openTemp(t, opts)
	w := rhineBasel()
	if err := s.WriteDocument(ctx, w); err != nil {
		t.Fatal(err)
	}
	read := func(kind int, keys []int64) map[int64][]float32 {
		t.Helper()
		got := map[int64][]float32{}
		err := s.inSnapshot(ctx, func(tx *sql.Tx) error {
			var rerr error
			for id, v := range s.kindVectors(ctx, tx, kind, keys, &rerr) {
				got[id] = v
			}
			return rerr
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	seqs := func(table string) []int64 {
		t.Helper()
		var out []int64
		if err := collectInts(ctx, s.rdb, &out, `SELECT seq FROM `+table+` ORDER BY seq`); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		kind  int
		table string
	}{{kindEntity, "entities"}, {kindRelation, "relations"}} {
		all := seqs(c.table)
		made := read(c.kind, nil)
		if len(made) != len(all) || len(all) == 0 {
			t.Fatalf("%s: read %d vectors of %d rows", c.table, len(made), len(all))
		}
		// Store a vector for the first row only, unlike the one made.
		held := storetest.Embedder().Vector("a vector the store holds")
		if _, err := s.wdb.ExecContext(ctx, `INSERT INTO vectors(kind, id, vec) VALUES(?, ?, ?)`, c.kind, all[0], encodeVec(held)); err != nil {
			t.Fatal(err)
		}
		for _, keys := range [][]int64{nil, all} {
			got := read(c.kind, keys)
			if !slices.Equal(got[all[0]], held) {
				t.Errorf("%s (keys %v): row %d reads a vector other than the stored one", c.table, keys, all[0])
			}
			for _, id := range all[1:] {
				if !slices.Equal(got[id], made[id]) {
					t.Errorf("%s (keys %v): row %d reads a vector other than the one made", c.table, keys, id)
				}
			}
		}
	}
}

// rhineBasel is a document of one chunk naming two entities and the
// relation between them.
func rhineBasel() *store.DocumentWrite {
	w := ftsDoc("doc-a", "The Rhine flows past Basel to the North Sea.", "Rhine")
	w.Entities = append(w.Entities, store.EntityMention{EntityID: graphbuild.EntityID("Basel"), ChunkID: w.Chunks[0].ID, Name: "Basel", Type: "city", Description: "a city on the Rhine"})
	w.Relations = []store.RelationMention{{RelationID: graphbuild.RelationID(graphbuild.EntityID("Rhine"), graphbuild.EntityID("Basel"), ""),
		SourceID: graphbuild.EntityID("Rhine"), TargetID: graphbuild.EntityID("Basel"), ChunkID: w.Chunks[0].ID, Keywords: "flows past", Description: "the Rhine flows past Basel"}}
	return w
}
