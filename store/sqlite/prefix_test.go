package sqlite

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

// TestPrefixMergeEqualsFullMerge: entities a hundred documents mention
// (re-merged from their counts and first mentions, store.PrefixMerger)
// come out exactly as the merge of all their mentions, vectors included,
// whatever the order and grouping of the writes, and after deletes.
func TestPrefixMergeEqualsFullMerge(t *testing.T) {
	ctx := context.Background()
	opts := storetest.Options()
	var docs []*store.DocumentWrite
	for i := 0; i < 90; i++ {
		w := synthetic(syntheticSize{docID: fmt.Sprintf("d%03d", i), path: fmt.Sprintf("/d%03d.txt", i),
			chunks: 3, entities: 24, relations: 18, pool: 14, seed: uint64(i), dim: opts.Embedder.Dimension})
		// Short fragments, some repeated across documents, so that an
		// entity's description takes many mentions to fill.
		for j := range w.Entities {
			w.Entities[j].Description = fmt.Sprintf("seen in %d", (i*7+j)%150)
		}
		for j := range w.Relations {
			w.Relations[j].Description = fmt.Sprintf("met in %d", (i*5+j)%120)
		}
		docs = append(docs, w)
	}
	one, grouped := openTemp(t, opts), openTemp(t, opts)
	defer one.Close()
	defer grouped.Close()
	for _, w := range docs {
		if err := one.WriteDocument(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	for i := len(docs); i > 0; i -= 17 {
		var group []*store.DocumentWrite
		for j := i - 1; j >= max(0, i-17); j-- {
			group = append(group, docs[j])
		}
		if err := grouped.WriteDocuments(ctx, group...); err != nil {
			t.Fatal(err)
		}
	}
	compareWithFullMerge(t, opts.Merger, docs, one, grouped)
	var hubs int
	one.rdb.QueryRow(`SELECT count(*) FROM entity_counts WHERE mentions > 100`).Scan(&hubs)
	if hubs < 5 {
		t.Fatalf("%d entities with over 100 mentions: the test exercises no big prefixes", hubs)
	}
	// Delete a third of the documents, in two orders.
	var kept []*store.DocumentWrite
	for i, w := range docs {
		if i%3 == 1 {
			if err := one.DeleteDocument(ctx, w.Document.ID); err != nil {
				t.Fatal(err)
			}
			continue
		}
		kept = append(kept, w)
	}
	for i := len(docs) - 1; i >= 0; i-- {
		if i%3 == 1 {
			if err := grouped.DeleteDocument(ctx, docs[i].Document.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	compareWithFullMerge(t, opts.Merger, kept, one, grouped)
}

// compareWithFullMerge merges all mentions of docs at once and checks that
// every store holds exactly those entities and relations, with their vectors.
func compareWithFullMerge(t *testing.T, m store.Merger, docs []*store.DocumentWrite, stores ...*Store) {
	t.Helper()
	ctx := context.Background()
	ents := map[string][]store.EntityMention{}
	rels := map[string][]store.RelationMention{}
	for _, w := range docs {
		for _, x := range w.Entities {
			ents[x.EntityID] = append(ents[x.EntityID], x)
		}
		for _, x := range w.Relations {
			rels[x.RelationID] = append(rels[x.RelationID], x)
		}
	}
	var eg [][]store.EntityMention
	for _, id := range slices.Sorted(maps.Keys(ents)) {
		eg = append(eg, ents[id])
	}
	var rg [][]store.RelationMention
	for _, id := range slices.Sorted(maps.Keys(rels)) {
		rg = append(rg, rels[id])
	}
	wantE, err := m.MergeEntities(ctx, eg)
	if err != nil {
		t.Fatal(err)
	}
	wantR, err := m.MergeRelations(ctx, rg)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		for _, want := range wantE {
			got, err := s.Entities(ctx, []string{want.ID})
			if err != nil || len(got) != 1 {
				t.Fatalf("store %d: entity %s: %v, %v", i, want.ID, got, err)
			}
			if g := got[0]; g.Name != want.Name || g.Type != want.Type || g.Description != want.Description ||
				g.Mentions != want.Mentions || !slices.Equal(g.Embedding, want.Embedding) {
				t.Fatalf("store %d: entity %s is\n%q %q %d %q (vector equal: %v)\nwant\n%q %q %d %q", i, want.ID,
					g.Name, g.Type, g.Mentions, g.Description, slices.Equal(g.Embedding, want.Embedding), want.Name, want.Type, want.Mentions, want.Description)
			}
		}
		for _, want := range wantR {
			got, err := s.Relations(ctx, []string{want.ID})
			if err != nil || len(got) != 1 {
				t.Fatalf("store %d: relation %s: %v, %v", i, want.ID, got, err)
			}
			if g := got[0]; g.Keywords != want.Keywords || g.Description != want.Description || g.Weight != want.Weight ||
				g.SourceID != want.SourceID || g.TargetID != want.TargetID || !slices.Equal(g.Embedding, want.Embedding) {
				t.Fatalf("store %d: relation %s is %+v, want %+v", i, want.ID, g, want)
			}
		}
		st, err := s.Stats(ctx)
		if err != nil || st.Entities != len(wantE) || st.Relations != len(wantR) {
			t.Fatalf("store %d holds %+v, want %d entities and %d relations (%v)", i, st, len(wantE), len(wantR), err)
		}
		checkCounts(t, s)
	}
}
