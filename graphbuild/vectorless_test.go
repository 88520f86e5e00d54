package graphbuild_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

func TestMergerWithoutVectors(t *testing.T) {
	ctx := context.Background()
	emb := storetest.NewCountingEmbedder()
	eager := graphbuild.NewMerger(emb)
	lazy := eager.WithoutVectors()

	ents := []store.EntityMention{{EntityID: "e1", ChunkID: "a:0", Name: "Rhine", Type: "river", Description: "flows to the North Sea"}}
	rels := []store.RelationMention{{RelationID: "r1", SourceID: "e1", TargetID: "e2", ChunkID: "a:0", Keywords: "flows", Description: "the Rhine flows past Basel"}}
	merged, err := eager.MergeEntityGroups(ctx, []store.EntityGroup{graphbuild.EntityGroupOf(ents)})
	if err != nil {
		t.Fatal(err)
	}
	mergedRel, err := eager.MergeRelationGroups(ctx, []store.RelationGroup{graphbuild.RelationGroupOf(rels)})
	if err != nil {
		t.Fatal(err)
	}
	same := merged[0]
	changed := merged[0]
	changed.Description = "an older description"
	sameRel, changedRel := mergedRel[0], mergedRel[0]
	changedRel.Keywords = "older"

	for _, c := range []struct {
		name       string
		stored     *store.Entity
		storedRel  *store.Relation
		wantVector bool
	}{
		{"new", nil, nil, true},
		{"text as stored", &same, &sameRel, false},
		{"text changed", &changed, &changedRel, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			eg := graphbuild.EntityGroupOf(ents)
			eg.Stored = c.stored
			rg := graphbuild.RelationGroupOf(rels)
			rg.Stored = c.storedRel
			want, _ := eager.MergeEntityGroups(ctx, []store.EntityGroup{eg})
			wantRel, _ := eager.MergeRelationGroups(ctx, []store.RelationGroup{rg})
			before := emb.Texts
			got, err := lazy.MergeEntityGroups(ctx, []store.EntityGroup{eg})
			if err != nil {
				t.Fatal(err)
			}
			gotRel, err := lazy.MergeRelationGroups(ctx, []store.RelationGroup{rg})
			if err != nil {
				t.Fatal(err)
			}
			if emb.Texts != before {
				t.Errorf("merging without vectors embedded %d texts", emb.Texts-before)
			}
			if (want[0].Embedding != nil) != c.wantVector || (wantRel[0].Embedding != nil) != c.wantVector {
				t.Fatalf("fixture: eager merge vectors %v, %v; want new vectors %v", want[0].Embedding != nil, wantRel[0].Embedding != nil, c.wantVector)
			}
			if (got[0].Embedding != nil) != c.wantVector || len(got[0].Embedding) != 0 {
				t.Errorf("entity Embedding %v (nil %v), want an empty mark: %v", got[0].Embedding, got[0].Embedding == nil, c.wantVector)
			}
			if (gotRel[0].Embedding != nil) != c.wantVector || len(gotRel[0].Embedding) != 0 {
				t.Errorf("relation Embedding %v (nil %v), want an empty mark: %v", gotRel[0].Embedding, gotRel[0].Embedding == nil, c.wantVector)
			}
			got[0].Embedding, want[0].Embedding = nil, nil
			gotRel[0].Embedding, wantRel[0].Embedding = nil, nil
			if !reflect.DeepEqual(got[0], want[0]) || !reflect.DeepEqual(gotRel[0], wantRel[0]) {
				t.Errorf("merged without vectors %+v / %+v, with %+v / %+v", got[0], gotRel[0], want[0], wantRel[0])
			}
		})
	}

	// The vectors a store makes again later are still real.
	r := lazy.(store.Reembedder)
	vs, err := r.EntityVectors(ctx, []store.Entity{same})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(vs[0], same.Embedding) {
		t.Errorf("EntityVectors of the vectorless merger differ from the merge's vector")
	}
}
