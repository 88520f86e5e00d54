package retrieve_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
)

// benchStore is what the retrieval benchmarks query: the store named by
// DOCGRAPH_BENCH_STORE (for example 2wiki.db kept by
// `go run ./cmd/query eval --dataset ../shared/data/2wiki --store-dir DIR`)
// with the questions of DOCGRAPH_BENCH_DATASET, else a slice of the shared
// MuSiQue set, else the film corpus.
func benchStore(b *testing.B) (store.Reader, []string) {
	b.Helper()
	ctx := context.Background()
	if path := os.Getenv("DOCGRAPH_BENCH_STORE"); path != "" {
		emb := embedstore.NewHash()
		st, err := sqlite.Open(ctx, path, store.Options{Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		ds, err := eval.Load(os.Getenv("DOCGRAPH_BENCH_DATASET"))
		if err != nil {
			b.Fatalf("DOCGRAPH_BENCH_DATASET: %v", err)
		}
		return st, questionsOf(ds)
	}
	if data, err := eval.FindData("."); err == nil {
		ds, err := eval.Load(filepath.Join(data, "musique"))
		if err != nil {
			b.Fatal(err)
		}
		st, _ := ingest(b, ds.Passages[:min(600, len(ds.Passages))])
		return st, questionsOf(ds)
	}
	st, _ := ingest(b, film)
	return st, []string{filmQuestion}
}

func questionsOf(ds *eval.Dataset) []string {
	qs := make([]string, len(ds.Questions))
	for i, q := range ds.Questions {
		qs[i] = q.Question
	}
	return qs
}

// BenchmarkRetrieve measures one query per iteration in each mode, the
// in-memory graph loaded beforehand.
func BenchmarkRetrieve(b *testing.B) {
	st, questions := benchStore(b)
	ctx := context.Background()
	for _, mode := range retrieve.Modes() {
		b.Run(mode, func(b *testing.B) {
			r := retrieve.New(st, embedstore.NewHash())
			if _, err := r.Retrieve(ctx, questions[0], mode); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				if _, err := r.Retrieve(ctx, questions[i%len(questions)], mode); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
