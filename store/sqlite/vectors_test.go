package sqlite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestVectorRoundTrip(t *testing.T) {
	for _, v := range [][]float32{nil, {}, {1}, {-0.5, 3.25, float32(math.Inf(1)), math.SmallestNonzeroFloat32}} {
		got := decodeVector(encodeVector(v))
		if len(v) == 0 {
			if got != nil {
				t.Errorf("decode(encode(%v)) = %v, want nil", v, got)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("decode(encode(%v)) = %v", v, got)
		}
	}
}

// TestVecIndexMatchesBruteForce exercises the index through puts, replaces
// and removes, in both the single-goroutine and the parallel scan.
func TestVecIndexMatchesBruteForce(t *testing.T) {
	for _, c := range []struct{ n, dim, k int }{
		{50, 16, 5},
		{2000, 384, 10}, // over parallelMin: scanned in parts
	} {
		t.Run(fmt.Sprintf("n=%d,dim=%d", c.n, c.dim), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(c.n), 3))
			vec := func() []float32 {
				v := make([]float32, c.dim)
				for i := range v {
					v[i] = float32(r.NormFloat64())
				}
				return v
			}
			x := newVecIndex("", "")
			x.reset()
			want := map[string][]float32{}
			for i := 0; i < c.n; i++ {
				id := fmt.Sprintf("v%05d", i)
				want[id] = vec()
				x.put(id, "doc", want[id])
			}
			for i := 0; i < c.n; i += 3 { // replace a third
				id := fmt.Sprintf("v%05d", i)
				want[id] = vec()
				x.put(id, "doc", want[id])
			}
			for i := 1; i < c.n; i += 4 { // remove a quarter
				id := fmt.Sprintf("v%05d", i)
				delete(want, id)
				x.remove(id)
			}
			if len(x.ids) != len(want) {
				t.Fatalf("index holds %d vectors, want %d", len(x.ids), len(want))
			}
			for round := 0; round < 5; round++ {
				q := vec()
				type hit struct {
					id string
					s  float64
				}
				var ref []hit
				for id, v := range want {
					var dot, nq, nv float64
					for i := range q {
						dot += float64(q[i]) * float64(v[i])
						nq += float64(q[i]) * float64(q[i])
						nv += float64(v[i]) * float64(v[i])
					}
					ref = append(ref, hit{id, dot / math.Sqrt(nq*nv)})
				}
				sort.Slice(ref, func(i, j int) bool { return ref[i].s > ref[j].s })
				got := x.search(q, c.k, nil)
				if len(got) != c.k {
					t.Fatalf("search returned %d hits, want %d", len(got), c.k)
				}
				for i := range got {
					if got[i].id != ref[i].id || math.Abs(got[i].score-ref[i].s) > 1e-4 {
						t.Errorf("hit %d = %s %.5f, want %s %.5f", i, got[i].id, got[i].score, ref[i].id, ref[i].s)
					}
				}
			}
			skipAll := x.search(vec(), c.k, func(string) bool { return true })
			if len(skipAll) != 0 {
				t.Errorf("search skipping every document returned %d hits", len(skipAll))
			}
			if got := x.search(vec()[:c.dim-1], c.k, nil); got != nil {
				t.Errorf("query of the wrong dimension returned %d hits", len(got))
			}
		})
	}
}
