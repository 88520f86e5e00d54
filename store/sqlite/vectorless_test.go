package sqlite

import (
	"context"
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
	w := ftsDoc("doc-a", "The Rhine flows past Basel to the North Sea.", "Rhine")
	w.Entities = append(w.Entities, store.EntityMention{EntityID: graphbuild.EntityID("Basel"), ChunkID: w.Chunks[0].ID, Name: "Basel", Type: "city", Description: "a city on the Rhine"})
	w.Relations = []store.RelationMention{{RelationID: graphbuild.RelationID(graphbuild.EntityID("Rhine"), graphbuild.EntityID("Basel"), ""),
		SourceID: graphbuild.EntityID("Rhine"), TargetID: graphbuild.EntityID("Basel"), ChunkID: w.Chunks[0].ID, Keywords: "flows past", Description: "the Rhine flows past Basel"}}
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
