package pipeline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docgraph/docgraph/pipeline"
)

// bigText writes one text file of about size bytes made of the 2wiki
// passages (distinct text, not one paragraph repeated), or skips.
func bigText(b *testing.B, size int) string {
	f, err := os.Open("../../shared/data/2wiki/corpus.jsonl")
	if err != nil {
		b.Skip("shared data absent:", err)
	}
	defer f.Close()
	var sb strings.Builder
	for sb.Len() < size {
		if _, err := f.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() && sb.Len() < size {
			var p struct{ Title, Text string }
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				b.Fatal(err)
			}
			sb.WriteString(p.Title + "\n\n" + p.Text + "\n\n")
		}
	}
	path := filepath.Join(b.TempDir(), "big.txt")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// peakHeap samples the live heap every few milliseconds until stopped and
// returns the highest value seen.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

// BenchmarkIngestBigDocument ingests one large text file (4 MB of 2wiki
// passages; DOCGRAPH_BENCH_BIG_MB changes it) offline into a fresh SQLite
// store and reports the peak heap (peak-heap-MB, objects live or not yet
// collected, sampled) and mentions written, so the memory of the whole
// path (split, extract, graph building, embedding, the write and its
// reconcile) can be re-measured. Peak RSS of a real run: /usr/bin/time -v.
func BenchmarkIngestBigDocument(b *testing.B) {
	mb := 4
	if v := os.Getenv("DOCGRAPH_BENCH_BIG_MB"); v != "" {
		if n, err := pipeline.ParseByteSize(v + "MB"); err == nil {
			mb = int(n / 1e6)
		}
	}
	path := bigText(b, mb*1e6)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		p := defaultPipeline(b, filepath.Join(b.TempDir(), "g.db"))
		runtime.GC()
		b.StartTimer()
		stop := peakHeap()
		sum, err := p.Ingest(ctx, []string{path}, pipeline.Options{})
		peak := stop()
		if err != nil || sum.Added != 1 {
			b.Fatalf("%+v %v", sum, err)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(sum.EntityMentions+sum.RelationMentions), "mentions")
	}
}
