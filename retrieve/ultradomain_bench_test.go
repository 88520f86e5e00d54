package retrieve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// BenchmarkQueryUltraDomain ingests the 10 shared books offline (or opens the
// store named by DOCGRAPH_BENCH_STORE) and runs the 100 questions of
// questions.json in a warm process, reporting p50 and p95 latency per mode.
func BenchmarkQueryUltraDomain(b *testing.B) {
	data, err := eval.FindData(".")
	if err != nil {
		b.Skip(err)
	}
	root := filepath.Join(data, "ultradomain_cs")
	raw, err := os.ReadFile(filepath.Join(root, "questions.json"))
	if err != nil {
		b.Skip("shared data absent:", root)
	}
	var qs []struct {
		Input string `json:"input"`
	}
	if err := json.Unmarshal(raw, &qs); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	emb, err := pipeline.NewEmbedder("hash")
	if err != nil {
		b.Fatal(err)
	}
	url := os.Getenv("DOCGRAPH_BENCH_STORE")
	if url == "" {
		url = "sqlite://" + filepath.Join(b.TempDir(), "g.db")
	}
	s := pipeline.Settings{Store: url, ChunkTokens: 768, ChunkOverlap: 32, Concurrency: 4}
	st, err := pipeline.OpenStore(ctx, s, emb, pipeline.NewMerger(emb))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if stats, _ := st.Stats(ctx); stats.Documents == 0 {
		p, err := pipeline.Offline(s, emb, st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Ingest(ctx, []string{filepath.Join(root, "documents")}, pipeline.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	r := retrieve.New(st, emb)
	for _, mode := range []string{retrieve.ModeNaive, retrieve.ModeMix, retrieve.ModeHybrid} {
		b.Run(mode, func(b *testing.B) {
			// One question warms the caches (vectors, passage graph) first.
			if _, err := r.Retrieve(ctx, qs[0].Input, mode); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				lat := make([]time.Duration, 0, len(qs))
				for _, q := range qs {
					t := time.Now()
					if _, err := r.Retrieve(ctx, q.Input, mode); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			}
		})
	}
}
