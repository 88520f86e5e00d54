package ann

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
