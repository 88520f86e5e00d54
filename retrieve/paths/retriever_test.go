package paths

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// movies is a small Wiki-Movies-like KB: Dietrich starred in three films
// by two directors; Dieterle also directed Juarez, with Bette Davis.
const movies = `Kismet|directed_by|William Dieterle
Kismet|starred_actors|Marlene Dietrich
Kismet|release_year|1944
Morocco|directed_by|Josef von Sternberg
Morocco|starred_actors|Marlene Dietrich
Morocco|starred_actors|Gary Cooper
Morocco|release_year|1930
The Devil Is a Woman|directed_by|Josef von Sternberg
The Devil Is a Woman|starred_actors|Marlene Dietrich
Juarez|directed_by|William Dieterle
Juarez|starred_actors|Bette Davis
Kismet|has_genre|Drama
Juarez|has_genre|Drama
`

func movieKG(t testing.TB) *KG {
	t.Helper()
	kg, err := ReadTriples(strings.NewReader(movies))
	if err != nil {
		t.Fatal(err)
	}
	return kg
}

func newRetriever(t testing.TB, kg *KG, spec string, opts ...Option) *Retriever {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(kg, s, append([]Option{WithEmbedder(embedstore.NewHash())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func retrieve(t testing.TB, r *Retriever, question string, seeds ...string) *Result {
	t.Helper()
	var ids []string
	for _, s := range seeds {
		ids = append(ids, graphbuild.EntityID(s))
	}
	res, err := r.Retrieve(context.Background(), question, ids)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func texts(ps []Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Text
	}
	return out
}

func ends(ps []Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.End().Name
	}
	return out
}

func TestReadTriplesAndLookup(t *testing.T) {
	kg := movieKG(t)
	if kg.NumEntities() != 12 || kg.NumRelations() != 13 {
		t.Errorf("%d entities, %d relations; want 12, 13", kg.NumEntities(), kg.NumRelations())
	}
	// Store keys fold case and punctuation; exact keys do not.
	if _, ok := kg.Lookup("marlene dietrich."); !ok {
		t.Error("folded lookup of Marlene Dietrich failed")
	}
	exact, err := ReadTriples(strings.NewReader("a|r|Danny DeVito\nb|has_tags|danny devito\n"), WithExactNames())
	if err != nil {
		t.Fatal(err)
	}
	folded, _ := ReadTriples(strings.NewReader("a|r|Danny DeVito\nb|has_tags|danny devito\n"))
	if exact.NumEntities() != 4 || folded.NumEntities() != 3 {
		t.Errorf("exact names: %d entities (want 4), folded: %d (want 3)", exact.NumEntities(), folded.NumEntities())
	}
	if _, ok := exact.Lookup("danny DeVito"); ok {
		t.Error("exact lookup matched another spelling")
	}
	if _, err := ReadTriples(strings.NewReader("a|b|c\nbroken\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("malformed line: %v", err)
	}
}

func TestLink(t *testing.T) {
	kg := movieKG(t)
	name := func(ns []int) []string {
		var out []string
		for _, n := range ns {
			_, s := kg.Entity(n)
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		q    string
		want []string
	}{
		{"who directed the films [Marlene Dietrich] starred in", []string{"Marlene Dietrich"}},
		{"Did Marlene Dietrich act in Morocco?", []string{"Marlene Dietrich", "Morocco"}},
		{"which films did the Devil Is a Woman director make", []string{"The Devil Is a Woman"}}, // case folds
		{"what is a drama", nil}, // lower-case single words are not linked
		{"Which Drama starred Bette Davis", []string{"Drama", "Bette Davis"}},
	}
	for _, tt := range tests {
		if got := name(kg.Link(tt.q)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Link(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestSpfBm25FindsTheDirectors(t *testing.T) {
	kg := movieKG(t)
	r := newRetriever(t, kg, "se=ppr:exact,pf=spf,pr=bm25")
	res := retrieve(t, r, "who directed the movies [Marlene Dietrich] acted in", "Marlene Dietrich")
	if len(res.Seeds) != 1 || res.Seeds[0].Name != "Marlene Dietrich" || res.Subgraph != 12 {
		t.Fatalf("seeds %v, subgraph %d", res.Seeds, res.Subgraph)
	}
	top := ends(res.Paths[:2])
	slices.Sort(top)
	if !reflect.DeepEqual(top, []string{"Josef von Sternberg", "William Dieterle"}) {
		t.Errorf("best two paths end at %v:\n%s", top, strings.Join(texts(res.Paths), "\n"))
	}
	want := "Marlene Dietrich <-[starred_actors]- Kismet -[directed_by]-> William Dieterle"
	if !slices.Contains(texts(res.Paths[:2]), want) {
		t.Errorf("missing %q among %q", want, texts(res.Paths[:2]))
	}
	// Per-end 1 (the default): one path per end entity.
	seen := map[string]bool{}
	for _, p := range res.Paths {
		if seen[p.End().Name] {
			t.Errorf("two paths end at %s", p.End().Name)
		}
		seen[p.End().Name] = true
	}
	if res.Paths[0].Score <= res.Paths[len(res.Paths)-1].Score {
		t.Errorf("paths not ranked: first %v, last %v", res.Paths[0].Score, res.Paths[len(res.Paths)-1].Score)
	}
}

func TestBeamSearchWidthOne(t *testing.T) {
	kg := movieKG(t)
	r := newRetriever(t, kg, "se=ppr,pf=beam:bm25,pr=none", WithBeamWidth(1, 0), WithPerEnd(0))
	res := retrieve(t, r, "who directed the movies [Marlene Dietrich] acted in", "Marlene Dietrich")
	// One path per step; Kismet is the first of three equal first steps.
	// pr=none keeps beam search's own scores: the two-hop path scores best.
	want := []string{
		"Marlene Dietrich <-[starred_actors]- Kismet -[directed_by]-> William Dieterle",
		"Marlene Dietrich <-[starred_actors]- Kismet -[directed_by]-> William Dieterle <-[directed_by]- Juarez",
		"Marlene Dietrich <-[starred_actors]- Kismet",
	}
	if got := texts(res.Paths); !reflect.DeepEqual(got, want) {
		t.Errorf("beam paths:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Candidates != 3 {
		t.Errorf("%d candidates, want 3 (width 1, 3 hops)", res.Candidates)
	}
}

func TestBeamFlags(t *testing.T) {
	kg := movieKG(t)
	q := "who directed the movies [Marlene Dietrich] acted in"
	plain := retrieve(t, newRetriever(t, kg, "pf=beam:bm25", WithBeamWidth(1, 0), WithPerEnd(0)), q, "Marlene Dietrich")
	// Dynamic pruning keeps all three equal first steps, so both directors are reached.
	dyn := retrieve(t, newRetriever(t, kg, "pf=beam:bm25:dynamic", WithBeamWidth(1, 0), WithPerEnd(0)), q, "Marlene Dietrich")
	if plain.Candidates != 3 || dyn.Candidates <= plain.Candidates {
		t.Errorf("candidates: plain %d, dynamic %d", plain.Candidates, dyn.Candidates)
	}
	if !slices.Contains(ends(dyn.Paths), "Josef von Sternberg") || slices.Contains(ends(plain.Paths), "Josef von Sternberg") {
		t.Errorf("dynamic pruning ends %v; width-1 ends %v", ends(dyn.Paths), ends(plain.Paths))
	}
	// Triple-level scoring ranks a path by the mean of its triples: the
	// flag and the option mean the same.
	a := retrieve(t, newRetriever(t, kg, "pf=beam:bm25:triple,pr=none"), q, "Marlene Dietrich")
	b := retrieve(t, newRetriever(t, kg, "pf=beam:bm25,pr=none", WithTripleScoring(true)), q, "Marlene Dietrich")
	if !reflect.DeepEqual(texts(a.Paths), texts(b.Paths)) || len(a.Paths) == 0 {
		t.Errorf("triple flag and option differ:\n%q\n%q", texts(a.Paths), texts(b.Paths))
	}
}

func TestCompletePathsAndRandomRefinement(t *testing.T) {
	kg := movieKG(t)
	r := newRetriever(t, kg, "pf=cpf,pr=random", WithMaxHop(2), WithPerEnd(0), WithTopK(1000))
	res := retrieve(t, r, "anything about [Gary Cooper]", "Gary Cooper")
	// Gary Cooper -> Morocco, then Morocco's three other relations.
	if res.Candidates != 4 || len(res.Paths) != 4 {
		t.Errorf("%d candidates, %d paths; want 4", res.Candidates, len(res.Paths))
	}
	again := retrieve(t, r, "anything about [Gary Cooper]", "Gary Cooper")
	if !reflect.DeepEqual(texts(res.Paths), texts(again.Paths)) {
		t.Error("random refinement is not reproducible for the same question")
	}
}

func TestSubgraphExtraction(t *testing.T) {
	kg := movieKG(t)
	ctx := context.Background()
	seed, _ := kg.Lookup("Marlene Dietrich")
	names := func(sub *Subgraph, n int) []string {
		var out []string
		for _, node := range sub.Nodes[:min(n, len(sub.Nodes))] {
			_, s := kg.Entity(node)
			out = append(out, s)
		}
		return out
	}
	extract := func(spec string, opts ...Option) *Subgraph {
		sub, err := newRetriever(t, kg, spec, opts...).Extract(ctx, "films of [Marlene Dietrich]", []int{seed})
		if err != nil {
			t.Fatal(err)
		}
		return sub
	}
	exact := extract("se=ppr:exact")
	push := extract("se=ppr", WithPushEpsilon(1e-9))
	if !reflect.DeepEqual(names(exact, 6), names(push, 6)) || names(exact, 1)[0] != "Marlene Dietrich" {
		t.Errorf("exact %v, push %v", names(exact, 6), names(push, 6))
	}
	if rwr := extract("se=rwr"); names(rwr, 1)[0] != "Marlene Dietrich" || len(rwr.Nodes) != 12 {
		t.Errorf("rwr: %v", names(rwr, 12))
	}
	ego := extract("se=ego", WithMaxEnt(4))
	if got := names(ego, 4); !reflect.DeepEqual(got, []string{"Marlene Dietrich", "Kismet", "Morocco", "The Devil Is a Woman"}) {
		t.Errorf("ego: %v", got)
	}
	if n := extract("se=ppr:exact", WithMaxEnt(3)); len(n.Nodes) != 3 || !n.In[seed] {
		t.Errorf("max-ent 3: %v", names(n, 5))
	}
	if none := extract("se=none"); none.In != nil {
		t.Error("se=none must not restrict the walk")
	}
	// Semantic pruning keeps half the subgraph (and the seed).
	pruned := extract("se=ppr:exact:bm25")
	if len(pruned.Nodes) != 6 || !pruned.In[seed] {
		t.Errorf("pruned to %v", names(pruned, 12))
	}
}

func TestRetrieveWithoutSeeds(t *testing.T) {
	r := newRetriever(t, movieKG(t), "")
	res, err := r.Retrieve(context.Background(), "what is the meaning of life", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Paths) != 0 || len(res.Notes) != 1 {
		t.Errorf("paths %v, notes %v", res.Paths, res.Notes)
	}
	// Without explicit seeds the question's names are linked.
	res, err = r.Retrieve(context.Background(), "who starred with Gary Cooper", nil)
	if err != nil || len(res.Seeds) != 1 || res.Seeds[0].Name != "Gary Cooper" || len(res.Paths) == 0 {
		t.Errorf("linked seeds %v, %d paths, %v", res.Seeds, len(res.Paths), err)
	}
}

func TestNewRejectsMissingScorers(t *testing.T) {
	kg := movieKG(t)
	for spec, want := range map[string]string{
		"pr=emb":      "needs an embedder",
		"pf=beam:llm": "needs an LLM",
	} {
		s, _ := ParseSpec(spec)
		if _, err := New(kg, s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%s) = %v, want %q", spec, err, want)
		}
	}
	s, _ := ParseSpec("")
	if _, err := New(kg, s, WithDamping(1)); err == nil {
		t.Error("damping 1 accepted")
	}
	if _, err := New(kg, s, WithFI(0, 0)); err == nil || !strings.Contains(err.Error(), "needs an LLM") {
		t.Errorf("FI without LLM: %v", err)
	}
}

// TestLoadKGFromStoreWithProvenance imports the KB into a SQLite store,
// loads the graph from it and checks that paths cite their source lines.
func TestLoadKGFromStoreWithProvenance(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	kb := filepath.Join(dir, "kb.txt")
	if err := os.WriteFile(kb, []byte(movies), 0o644); err != nil {
		t.Fatal(err)
	}
	emb := embedstore.NewHash(embedstore.WithDimension(32))
	st, err := pipeline.OpenStore(ctx, pipeline.Settings{Store: "sqlite://" + filepath.Join(dir, "g.db")}, emb, pipeline.NewMerger(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	imp := (&pipeline.Pipeline{Store: st, Embedder: emb}).ImportTriples(ctx, kb)
	if imp.Outcome != pipeline.Added {
		t.Fatalf("import: %+v", imp)
	}
	scanner := st.(store.KGScanner)
	kg, err := LoadKG(ctx, scanner)
	if err != nil {
		t.Fatal(err)
	}
	if kg.NumEntities() != 12 || kg.NumRelations() != 13 {
		t.Fatalf("loaded %d entities, %d relations", kg.NumEntities(), kg.NumRelations())
	}
	r := newRetriever(t, kg, "se=ppr,pf=spf,pr=bm25", WithProvenance(scanner))
	res := retrieve(t, r, "who directed the movies [Marlene Dietrich] acted in", "marlene dietrich")
	if len(res.Paths) == 0 {
		t.Fatal("no paths")
	}
	chunk := imp.DocID + ":0000"
	for _, p := range res.Paths {
		for _, h := range p.Hops {
			if !reflect.DeepEqual(h.Chunks, []string{chunk}) {
				t.Fatalf("hop %s of %q cites %v, want [%s]", h.Relation, p.Text, h.Chunks, chunk)
			}
		}
	}
	if got := res.Chunks(); !reflect.DeepEqual(got, []string{chunk}) {
		t.Errorf("Result.Chunks = %v", got)
	}
	top := ends(res.Paths[:2])
	slices.Sort(top)
	if !reflect.DeepEqual(top, []string{"Josef von Sternberg", "William Dieterle"}) {
		t.Errorf("store-loaded graph ranks %v first", top)
	}
}

// A question whose verb names no relation ("appear in" for
// starred_actors) gives every relation the same triple score; dynamic
// pruning must then keep them all rather than whichever a word-count
// difference happened to favour.
func TestBeamKeepsRelationsTheQuestionCannotTellApart(t *testing.T) {
	kg, err := ReadTriples(strings.NewReader(movies + "Streamers|starred_actors|Michael Wright\nTeeth|written_by|Michael Wright\nTeeth|has_genre|Horror\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := retrieve(t, newRetriever(t, kg, "pf=beam:bm25:triple:dynamic", WithPerEnd(0)), "what films does [Michael Wright] appear in", "Michael Wright")
	got := ends(res.Paths)
	for _, want := range []string{"Streamers", "Teeth"} {
		if !slices.Contains(got, want) {
			t.Errorf("paths end at %v: %s is missing", got, want)
		}
	}
}

// An extracted (untyped) relation is read with its keywords, its only
// account of what it is; a typed one by its type.
func TestTripleTextOfUntypedRelations(t *testing.T) {
	b := newKGBuilder(graphbuild.EntityID)
	film, director := b.node("f", "Won In The Clouds"), b.node("d", "Harold Fairfax")
	b.edge("r1", "", "adventure, film, directed", director, film)
	b.edge("r2", "", "", film, director)
	b.edge("r3", "directed_by", "ignored", film, director)
	kg := b.build()
	for edge, want := range []string{
		"Harold Fairfax adventure, film, directed Won In The Clouds",
		"Won In The Clouds related to Harold Fairfax",
		"directed by",
	} {
		if got := kg.tripleText(edge, nil); got != want {
			t.Errorf("edge %d: %q, want %q", edge, got, want)
		}
	}
}
