package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// BenchmarkWriteDocument writes book-sized documents (300 chunks, 5000
// entity mentions, 10000 relation mentions, 384-dimensional vectors) with the
// real merger and the offline hash embedder. "new" adds a different book each
// iteration to a growing store whose books share an entity pool, as an
// ingest of a library does; "replace" swaps two versions of one book in a
// store holding two others, so each write deletes 15k rows, inserts 15k and
// re-merges entities shared across documents.
func BenchmarkWriteDocument(b *testing.B) {
	const dim = 384
	book := func(id string, seed uint64) *store.DocumentWrite {
		return synthetic(syntheticSize{docID: id, path: id + ".txt", chunks: 300, entities: 5000, relations: 10000, pool: 4000, seed: seed, dim: dim})
	}
	open := func(b *testing.B) *Store {
		emb := embedstore.NewHash(embedstore.WithDimension(dim))
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "g.db"), store.Options{
			Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: dim},
			Merger:   graphbuild.NewMerger(emb),
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	report := func(b *testing.B, rows int) {
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	}
	ctx := context.Background()

	b.Run("new", func(b *testing.B) {
		s := open(b)
		rows := 0
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			w := book(fmt.Sprintf("book-%d", i), uint64(i))
			rows += len(w.Chunks) + len(w.Entities) + len(w.Relations)
			b.StartTimer()
			if err := s.WriteDocument(ctx, w); err != nil {
				b.Fatal(err)
			}
		}
		report(b, rows)
	})

	b.Run("replace", func(b *testing.B) {
		s := open(b)
		for i, id := range []string{"other-1", "other-2"} {
			if err := s.WriteDocument(ctx, book(id, uint64(100+i))); err != nil {
				b.Fatal(err)
			}
		}
		versions := []*store.DocumentWrite{book("book-v1", 1), book("book-v2", 2)}
		versions[0].Replaces = []string{"book-v2"}
		versions[1].Replaces = []string{"book-v1"}
		rows := 0
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			w := versions[i%2]
			rows += len(w.Chunks) + len(w.Entities) + len(w.Relations)
			if err := s.WriteDocument(ctx, w); err != nil {
				b.Fatal(err)
			}
		}
		report(b, rows)
	})
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
	st, err := tx.Prepare(`INSERT INTO entities(id, name, type, description, mentions) VALUES (?, ?, 'thing', 'synthetic', 1)`)
	if err != nil {
		b.Fatal(err)
	}
	vst, err := tx.Prepare(`INSERT INTO vectors(kind, id, vec) VALUES (1, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		id := int64(i) * 7919
		if _, err := st.Exec(id, fmt.Sprintf("entity %d", i)); err != nil {
			b.Fatal(err)
		}
		if _, err := vst.Exec(id, encodeVec(vec())); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	vst.Close()
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
	start := time.Now()
	if _, err := s.SearchEntities(ctx, queries[0], 10); err != nil { // loads the matrix
		b.Fatal(err)
	}
	load := time.Since(start)
	runtime.GC() // the load's garbage is not the queries' cost
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hits, err := s.SearchEntities(ctx, queries[i%len(queries)], 10)
		if err != nil || len(hits) != 10 {
			b.Fatalf("%d hits, %v", len(hits), err)
		}
	}
	b.ReportMetric(float64(load.Milliseconds()), "load-ms")
}
