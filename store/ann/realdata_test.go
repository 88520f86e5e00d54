package ann

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
)

// questionsPath is the 2wiki question set; tests using it skip when absent.
const questionsPath = "../../../shared/data/2wiki/questions.jsonl"

// questionVectors embeds the 2wiki questions with the offline embedder.
func questionVectors(tb testing.TB) [][]float32 {
	tb.Helper()
	f, err := os.Open(questionsPath)
	if err != nil {
		tb.Skipf("no question set: %v", err)
	}
	defer f.Close()
	h := embedstore.NewHash()
	var out [][]float32
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var q struct{ Question string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatal(err)
		}
		v, err := h.EmbedQuery(context.Background(), q.Question)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// loadF32 reads a headerless little-endian float32 matrix of dim columns.
func loadF32(tb testing.TB, path string, dim int) [][]float32 {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Skipf("no vectors: %v", err)
	}
	n := len(b) / (4 * dim)
	flat := make([]float32, n*dim)
	for i := range flat {
		flat[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	out := make([][]float32, n)
	for i := range out {
		out[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func cosine(a, b []float32) float32 {
	na, nb := dot(a, a), dot(b, b)
	if na == 0 || nb == 0 {
		return 0
	}
	return dot(a, b) / float32(math.Sqrt(float64(na)*float64(nb)))
}

// truth is the exact top k of each query: ids (indexes into vecs) and scores.
type truth struct {
	ids    [][]int64
	scores [][]float32
}

func exactTopK(vecs, queries [][]float32, k int) truth {
	t := truth{ids: make([][]int64, len(queries)), scores: make([][]float32, len(queries))}
	inv := make([]float32, len(vecs))
	for i, v := range vecs {
		if n := dot(v, v); n > 0 {
			inv[i] = float32(1 / math.Sqrt(float64(n)))
		}
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			type sc struct {
				i int64
				s float32
			}
			all := make([]sc, len(vecs))
			for qi := range next {
				q := queries[qi]
				qn := dot(q, q)
				if qn == 0 {
					continue
				}
				qinv := float32(1 / math.Sqrt(float64(qn)))
				for i, v := range vecs {
					all[i] = sc{int64(i), dot(q, v) * qinv * inv[i]}
				}
				// Only the top k need sorting: select them first.
				top := all[:0:0]
				for _, x := range all {
					if len(top) < k {
						top = append(top, x)
						slices.SortFunc(top, func(a, b sc) int { return cmpSim(a.s, b.s) })
					} else if x.s > top[k-1].s {
						top[k-1] = x
						slices.SortFunc(top, func(a, b sc) int { return cmpSim(a.s, b.s) })
					}
				}
				for _, x := range top {
					t.ids[qi] = append(t.ids[qi], x.i)
					t.scores[qi] = append(t.scores[qi], x.s)
				}
			}
		})
	}
	for i := range queries {
		next <- i
	}
	close(next)
	wg.Wait()
	return t
}

// recall is recall@k of got against t for query qi, plain and counting a
// hit whose exact score is within 1e-6 of the k-th true score (ties).
func (t truth) recall(qi int, got []Hit, vecs [][]float32, q []float32) (plain, ties int) {
	ids := t.ids[qi]
	if len(ids) == 0 {
		return 0, 0
	}
	kth := t.scores[qi][len(ids)-1]
	for _, h := range got {
		if slices.Contains(ids, h.ID) {
			plain++
		}
		if cosine(q, vecs[h.ID]) >= kth-1e-6 {
			ties++
		}
	}
	return plain, ties
}

func exactFor(vecs [][]float32, q []float32) func([]int64) ([]float32, error) {
	out := make([]float32, 0, 1024)
	return func(ids []int64) ([]float32, error) {
		out = out[:0]
		for _, id := range ids {
			out = append(out, cosine(q, vecs[id]))
		}
		return out, nil
	}
}

func envInts(name, def string) []int {
	s := os.Getenv(name)
	if s == "" {
		s = def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// TestRealRecall measures build cost, the recall/latency curve and the
// pages a search reads on exported vector files against the 2wiki
// questions. It is a measurement, not a check, and runs only when asked:
//
//	ANN_F32=a.f32,b.f32  headerless little-endian float32, 384 columns
//	ANN_EF=320,640       beam widths to try (default 160,320,640,1280)
//	ANN_RERANK=100,200   re-scoring depths to try
//	ANN_SEQ=1            build with Apply on one thread (default Build)
//	ANN_M, ANN_EFC       graph parameters (default 16, 64)
//	ANN_SCAN=1           also the exhaustive code-scan bound
//
// e.g. ANN_F32=/work/exp/relations.f32 go test -run RealRecall -v ./store/ann/
func TestRealRecall(t *testing.T) {
	files := os.Getenv("ANN_F32")
	if files == "" {
		t.Skip("ANN_F32 not set")
	}
	queries := questionVectors(t)
	for _, file := range strings.Split(files, ",") {
		vecs := loadF32(t, file, 384)
		tr := exactTopK(vecs, queries, 10)
		path := filepath.Join(t.TempDir(), "idx")
		efc, _ := strconv.Atoi(os.Getenv("ANN_EFC"))
		m, _ := strconv.Atoi(os.Getenv("ANN_M"))
		w, err := OpenWriter(context.Background(), path, Options{Dim: 384, EfConstruction: efc, M: m})
		if err != nil {
			t.Fatal(err)
		}
		start, cpu0 := time.Now(), cpuTime()
		if os.Getenv("ANN_SEQ") != "" {
			const batch = 4096
			for lo := 0; lo < len(vecs); lo += batch {
				var items []Item
				for i := lo; i < min(lo+batch, len(vecs)); i++ {
					items = append(items, Item{int64(i), vecs[i]})
				}
				if err := w.Apply(uint64(lo+1), items, nil); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			err = w.Build(1, func(yield func(int64, []float32) bool) {
				for i, v := range vecs {
					if !yield(int64(i), v) {
						return
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		el, cpu := time.Since(start), cpuTime()-cpu0
		st := w.Stats()
		fmt.Printf("%s: %d vectors, build %v (%.1f us/vector wall, %.1f us/vector CPU), file %d bytes (%.0f B/vector, capacity %d)\n",
			filepath.Base(file), len(vecs), el.Round(time.Millisecond), float64(el.Microseconds())/float64(len(vecs)), float64(cpu.Microseconds())/float64(len(vecs)), st.FileBytes, float64(st.FileBytes)/float64(st.Capacity), st.Capacity)
		w.Close()
		t0 := time.Now()
		w, err = OpenWriter(context.Background(), path, Options{Dim: 384})
		if err != nil {
			t.Fatal(err)
		}
		tw := time.Since(t0)
		w.Close()
		t0 = time.Now()
		r, err := OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("  OpenReader %v, OpenWriter %v\n", time.Since(t0), tw)
		for _, rr := range envInts("ANN_RERANK", "100,200") {
			for _, ef := range envInts("ANN_EF", "160,320,640,1280") {
				var plain, ties int
				var dur time.Duration
				c0 := cpuTime()
				for qi, q := range queries {
					st := time.Now()
					hits, err := r.Search(q, 10, SearchOptions{Ef: ef, Rerank: rr, Exact: exactFor(vecs, q)})
					dur += time.Since(st)
					if err != nil {
						t.Fatal(err)
					}
					p, tt := tr.recall(qi, hits, vecs, q)
					plain += p
					ties += tt
				}
				cpu := (cpuTime() - c0) / time.Duration(len(queries))
				// The index's own cost: the same searches without exact
				// re-scoring (the caller's part).
				c1, t1 := cpuTime(), time.Now()
				for _, q := range queries {
					if _, err := r.Search(q, 10, SearchOptions{Ef: ef, Rerank: rr}); err != nil {
						t.Fatal(err)
					}
				}
				own, ownWall := (cpuTime()-c1)/time.Duration(len(queries)), time.Since(t1)/time.Duration(len(queries))
				den := float64(10 * len(queries))
				fmt.Printf("  ef %5d rerank %4d: recall@10 %.4f (ties %.4f); per query with exact re-scoring %v wall %v CPU; index only %v wall %v CPU\n",
					ef, rr, float64(plain)/den, float64(ties)/den, (dur / time.Duration(len(queries))).Round(time.Microsecond), cpu.Round(time.Microsecond), ownWall.Round(time.Microsecond), own.Round(time.Microsecond))
			}
		}
		for _, ef := range envInts("ANN_EF", "160,320,640,1280") {
			fmt.Printf("  ef %5d: %s\n", ef, touched(t, r, queries, ef))
		}
		if os.Getenv("ANN_SCAN") != "" {
			// The estimator alone: rank every node by the code estimate,
			// re-score the best R exactly.
			for _, rr := range envInts("ANN_RERANK", "100,200") {
				hit := 0
				for qi, q := range queries {
					v := r.m.v
					rot := make([]float32, v.l.pdim)
					r.m.rot.rotate(rot, q)
					lut := make([]lutWord, v.l.words)
					fillLUT(lut, rot)
					all := make([]cand, v.count())
					for i := range all {
						all[i] = cand{dotLUT(lut, v.code(uint32(i))) * v.scale[i], uint32(i)}
					}
					slices.SortFunc(all, func(a, b cand) int { return cmpSim(a.s, b.s) })
					var hits []Hit
					for _, c := range all[:rr] {
						hits = append(hits, Hit{v.ids[c.n], cosine(q, vecs[v.ids[c.n]])})
					}
					slices.SortFunc(hits, func(a, b Hit) int { return cmpSim(a.Score, b.Score) })
					p, _ := tr.recall(qi, hits[:10], vecs, q)
					hit += p
				}
				fmt.Printf("  exhaustive code scan, rerank %d: recall@10 %.4f\n", rr, float64(hit)/float64(10*len(queries)))
			}
		}
		r.Close()
	}
}

// touched runs the queries with a fresh searcher each and reports the mean
// number of nodes whose codes were read (visited) and the distinct 4 KiB
// pages of the file such a search reads: codes and scales of the visited
// nodes, ids of the kept ones, and layer-0 lists of the visited nodes (an
// upper bound: only expanded nodes' lists are read).
func touched(t *testing.T, r *Reader, queries [][]float32, ef int) string {
	v := r.m.v
	var nodes, pages int
	for _, q := range queries {
		s := new(searcher)
		if _, err := search(v, r.m.rot, s, q, 10, SearchOptions{Ef: ef}); err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, w := range s.touched {
			for x := s.visited[w]; x != 0; x &= x - 1 {
				i := int64(w)*64 + int64(bits.TrailingZeros64(x))
				nodes++
				for _, off := range []int64{
					v.l.codes + i*int64(v.l.words)*8,
					v.l.scale + i*4,
					v.l.links0 + i*int64(v.l.m0+1)*4,
				} {
					seen[off/4096] = true
				}
			}
		}
		pages += len(seen)
	}
	n := len(queries)
	return fmt.Sprintf("%d nodes visited, at most %d distinct pages (%.1f MiB) per search", nodes/n, pages/n, float64(pages/n)*4096/(1<<20))
}

// TestDenseRecall measures recall on clustered Gaussian vectors, dense
// like a neural embedder's: ANN_DENSE=n,dim (e.g. 50000,768).
func TestDenseRecall(t *testing.T) {
	spec := envInts("ANN_DENSE", "0,0")
	if spec[0] == 0 {
		t.Skip("ANN_DENSE not set")
	}
	n, dim := spec[0], spec[1]
	spread := 1.0
	if sp := os.Getenv("ANN_SPREAD"); sp != "" {
		spread, _ = strconv.ParseFloat(sp, 64)
	}
	all := clustered(uint64(dim), n+200, dim, n/100, spread)
	vecs, queries := all[:n], all[n:]
	tr := exactTopK(vecs, queries, 10)
	path := filepath.Join(t.TempDir(), "idx")
	w, err := OpenWriter(context.Background(), path, Options{Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	c0, t0 := cpuTime(), time.Now()
	if err := w.Build(1, seqOf(itemsOf(vecs, 0))); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("dense n=%d dim=%d spread=%g: build %v wall, %.1f us/vector CPU, %d bytes\n", n, dim, spread, time.Since(t0).Round(time.Millisecond), float64((cpuTime()-c0).Microseconds())/float64(n), w.Stats().FileBytes)
	w.Close()
	r, err := OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, rr := range envInts("ANN_RERANK", "100,200") {
		for _, ef := range envInts("ANN_EF", "80,160,320,640") {
			var plain, ties int
			c0 := cpuTime()
			for qi, q := range queries {
				hits, err := r.Search(q, 10, SearchOptions{Ef: ef, Rerank: rr, Exact: exactFor(vecs, q)})
				if err != nil {
					t.Fatal(err)
				}
				p, tt := tr.recall(qi, hits, vecs, q)
				plain, ties = plain+p, ties+tt
			}
			den := float64(10 * len(queries))
			fmt.Printf("  ef %4d rerank %3d: recall@10 %.4f (ties %.4f) %v CPU/query with exact re-scoring\n", ef, rr, float64(plain)/den, float64(ties)/den, ((cpuTime() - c0) / time.Duration(len(queries))).Round(time.Microsecond))
		}
	}
}

// BenchmarkRealBuild builds an index from the vectors of ANN_F32 (one
// file), as an ingest's closing build does, and reports the CPU per vector.
// It runs only when asked: ANN_F32=/work/exp/relations.f32 go test
// -run '^$' -bench RealBuild -benchtime 1x ./store/ann/
func BenchmarkRealBuild(b *testing.B) {
	file := os.Getenv("ANN_F32")
	if file == "" || strings.Contains(file, ",") {
		b.Skip("ANN_F32 (one file) not set")
	}
	vecs := loadF32(b, file, 384)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		w, err := OpenWriter(context.Background(), filepath.Join(b.TempDir(), "idx"), Options{Dim: 384})
		if err != nil {
			b.Fatal(err)
		}
		err = w.Build(1, func(yield func(int64, []float32) bool) {
			for i, v := range vecs {
				if !yield(int64(i), v) {
					return
				}
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		w.Close()
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*len(vecs)), "cpu-us/vector")
}
