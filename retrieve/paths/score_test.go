package paths

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
)

func TestStem(t *testing.T) {
	groups := [][]string{
		{"directed", "director", "directors", "directs", "directing"},
		{"starred", "starring", "stars", "star"},
		{"acted", "actor", "actors", "act"},
		{"written", "writer", "writers", "wrote", "write"},
		{"genre", "genres"},
		{"released", "release", "releases"},
		{"movie", "movies"},
	}
	for _, g := range groups {
		want := stem(g[0])
		for _, w := range g[1:] {
			if got := stem(w); got != want {
				t.Errorf("stem(%q) = %q, stem(%q) = %q: want one stem", w, got, g[0], want)
			}
		}
	}
	if stem("direct") == stem("star") {
		t.Error("different words share a stem")
	}
}

func TestBM25(t *testing.T) {
	ctx := context.Background()
	s := NewBM25()
	texts := []string{
		"starred actors. directed by", // both relations of the question
		"starred actors. has genre",   // one
		"has genre. release year",     // none
		"starred actors",              // one, shorter
		"written by",                  // "screenwriter" is a compound of "writer"
	}
	sc, err := s.Score(ctx, "who directed the movies [Marlene Dietrich] acted in", texts)
	if err != nil {
		t.Fatal(err)
	}
	if !(sc[0] > sc[3] && sc[3] > sc[1] && sc[1] > sc[2] && sc[2] == 0) {
		t.Errorf("scores %v: want both > one short > one long > none = 0", sc)
	}
	sc, _ = s.Score(ctx, "which screenwriter wrote [Kismet]", texts)
	if sc[4] <= 0 || sc[0] != 0 {
		t.Errorf("compound match: scores %v", sc)
	}
	// A repeated relation counts once: "co-stars" does not make the
	// two-starred path beat the one-starred one on repetition.
	sc, _ = s.Score(ctx, "co-stars of [Gary Cooper]", []string{"starred actors. starred actors", "starred actors", "has genre"})
	if sc[0] >= sc[1] {
		t.Errorf("repeats count: %v", sc)
	}
	if sc, _ := s.Score(ctx, "the of and", texts); !reflect.DeepEqual(sc, make([]float64, len(texts))) {
		t.Errorf("a question of stop words scores %v", sc)
	}
}

func TestBM25Flat(t *testing.T) {
	ctx := context.Background()
	// Triples that match the question on the same word, one a word longer.
	texts := []string{"Gary Cooper starred actors", "Gary Cooper written by", "Gary Cooper has release year"}
	q := "what does [Gary Cooper] appear in"
	normed, _ := NewBM25().Score(ctx, q, texts)
	if normed[0] == normed[1] {
		t.Fatalf("with length normalisation a shorter triple should score higher: %v", normed)
	}
	flat, _ := (&BM25{Flat: true}).Score(ctx, q, texts)
	if flat[0] != flat[1] || flat[1] != flat[2] || flat[0] <= 0 {
		t.Errorf("flat scores %v: want equal and positive for equal matches", flat)
	}
	flat, _ = (&BM25{Flat: true}).Score(ctx, "films written by [Gary Cooper]", texts)
	if !(flat[1] > flat[0] && flat[0] == flat[2]) {
		t.Errorf("flat scores %v: the matching relation should still win", flat)
	}
}

// countingEmbedder counts the texts a real embedder is asked to embed.
type countingEmbedder struct {
	*embedstore.Hash
	docs atomic.Int64
}

func (c *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.docs.Add(int64(len(texts)))
	return c.Hash.EmbedDocuments(ctx, texts)
}

func TestEmbeddingScorer(t *testing.T) {
	ctx := context.Background()
	emb := &countingEmbedder{Hash: embedstore.NewHash()}
	s := NewEmbedding(emb, "")
	texts := []string{"release year", "directed by", "directed by"}
	sc, err := s.Score(ctx, "who directed Kismet", texts)
	if err != nil {
		t.Fatal(err)
	}
	if !(sc[1] > sc[0]) || sc[1] != sc[2] || sc[1] > 1+1e-9 {
		t.Errorf("scores %v: want directed above release, equal texts equal, cosine <= 1", sc)
	}
	if n := emb.docs.Load(); n != 2 {
		t.Errorf("embedded %d texts, want 2 (repeats once)", n)
	}
	if _, err := s.Score(ctx, "who directed Morocco", texts); err != nil || emb.docs.Load() != 2 {
		t.Errorf("second call embedded again (%d texts): the cache was not used; %v", emb.docs.Load(), err)
	}
	if s.Name() != "emb" {
		t.Errorf("name %q", s.Name())
	}
}

func TestRandomScorer(t *testing.T) {
	a, _ := Random{}.Score(context.Background(), "q", []string{"x", "y", "z"})
	b, _ := Random{}.Score(context.Background(), "q", []string{"x", "y", "z"})
	c, _ := Random{}.Score(context.Background(), "another q", []string{"x", "y", "z"})
	if !reflect.DeepEqual(a, b) || reflect.DeepEqual(a, c) {
		t.Errorf("random scores %v %v %v: want repeatable per question", a, b, c)
	}
}
