package graphbuild

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/store"
)

func TestNormalizeKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Lothair II", "lothair ii"},
		{"  lothair   II. ", "lothair ii"},
		{"St. Maurice's Abbey", "st maurices abbey"},
		{"St Maurice’s  Abbey", "st maurices abbey"},
		{"U.S.A.", "u s a"},
		{"Theodred II (Bishop of Elmham)", "theodred ii bishop of elmham"},
		{"北京", "北京"},
		{"Aschenbrödel", "aschenbrodel"},
		{"ÉCOLE Française", "ecole francaise"},
		{"Straße", "strasse"},
		{"...", ""},
	}
	for _, tc := range tests {
		if got := NormalizeKey(tc.in); got != tc.want {
			t.Errorf("NormalizeKey(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if EntityID("Lothair II") != EntityID("lothair ii.") {
		t.Error("ids of equivalent names differ")
	}
	if EntityID("Lothair I") == EntityID("Lothair II") {
		t.Error("ids of different names collide")
	}
}

func TestRelationIDDirection(t *testing.T) {
	a, b := EntityID("A"), EntityID("B")
	if RelationID(a, b, "") != RelationID(b, a, "") {
		t.Error("untyped relations must be undirected")
	}
	if RelationID(a, b, "directed_by") == RelationID(b, a, "directed_by") {
		t.Error("typed relations must keep direction")
	}
	if RelationID(a, b, "directed_by") == RelationID(a, b, "written_by") {
		t.Error("relation types must give distinct ids")
	}
}

func TestBuildMergesWithinChunkAndAddsEndpoints(t *testing.T) {
	ents, rels := Build([]ChunkExtraction{
		{ChunkID: "d:0", Extraction: &ner.Extraction{
			Entities: []ner.Entity{
				{Name: "Lothair II", Type: "Person", Description: "king"},
				{Name: "lothair ii", Type: "person", Description: "king"},
				{Name: "Lothair II", Description: "married Teutberga"},
			},
			Relations: []ner.Relation{
				{Source: "Teutberga", Target: "Lothair II", Keywords: "marriage", Description: "wife of"},
				{Source: "Lothair II", Target: "Teutberga", Keywords: "marriage, queen", Description: "wife of"},
				{Source: "Lothair II", Target: "Lothair II."}, // self-loop dropped
			},
		}},
		{ChunkID: "d:1", Extraction: &ner.Extraction{Entities: []ner.Entity{{Name: "Lothair II", Description: "died 869"}}}},
	})
	if len(ents) != 3 {
		t.Fatalf("entity mentions: %+v", ents)
	}
	if ents[0].Description != "king\nmarried Teutberga" || ents[0].Type != "person" {
		t.Errorf("merged mention %+v", ents[0])
	}
	if ents[1].Name != "Teutberga" || ents[1].EntityID != EntityID("Teutberga") {
		t.Errorf("relation endpoint not added: %+v", ents[1])
	}
	if len(rels) != 1 || rels[0].Weight != 2 || rels[0].Keywords != "marriage, queen" || rels[0].Description != "wife of" {
		t.Fatalf("relations %+v", rels)
	}
	if rels[0].SourceID > rels[0].TargetID {
		t.Error("undirected relation endpoints must be ordered")
	}
}

func TestMergerIsOrderIndependent(t *testing.T) {
	m := NewMerger(embedstore.NewHash(embedstore.WithDimension(32)))
	g := []store.EntityMention{
		{EntityID: "e1", ChunkID: "b:0", Name: "lothair ii", Type: "person", Description: "died 869"},
		{EntityID: "e1", ChunkID: "a:0", Name: "Lothair II", Type: "person", Description: "king of Lotharingia"},
		{EntityID: "e1", ChunkID: "a:1", Name: "Lothair II", Type: "", Description: "king of Lotharingia"},
	}
	rev := []store.EntityMention{g[2], g[0], g[1]}
	ctx := context.Background()
	x, err := m.MergeEntities(ctx, [][]store.EntityMention{g})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := m.MergeEntities(ctx, [][]store.EntityMention{rev})
	if x[0].Name != "Lothair II" || x[0].Type != "person" || x[0].Mentions != 3 {
		t.Errorf("merged %+v", x[0])
	}
	if x[0].Description != "king of Lotharingia\ndied 869" {
		t.Errorf("description %q", x[0].Description)
	}
	if x[0].Description != y[0].Description || x[0].Name != y[0].Name || embedstore.Cosine(x[0].Embedding, y[0].Embedding) < 0.9999 {
		t.Error("merge depends on mention order")
	}
}

func TestMergeRelationsSumsWeights(t *testing.T) {
	m := NewMerger(embedstore.NewHash(embedstore.WithDimension(16)))
	rs, err := m.MergeRelations(context.Background(), [][]store.RelationMention{{
		{RelationID: "r1", SourceID: "a", TargetID: "b", ChunkID: "c:1", Keywords: "x, y", Description: "d1", Weight: 2},
		{RelationID: "r1", SourceID: "a", TargetID: "b", ChunkID: "c:0", Keywords: "y, z", Description: "d0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := rs[0]
	if r.Weight != 3 || r.Keywords != "y, z, x" || r.Description != "d0\nd1" || len(r.Embedding) != 16 {
		t.Fatalf("merged relation %+v", r)
	}
}

type recordingSummarizer struct{ calls int }

func (s *recordingSummarizer) Summarize(_ context.Context, kind, name string, d []string) (string, error) {
	s.calls++
	return "summary of " + kind + " " + name, nil
}

func TestDescriptionBudget(t *testing.T) {
	long := []store.EntityMention{}
	for i := range 50 {
		long = append(long, store.EntityMention{EntityID: "e", ChunkID: string(rune('a' + i%26)), Name: "X", Description: strings.Repeat("word ", 10) + string(rune('A'+i))})
	}
	emb := embedstore.NewHash(embedstore.WithDimension(8))
	trunc, _ := NewMerger(emb, WithDescriptionBudget(50)).MergeEntities(context.Background(), [][]store.EntityMention{long})
	if n := len(trunc[0].Description); n > 200 || n == 0 {
		t.Errorf("truncated description has %d bytes, want 1..200", n)
	}
	s := &recordingSummarizer{}
	sum, _ := NewMerger(emb, WithDescriptionBudget(50), WithSummarizer(s)).MergeEntities(context.Background(), [][]store.EntityMention{long})
	if s.calls != 1 || sum[0].Description != "summary of entity X" {
		t.Errorf("summariser calls %d, description %q", s.calls, sum[0].Description)
	}
}

// TestASCIIKey: the ASCII shortcut gives the key the general code gives.
func TestASCIIKey(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 4))
	alphabet := "aZ09 '.-_\t\n(AbC xyz  Q'"
	names := []string{"", " ", "a", "a b", "a  b", " a", "a ", "lothair ii", "Lothair  II.", "Maurice's", "o'brien", "x_y", "\x00a"}
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		names = append(names, string(b))
	}
	for _, n := range names {
		got, ok := asciiKey(n)
		if want := normalizeKey(n); !ok || got != want {
			t.Fatalf("asciiKey(%q) = %q, %t; want %q", n, got, ok, want)
		}
	}
	if _, ok := asciiKey("Aschenbrödel"); ok {
		t.Fatal("asciiKey took a name that is not ASCII")
	}
}

func TestKeywordListIsMergeKeywords(t *testing.T) {
	for _, l := range []string{"", " ", "married", " married ", "a,b", "a, A, b", ",", " , x", "K, k, ſ, s", strings.Repeat("w,", 20)} {
		if got, want := keywordList(l), mergeKeywords([]string{l}, maxKeywords); got != want {
			t.Errorf("keywordList(%q) = %q, want %q", l, got, want)
		}
	}
}

func TestAppendUnique(t *testing.T) {
	for _, c := range []struct{ have, add, want string }{
		{"", "a", "a"}, {"", " ", ""}, {"a", "a", "a"}, {"a", " a ", "a"}, {"a\nb", "b", "a\nb"},
		{"a\nb", "c", "a\nb\nc"}, {"ab", "a", "ab\na"}, {"a\n", "b", "a\n\nb"},
	} {
		if got := appendUnique(c.have, c.add); got != c.want {
			t.Errorf("appendUnique(%q, %q) = %q, want %q", c.have, c.add, got, c.want)
		}
	}
}
