package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

func kgPipeline(t *testing.T) (*pipeline.Pipeline, store.Store) {
	t.Helper()
	s := pipeline.Settings{Store: "sqlite://" + filepath.Join(t.TempDir(), "kg.db")}
	return offlinePipeline(t, s, embedstore.NewHash(embedstore.WithDimension(32)))
}

func relationsOf(t *testing.T, st store.Store, names ...string) []store.Relation {
	t.Helper()
	ids := make([]string, len(names))
	for i, n := range names {
		ids[i] = graphbuild.EntityID(n)
	}
	rels, err := st.RelationsOf(context.Background(), ids, 0)
	if err != nil {
		t.Fatal(err)
	}
	return rels
}

func TestImportTriples(t *testing.T) {
	ctx := context.Background()
	p, st := kgPipeline(t)
	path := filepath.Join(t.TempDir(), "kb.txt")
	write(t, path, "# Wiki-Movies sample\n"+
		"Kismet|directed_by|William Dieterle\n"+
		"Kismet|starred_actors|Marlene Dietrich\n"+
		"\n"+
		"Kismet|directed_by|William Dieterle\n"+ // a repeat adds weight
		"broken line without fields\n"+
		"Morocco|starred_actors|Marlene Dietrich\n")

	r := p.ImportTriples(ctx, path)
	if r.Outcome != pipeline.Added || r.Error != "" {
		t.Fatalf("first import: %+v", r)
	}
	if r.Rejected != 1 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "line 6") {
		t.Errorf("rejected %d, warnings %q: want line 6 named", r.Rejected, r.Warnings)
	}
	stats, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Documents != 1 || stats.Entities != 4 || stats.Relations != 3 || stats.Chunks != 1 {
		t.Errorf("stats %+v: want 1 document, 4 entities, 3 relations, 1 chunk", stats)
	}
	doc, err := st.Document(ctx, r.DocID)
	if err != nil || doc.Format != pipeline.KGFormat {
		t.Fatalf("document %+v, %v", doc, err)
	}
	e := graphbuild.EntityID
	rels, err := st.Relations(ctx, []string{graphbuild.RelationID(e("Kismet"), e("William Dieterle"), "directed_by")})
	if err != nil || len(rels) != 1 {
		t.Fatalf("directed_by relation: %+v, %v", rels, err)
	}
	if rels[0].Weight != 2 || rels[0].SourceID != e("Kismet") || rels[0].Type != "directed_by" {
		t.Errorf("directed_by = %+v: want Kismet as source, weight 2", rels[0])
	}
	// The reverse direction is another relation id: direction is kept.
	if rs, _ := st.Relations(ctx, []string{graphbuild.RelationID(e("William Dieterle"), e("Kismet"), "directed_by")}); len(rs) != 0 {
		t.Errorf("reverse relation exists: %+v", rs)
	}

	if r := p.ImportTriples(ctx, path); r.Outcome != pipeline.Unchanged {
		t.Errorf("re-import: %s, want unchanged", r.Outcome)
	}

	// A changed file replaces the old version: Morocco goes, Blonde Venus comes.
	write(t, path, "Kismet|directed_by|William Dieterle\nBlonde Venus|starred_actors|Marlene Dietrich\n")
	r2 := p.ImportTriples(ctx, path)
	if r2.Outcome != pipeline.Updated {
		t.Fatalf("changed import: %+v", r2)
	}
	if rs := relationsOf(t, st, "Morocco"); len(rs) != 0 {
		t.Errorf("relations of Morocco after update: %+v", rs)
	}
	if rs := relationsOf(t, st, "Blonde Venus"); len(rs) != 1 || rs[0].Type != "starred_actors" {
		t.Errorf("relations of Blonde Venus: %+v", rs)
	}
	if docs, _ := st.Documents(ctx); len(docs) != 1 {
		t.Errorf("%d documents after update, want 1", len(docs))
	}

	// Deleting the document removes its whole graph.
	if err := st.DeleteDocument(ctx, r2.DocID); err != nil {
		t.Fatal(err)
	}
	if stats, _ := st.Stats(ctx); stats.Entities != 0 || stats.Relations != 0 || stats.Chunks != 0 {
		t.Errorf("after delete: %+v", stats)
	}
}

