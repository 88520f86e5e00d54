package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/splitter"
)

// ultraDomain is the shared 10-book corpus, or "" when absent.
func ultraDomain(b *testing.B) string {
	dir, _ := filepath.Abs("../../shared/data/ultradomain_cs/documents")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("shared data absent:", dir)
	}
	return dir
}

// BenchmarkIngestUltraDomain measures a full offline ingest of the 10 books
// into a fresh SQLite store, a re-run over the unchanged files, and the floor:
// only reading and token-counting the same files. ratio-to-floor is reported
// from the same run.
func BenchmarkIngestUltraDomain(b *testing.B) {
	dir := ultraDomain(b)
	ctx := context.Background()
	var floor time.Duration
	b.Run("floor-read-and-count", func(b *testing.B) {
		tok, err := splitter.NewTokenizer("")
		if err != nil {
			b.Fatal(err)
		}
		files, _, _ := pipeline.Walk([]string{dir})
		l := loader.New()
		for b.Loop() {
			start := time.Now()
			tokens := 0
			for _, f := range files {
				d, err := l.Load(ctx, f)
				if err != nil {
					b.Fatal(err)
				}
				tokens += tok.Count(d.Text)
			}
			floor = time.Since(start)
			b.ReportMetric(float64(tokens), "tokens")
		}
	})
	b.Run("ingest", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			db := filepath.Join(b.TempDir(), "g.db")
			p := defaultPipeline(b, db)
			b.StartTimer()
			start := time.Now()
			sum, err := p.Ingest(ctx, []string{dir}, pipeline.Options{})
			if err != nil || sum.Failed > 0 {
				b.Fatalf("%+v %v", sum, err)
			}
			first := time.Since(start)
			b.ReportMetric(float64(sum.Totals.Entities), "entities")
			b.ReportMetric(float64(sum.Totals.Relations), "relations")
			if floor > 0 {
				b.ReportMetric(first.Seconds()/floor.Seconds(), "x-floor")
			}
			start = time.Now()
			again, err := p.Ingest(ctx, []string{dir}, pipeline.Options{})
			if err != nil || again.Unchanged != sum.Added {
				b.Fatalf("re-run: %+v %v", again, err)
			}
			b.ReportMetric(100*time.Since(start).Seconds()/first.Seconds(), "rerun-%")
		}
	})
}

// defaultPipeline is the offline pipeline with the production defaults.
func defaultPipeline(b *testing.B, db string) *pipeline.Pipeline {
	s := pipeline.Settings{Store: "sqlite://" + db, ChunkTokens: 768, ChunkOverlap: 32, Concurrency: 4}
	emb, err := pipeline.NewEmbedder("hash")
	if err != nil {
		b.Fatal(err)
	}
	p, _ := offlinePipeline(b, s, emb)
	return p
}
