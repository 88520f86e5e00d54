package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"docgraph/embedstore"
	"docgraph/graphbuild"
	"docgraph/store"
)

// BenchmarkWriteDocument rewrites a book-sized document (300 chunks, 5000
// entity mentions, 10000 relation mentions) in a store that holds two more
// documents drawing on the same entity pool, so every write deletes the old
// version and re-merges entities shared across documents. The merger is the
// real one with the offline hash embedder.
func BenchmarkWriteDocument(b *testing.B) {
	for _, dim := range []int{16, 384} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			emb := embedstore.NewHash(embedstore.WithDimension(dim))
			s, err := Open(context.Background(), filepath.Join(b.TempDir(), "g.db"), store.Options{
				Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: dim},
				Merger:   graphbuild.NewMerger(emb),
			})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			size := func(id string, seed uint64) *store.DocumentWrite {
				return synthetic(syntheticSize{docID: id, path: id + ".txt", chunks: 300, entities: 5000, relations: 10000, pool: 4000, seed: seed, dim: dim})
			}
			for i, id := range []string{"other-1", "other-2"} {
				if err := s.WriteDocument(ctx, size(id, uint64(100+i))); err != nil {
					b.Fatal(err)
				}
			}
			w := size("book", 1)
			rows := len(w.Chunks) + len(w.Entities) + len(w.Relations)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.WriteDocument(ctx, w); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkSearchEntities is one exact top-10 cosine query over 50k entity
// vectors of dimension 384, including the SQL that hydrates the hits.
func BenchmarkSearchEntities(b *testing.B) {
	const n, dim = 50000, 384
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "g.db"), store.Options{Embedder: store.EmbedderInfo{Name: "bench", Dimension: dim}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	r := rand.New(rand.NewPCG(1, 2))
	vec := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	// Rows go straight into the table: this measures search, not ingest.
	tx, err := s.wdb.Begin()
	if err != nil {
		b.Fatal(err)
	}
	st, err := tx.Prepare(`INSERT INTO entities(id, name, type, description, mentions, embedding) VALUES (?, ?, 'thing', 'synthetic', 1, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := st.Exec(fmt.Sprintf("e%06d", i), fmt.Sprintf("entity %d", i), encodeVector(vec())); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	if _, err := tx.Exec(`UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'`); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = vec()
	}
	if _, err := s.SearchEntities(ctx, queries[0], 10); err != nil { // loads the matrix
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hits, err := s.SearchEntities(ctx, queries[i%len(queries)], 10)
		if err != nil || len(hits) != 10 {
			b.Fatalf("%d hits, %v", len(hits), err)
		}
	}
}
