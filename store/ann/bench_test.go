package ann

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
)

const corpusPath = "../../../shared/data/2wiki/corpus.jsonl"

// corpusVectors embeds the 2wiki passages' sentences (each with its
// passage title, as the store's relation and entity texts are short
// phrases) with the offline embedder: real sparse hash vectors.
func corpusVectors(tb testing.TB) [][]float32 {
	tb.Helper()
	f, err := os.Open(corpusPath)
	if err != nil {
		tb.Skipf("no corpus: %v", err)
	}
	defer f.Close()
	h := embedstore.NewHash()
	var out [][]float32
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p struct{ Title, Text string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			tb.Fatal(err)
		}
		for _, s := range strings.SplitAfter(p.Text, ". ") {
			if s = strings.TrimSpace(s); len(s) > 10 {
				out = append(out, h.Vector(p.Title+": "+s))
			}
		}
	}
	return out
}

// BenchmarkInsert builds an index of the corpus sentences, one thread
// through Apply (batches of 1000) or all cores through Build, and reports
// the cost per vector (wall and CPU time).
func BenchmarkInsert(b *testing.B) {
	vecs := corpusVectors(b)
	items := itemsOf(vecs, 0)
	for _, mode := range []string{"Apply", "Build"} {
		b.Run(fmt.Sprintf("%s/n=%d", mode, len(vecs)), func(b *testing.B) {
			var cpu0 = cpuTime()
			for b.Loop() {
				path := filepath.Join(b.TempDir(), "idx")
				w, err := OpenWriter(context.Background(), path, Options{Dim: len(vecs[0])})
				if err != nil {
					b.Fatal(err)
				}
				if mode == "Apply" {
					for lo := 0; lo < len(items); lo += 1000 {
						if err := w.Apply(uint64(lo+1), items[lo:min(lo+1000, len(items))], nil); err != nil {
							b.Fatal(err)
						}
					}
				} else if err := w.Build(1, seqOf(items)); err != nil {
					b.Fatal(err)
				}
				w.Close()
			}
			n := float64(b.N * len(items))
			b.ReportMetric(float64(b.Elapsed().Microseconds())/n, "us/vector")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/n, "cpu-us/vector")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkSearch searches the corpus sentences' index with the 2wiki
// questions and reports recall@10 against exact search (plain, and
// counting ties with the 10th exact score) next to the latency, which
// includes the exact re-scoring of Rerank candidates from memory.
func BenchmarkSearch(b *testing.B) {
	vecs := corpusVectors(b)
	queries := questionVectors(b)
	tr := exactTopK(vecs, queries, 10)
	path := filepath.Join(b.TempDir(), "idx")
	w, err := OpenWriter(context.Background(), path, Options{Dim: len(vecs[0])})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Build(1, seqOf(itemsOf(vecs, 0))); err != nil {
		b.Fatal(err)
	}
	w.Close()
	r, err := OpenReader(path)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, o := range []SearchOptions{{Ef: 160, Rerank: 100}, {Ef: 320, Rerank: 100}, {Ef: 640, Rerank: 100}, {Ef: 640, Rerank: 200}, {Ef: 1280, Rerank: 200}} {
		b.Run(fmt.Sprintf("n=%d/ef=%d/rerank=%d", len(vecs), o.Ef, o.Rerank), func(b *testing.B) {
			var plain, ties, n int
			for i := 0; b.Loop(); i++ {
				qi := i % len(queries)
				q := queries[qi]
				o.Exact = exactFor(vecs, q)
				hits, err := r.Search(q, 10, o)
				if err != nil {
					b.Fatal(err)
				}
				p, t := tr.recall(qi, hits, vecs, q)
				plain, ties, n = plain+p, ties+t, n+10
			}
			b.ReportMetric(float64(plain)/float64(n), "recall@10")
			b.ReportMetric(float64(ties)/float64(n), "recall@10-ties")
		})
	}
}

// benchSizes are the node counts of x4's three index files (chunks,
// entities, relations: 24,600, 194,000 and 473,000 vectors of 384
// dimensions); ANN_BENCH_SIZES (comma-separated) changes them.
func benchSizes(b *testing.B) []int {
	s := os.Getenv("ANN_BENCH_SIZES")
	if s == "" {
		return []int{24_600, 194_000, 473_000}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			b.Fatalf("ANN_BENCH_SIZES: %v", err)
		}
		out = append(out, n)
	}
	return out
}

// benchVec is a deterministic 384-dimension vector for id, drawn around
// one of 64 centres (dense data like a real embedder's), version v of it.
func benchVec(id int64, v uint64) []float32 {
	const dim, k = 384, 64
	c := rand.New(rand.NewPCG(uint64(id)%k, 99))
	r := rand.New(rand.NewPCG(uint64(id), v))
	out := make([]float32, dim)
	for j := range out {
		out[j] = float32(c.NormFloat64() + 0.6*r.NormFloat64())
	}
	return out
}

// BenchmarkFileAtSize measures, at the sizes of x4's index files, what
// opening a reader costs (it checks the file) and what an Apply of a
// small batch costs (100 vectors replaced: a document changed in watch
// mode), which keeps the file's checksums up to date. The file is built
// once per size (setup, not measured). Run the Apply cases with a fixed
// count (-benchtime=30x) so that no run reaches the deleted share at which
// Apply compacts.
func BenchmarkFileAtSize(b *testing.B) {
	for _, n := range benchSizes(b) {
		path := filepath.Join(b.TempDir(), "idx")
		w, err := OpenWriter(context.Background(), path, Options{Dim: 384})
		if err != nil {
			b.Fatal(err)
		}
		err = w.Build(1, func(yield func(int64, []float32) bool) {
			for id := range int64(n) {
				if !yield(id, benchVec(id, 0)) {
					return
				}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		size := w.Stats().FileBytes
		w.Close()
		b.Run(fmt.Sprintf("Open/n=%d", n), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				r, err := OpenReader(path)
				if err != nil {
					b.Fatal(err)
				}
				r.Close()
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
			b.ReportMetric(float64(size)/1e6, "file-MB")
		})
		b.Run(fmt.Sprintf("Apply/n=%d/batch=100", n), func(b *testing.B) {
			w, err := OpenWriter(context.Background(), path, Options{Dim: 384})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			gen := uint64(1)
			var items []Item
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				items = items[:0]
				for j := range 100 {
					id := int64((i*100 + j) * 7919 % n)
					items = append(items, Item{ID: id, Vec: benchVec(id, uint64(i+1))})
				}
				gen++
				b.StartTimer()
				cpu0 := cpuTime()
				if err := w.Apply(gen, items, nil); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/op")
		})
	}
}
