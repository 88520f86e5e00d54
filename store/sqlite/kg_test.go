package sqlite

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

// kgWrite is a typed-triple document as the KG importer writes one: two
// chunks of source lines, each entity mentioned once per chunk.
func kgWrite(id string) *store.DocumentWrite {
	e := graphbuild.EntityID
	kismet, dieterle, dietrich := e("Kismet"), e("William Dieterle"), e("Marlene Dietrich")
	c0, c1 := id+":0000", id+":0001"
	w := &store.DocumentWrite{
		Document: store.Document{ID: id, Path: "kb-" + id + ".txt", Format: "kg"},
		Chunks: []store.Chunk{
			{ID: c0, DocID: id, Index: 0, Text: "Kismet|directed_by|William Dieterle\n", End: 36},
			{ID: c1, DocID: id, Index: 1, Text: "Kismet|starred_actors|Marlene Dietrich\nKismet|directed_by|William Dieterle\n", Start: 36, End: 111},
		},
		Entities: []store.EntityMention{
			{EntityID: kismet, ChunkID: c0, Name: "Kismet"},
			{EntityID: dieterle, ChunkID: c0, Name: "William Dieterle"},
			{EntityID: kismet, ChunkID: c1, Name: "Kismet"},
			{EntityID: dietrich, ChunkID: c1, Name: "Marlene Dietrich"},
			{EntityID: dieterle, ChunkID: c1, Name: "William Dieterle"},
		},
	}
	for _, r := range []struct{ chunk, src, typ, tgt, keywords string }{
		{c0, kismet, "directed_by", dieterle, ""},
		{c1, kismet, "starred_actors", dietrich, "starring, cast"},
		{c1, kismet, "directed_by", dieterle, ""},
	} {
		w.Relations = append(w.Relations, store.RelationMention{
			RelationID: graphbuild.RelationID(r.src, r.tgt, r.typ), SourceID: r.src, TargetID: r.tgt,
			Type: r.typ, ChunkID: r.chunk, Weight: 1, Keywords: r.keywords,
		})
	}
	return w
}

func scanAll(t *testing.T, s *Store) (map[string]string, []store.Relation) {
	t.Helper()
	ctx := context.Background()
	names := map[string]string{}
	if err := s.ScanEntities(ctx, func(e store.Entity) error {
		names[e.ID] = e.Name
		return nil
	}); err != nil {
		t.Fatalf("ScanEntities: %v", err)
	}
	var rels []store.Relation
	if err := s.ScanRelations(ctx, func(r store.Relation) error {
		rels = append(rels, r)
		return nil
	}); err != nil {
		t.Fatalf("ScanRelations: %v", err)
	}
	return names, rels
}

func TestKGScanner(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t, storetest.Options())
	defer s.Close()
	w := kgWrite("kgdoc")
	if err := s.WriteDocument(ctx, w); err != nil {
		t.Fatal(err)
	}
	names, rels := scanAll(t, s)
	if len(names) != 3 || names[graphbuild.EntityID("Marlene Dietrich")] != "Marlene Dietrich" {
		t.Errorf("entities = %v", names)
	}
	e := graphbuild.EntityID
	directed := graphbuild.RelationID(e("Kismet"), e("William Dieterle"), "directed_by")
	starred := graphbuild.RelationID(e("Kismet"), e("Marlene Dietrich"), "starred_actors")
	if len(rels) != 2 {
		t.Fatalf("relations = %+v, want 2", rels)
	}
	for _, r := range rels {
		switch r.ID {
		case directed:
			if r.Type != "directed_by" || r.SourceID != e("Kismet") || r.TargetID != e("William Dieterle") || r.Weight != 2 {
				t.Errorf("directed_by = %+v; want Kismet -> Dieterle, weight 2 (two mentions)", r)
			}
		case starred:
			if r.Type != "starred_actors" || r.Weight != 1 || r.Keywords != "starring, cast" {
				t.Errorf("starred_actors = %+v", r)
			}
		default:
			t.Errorf("unexpected relation %+v", r)
		}
	}

	chunks, err := s.RelationChunks(ctx, []string{directed, starred, "r-missing", directed})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{directed: {"kgdoc:0000", "kgdoc:0001"}, starred: {"kgdoc:0001"}}
	if !reflect.DeepEqual(chunks, want) {
		t.Errorf("RelationChunks = %v, want %v", chunks, want)
	}

	// An error from the callback stops the scan and comes back unchanged.
	stop := errors.New("stop")
	calls := 0
	if err := s.ScanRelations(ctx, func(store.Relation) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("ScanRelations with failing callback: err %v after %d calls", err, calls)
	}

	// Deleting the document empties the graph the scans see.
	if err := s.DeleteDocument(ctx, w.Document.ID); err != nil {
		t.Fatal(err)
	}
	names, rels = scanAll(t, s)
	if len(names) != 0 || len(rels) != 0 {
		t.Errorf("after delete: %d entities, %d relations", len(names), len(rels))
	}
	if chunks, err := s.RelationChunks(ctx, []string{directed}); err != nil || len(chunks) != 0 {
		t.Errorf("after delete RelationChunks = %v, %v", chunks, err)
	}
}

func TestScanEntitiesSortedByID(t *testing.T) {
	s := openTemp(t, storetest.Options())
	defer s.Close()
	if err := s.WriteDocument(context.Background(), kgWrite("kgdoc")); err != nil {
		t.Fatal(err)
	}
	var ids []string
	if err := s.ScanEntities(context.Background(), func(e store.Entity) error {
		ids = append(ids, e.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !sort.StringsAreSorted(ids) || len(ids) != 3 {
		t.Errorf("ScanEntities ids %v: want 3, sorted", ids)
	}
}
