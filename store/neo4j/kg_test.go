package neo4j

import (
	"reflect"
	"sort"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// TestKGScanner writes a typed-triple document as the KG importer does and
// reads the graph back through the scans, paging included.
func TestKGScanner(t *testing.T) {
	ts := newTestServer(t)
	st := ts.openFresh(t)
	defer st.Close()
	ctx := testCtx(t)
	e := graphbuild.EntityID
	id := "kgdoc"
	c0, c1 := id+":0000", id+":0001"
	w := &store.DocumentWrite{
		Document: store.Document{ID: id, Path: "kb.txt", Format: "kg"},
		Chunks: []store.Chunk{
			{ID: c0, DocID: id, Index: 0, Text: "Kismet|directed_by|William Dieterle\n", End: 36},
			{ID: c1, DocID: id, Index: 1, Text: "Kismet|directed_by|William Dieterle\n", Start: 36, End: 72},
		},
	}
	for _, c := range []string{c0, c1} {
		w.Entities = append(w.Entities,
			store.EntityMention{EntityID: e("Kismet"), ChunkID: c, Name: "Kismet"},
			store.EntityMention{EntityID: e("William Dieterle"), ChunkID: c, Name: "William Dieterle"})
	}
	rel := graphbuild.RelationID(e("Kismet"), e("William Dieterle"), "directed_by")
	for _, c := range []string{c0, c1} {
		w.Relations = append(w.Relations, store.RelationMention{RelationID: rel, SourceID: e("Kismet"), TargetID: e("William Dieterle"),
			Type: "directed_by", ChunkID: c, Weight: 1, Keywords: "director"})
	}
	if err := st.WriteDocument(ctx, w); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := st.ScanEntities(ctx, func(x store.Entity) error { names = append(names, x.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, []string{"Kismet", "William Dieterle"}) {
		t.Errorf("entities %v", names)
	}
	var rels []store.Relation
	if err := st.ScanRelations(ctx, func(r store.Relation) error { rels = append(rels, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(rels) != 1 || rels[0].ID != rel || rels[0].SourceID != e("Kismet") || rels[0].Type != "directed_by" || rels[0].Weight != 2 || rels[0].Keywords != "director" {
		t.Errorf("relations %+v", rels)
	}
	chunks, err := st.RelationChunks(ctx, []string{rel, "missing"})
	if err != nil || !reflect.DeepEqual(chunks, map[string][]string{rel: {c0, c1}}) {
		t.Errorf("RelationChunks = %v, %v", chunks, err)
	}
	if err := st.DeleteDocument(ctx, id); err != nil {
		t.Fatal(err)
	}
	n := 0
	st.ScanRelations(ctx, func(store.Relation) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d relations after delete", n)
	}
}