// A triple file whose new content is stored for a file that is gone takes
// that graph over (renamed), and what the path held before goes: one
// document per path, as for prose files.
func TestImportTriplesMovedContentReplacesThePathsOldVersion(t *testing.T) {
	ctx := context.Background()
	p, st := kgPipeline(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	write(t, a, "Kismet|directed_by|William Dieterle\n")
	write(t, b, "Morocco|starred_actors|Marlene Dietrich\n")
	for _, path := range []string{a, b} {
		if r := p.ImportTriples(ctx, path); r.Outcome != pipeline.Added {
			t.Fatalf("import %s: %+v", path, r)
		}
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	write(t, b, "Kismet|directed_by|William Dieterle\n")
	if r := p.ImportTriples(ctx, b); r.Outcome != pipeline.Renamed {
		t.Fatalf("re-import %s with a's triples: %+v; want renamed", b, r)
	}
	docs, err := st.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].Path != b {
		t.Errorf("documents %+v; want one, at %s", docs, b)
	}
	if rels := relationsOf(t, st, "Morocco"); len(rels) != 0 {
		t.Errorf("b's old triples are still stored: %+v", rels)
	}
}

func TestImportTriplesChunksCiteTheirLines(t *testing.T) {
	ctx := context.Background()
	p, st := kgPipeline(t)
	var b strings.Builder
	for i := range 150 { // three chunks of 64, 64 and 22 lines
		fmt.Fprintf(&b, "Movie %d|release_year|%d\n", i, 1900+i)
	}
	path := filepath.Join(t.TempDir(), "years.txt")
	write(t, path, b.String())
	r := p.ImportTriples(ctx, path)
	if r.Outcome != pipeline.Added || r.Chunks != 3 {
		t.Fatalf("import: %+v", r)
	}
	chunks, err := st.DocumentChunks(ctx, r.DocID)
	if err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, c := range chunks {
		if text[c.Start:c.End] != c.Text || c.Tokens == 0 || len(c.Embedding) != 32 {
			t.Errorf("chunk %d: span [%d:%d] does not match its text, or lacks tokens/vector", c.Index, c.Start, c.End)
		}
	}
	// Movie 100's line is the 101st: the second chunk holds it.
	scanner, ok := st.(store.KGScanner)
	if !ok {
		t.Fatal("sqlite store is not a KGScanner")
	}
	e := graphbuild.EntityID
	rid := graphbuild.RelationID(e("Movie 100"), e("2000"), "release_year")
	got, err := scanner.RelationChunks(ctx, []string{rid})
	if err != nil {
		t.Fatal(err)
	}
	if want := r.DocID + ":0001"; len(got[rid]) != 1 || got[rid][0] != want {
		t.Errorf("chunks of Movie 100's relation = %v, want [%s]", got[rid], want)
	}
	if !strings.Contains(chunks[1].Text, "Movie 100|release_year|2000") {
		t.Errorf("chunk 1 does not hold Movie 100's line")
	}
}

func TestImportTriplesRejectsFilesWithoutTriples(t *testing.T) {
	p, _ := kgPipeline(t)
	path := filepath.Join(t.TempDir(), "prose.txt")
	write(t, path, "This is prose.\nIt has no triples at all.\n")
	r := p.ImportTriples(context.Background(), path)
	if r.Outcome != pipeline.Failed || !strings.Contains(r.Error, "no subject|relation|object line") || r.Rejected != 2 {
		t.Errorf("import of prose: %+v", r)
	}
	if r := p.ImportTriples(context.Background(), filepath.Join(t.TempDir(), "missing.txt")); r.Outcome != pipeline.Failed {
		t.Errorf("import of a missing file: %+v", r)
	}
}

func TestParseTriple(t *testing.T) {
	tests := []struct {
		line string
		want pipeline.Triple
		ok   bool
	}{
		{"Kismet|directed_by|William Dieterle", pipeline.Triple{Subject: "Kismet", Relation: "directed_by", Object: "William Dieterle"}, true},
		{" 9/11 | has_tags | 9/11 ", pipeline.Triple{Subject: "9/11", Relation: "has_tags", Object: "9/11"}, true},
		{"a\tb\tc", pipeline.Triple{Subject: "a", Relation: "b", Object: "c"}, true},
		{"a|b", pipeline.Triple{}, false},
		{"a|b|c|d", pipeline.Triple{}, false},
		{"a||c", pipeline.Triple{}, false},
	}
	for _, tt := range tests {
		got, ok := pipeline.ParseTriple(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseTriple(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRelationWords(t *testing.T) {
	for in, want := range map[string]string{
		"directed_by":                           "directed by",
		"starredActors":                         "starred actors",
		"film.film.directed_by":                 "film film directed by",
		"has_imdb_rating":                       "has imdb rating",
		"people.person.place_of_birth/location": "people person place of birth location",
	} {
		if got := pipeline.RelationWords(in); got != want {
			t.Errorf("RelationWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func ExamplePipeline_ImportTriples() {
	dir, _ := os.MkdirTemp("", "kg-example")
	defer os.RemoveAll(dir)
	kb := filepath.Join(dir, "kb.txt")
	os.WriteFile(kb, []byte("Kismet|directed_by|William Dieterle\nKismet|starred_actors|Marlene Dietrich\n"), 0o644)

	emb := embedstore.NewHash()
	settings := pipeline.Settings{Store: "sqlite://" + filepath.Join(dir, "graph.db")}
	st, err := pipeline.OpenStore(context.Background(), settings, emb, pipeline.NewMerger(emb))
	if err != nil {
		panic(err)
	}
	defer st.Close()
	p := &pipeline.Pipeline{Store: st, Embedder: emb}

	r := p.ImportTriples(context.Background(), kb)
	stats, _ := st.Stats(context.Background())
	fmt.Println(r.Outcome, stats.Entities, "entities,", stats.Relations, "relations")
	fmt.Println(p.ImportTriples(context.Background(), kb).Outcome)
	// Output:
	// added 3 entities, 2 relations
	// unchanged
}
