package ann

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBuckets drives the bucket queue with random pushes and pops from
// both ends, across resets, against a sorted list of the distances held.
func TestBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q buckets
	for round := range 50 {
		maxD := 64 * (1 + rng.IntN(8))
		q.reset(maxD)
		var ref []int // distances held, sorted
		for range 400 {
			switch op := rng.IntN(4); {
			case op < 2 || len(ref) == 0:
				d := rng.IntN(maxD + 1)
				q.push(d, uint32(rng.IntN(1000)))
				i, _ := slices.BinarySearch(ref, d)
				ref = slices.Insert(ref, i, d)
			case op == 2:
				d, _ := q.popClosest()
				if d != ref[0] {
					t.Fatalf("round %d: popClosest at %d, want %d", round, d, ref[0])
				}
				ref = ref[1:]
			default:
				if d := q.farthest(); d != ref[len(ref)-1] {
					t.Fatalf("round %d: farthest %d, want %d", round, d, ref[len(ref)-1])
				}
				q.popFarthest()
				ref = ref[:len(ref)-1]
			}
			if q.n != len(ref) {
				t.Fatalf("round %d: %d held, want %d", round, q.n, len(ref))
			}
			if _, ok := q.peekClosest(); ok != (len(ref) > 0) {
				t.Fatalf("round %d: peekClosest ok %v with %d held", round, ok, len(ref))
			}
		}
		// What reset leaves behind must not show up after it.
		for d := range q.b {
			if d <= maxD && len(q.b[d]) > 0 && (d < q.lo || d > q.hi) {
				t.Fatalf("round %d: bucket %d holds nodes outside [%d, %d]", round, d, q.lo, q.hi)
			}
		}
	}
}

// TestConstructionResultsSorted: a construction search's results come out
// closest first, equal distances by node number, as the neighbour
// heuristic expects.
func TestConstructionResultsSorted(t *testing.T) {
	vecs := clustered(41, 2000, 64, 20, 0.6)
	d, err := NewDraft(Options{Dim: 64, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Add(seqOf(itemsOf(vecs, 0))); err != nil {
		t.Fatal(err)
	}
	d.LinkUntil(nil)
	v := d.v
	var s searcher
	n := v.count()
	for i := uint32(0); i < n; i += 97 {
		s.lut, s.qcode = nil, v.code(i)
		ep, _, _ := v.entry(n)
		s.searchLayer(v, n, []cand{{s.sim(v, ep), ep}}, 64, 0, nil)
		res := s.sortedRes()
		if len(res) != 64 {
			t.Fatalf("query %d: %d results, want 64", i, len(res))
		}
		for k := 1; k < len(res); k++ {
			a, b := res[k-1], res[k]
			if a.s < b.s || a.s == b.s && a.n >= b.n {
				t.Fatalf("query %d: results %d and %d out of order: %+v %+v", i, k-1, k, a, b)
			}
		}
		// The node itself, at distance 0, is found.
		if res[0].n != i && res[0].s != 0 {
			t.Errorf("query %d: closest result %+v, want the node itself", i, res[0])
		}
	}
}
