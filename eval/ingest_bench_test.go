package eval_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// BenchmarkIngestManySmallDocuments ingests 2Wiki's 6,119 passages, one
// document each, offline into a fresh SQLite store, and reports the cost
// per document over the first and the last thousand: a write must not
// slow down as the graph around it grows.
//
//	go test ./eval -run XXX -bench IngestManySmall -benchtime 1x
func BenchmarkIngestManySmallDocuments(b *testing.B) {
	data, err := eval.FindData(".")
	if err != nil {
		b.Skip(err)
	}
	ds, err := eval.Load(filepath.Join(data, "2wiki"))
	if err != nil {
		b.Skip(err)
	}
	ctx := context.Background()
	for b.Loop() {
		e := embedstore.NewHash()
		settings := pipeline.Settings{Store: "sqlite://" + filepath.Join(b.TempDir(), "graph.db"), Concurrency: 4}
		st, err := pipeline.OpenStore(ctx, settings, e, pipeline.NewMerger(e))
		if err != nil {
			b.Fatal(err)
		}
		p, err := pipeline.Offline(settings, e, st)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var firstK, lastK time.Time
		total := len(ds.Passages)
		_, err = eval.Ingest(ctx, ds, p, st, 4, func(done, total int) {
			switch done {
			case 1000:
				firstK = time.Now()
			case total - 1000:
				lastK = time.Now()
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		st.Close()
		b.ReportMetric(float64(total)/end.Sub(start).Seconds(), "docs/s")
		if total > 2000 {
			b.ReportMetric(float64(firstK.Sub(start).Microseconds())/1000/1000, "ms/doc-first-1k")
			b.ReportMetric(float64(end.Sub(lastK).Microseconds())/1000/1000, "ms/doc-last-1k")
		}
	}
}
