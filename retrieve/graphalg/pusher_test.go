package graphalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// undirectedRandom is a random undirected multigraph with a few isolated nodes.
func undirectedRandom(n, edges int, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 11))
	b := NewMultiBuilder(n)
	for range edges {
		u, v := rng.IntN(n-3), rng.IntN(n-3) // the last three nodes stay isolated
		b.AddEdge(u, v)
	}
	return b.Build().Undirected()
}

func TestPusherMatchesPPRPush(t *testing.T) {
	g := undirectedRandom(300, 900, 5)
	w := NewPusher(g)
	// One workspace serves many queries: each must be as if fresh. (One
	// seed each: with several, PPRPush's push order follows map order.)
	for i, seeds := range []map[int]float64{{3: 1}, {10: 1}, {3: 1}, {298: 1}, {} /* none */} {
		for _, eps := range []float64{1e-3, 1e-6} {
			want := PPRPush(g, seeds, 0.8, eps)
			got := w.PPR(seeds, 0.8, eps)
			positive := 0
			for _, ns := range got {
				if ns.Score > 0 {
					positive++
				}
				if math.Abs(ns.Score-want[int(ns.Node)]) > 1e-15 || ns.Residual < 0 || ns.Residual >= eps*float64(max(g.Degree(int(ns.Node)), 1)) {
					t.Errorf("query %d eps %g node %d: %v (residual %v), PPRPush %v", i, eps, ns.Node, ns.Score, ns.Residual, want[int(ns.Node)])
				}
			}
			if positive != len(want) {
				t.Fatalf("query %d eps %g: %d nodes with mass, PPRPush %d", i, eps, positive, len(want))
			}
		}
	}
}

func TestPusherSeveralSeedsIsDeterministic(t *testing.T) {
	g := undirectedRandom(300, 900, 5)
	seeds := map[int]float64{10: 2, 40: 1, 77: 1}
	w := NewPusher(g)
	first := w.PPR(seeds, 0.8, 1e-4)
	for range 5 {
		again := w.PPR(seeds, 0.8, 1e-4)
		if len(again) != len(first) {
			t.Fatalf("%d nodes, then %d", len(first), len(again))
		}
		for i := range again {
			if again[i] != first[i] {
				t.Fatalf("node %d: %+v, then %+v", i, first[i], again[i])
			}
		}
	}
	// Both pushes stay within their error bound of exact PPR: the mass
	// left in residuals, under eps times the total degree.
	exact := PPR(g, seeds, 0.8, 1e-13, 10000)
	got := map[int]float64{}
	for _, ns := range first {
		got[int(ns.Node)] = ns.Score
	}
	var l1 float64
	for u, x := range exact {
		l1 += x - got[u]
		if got[u] > x+1e-12 {
			t.Errorf("node %d above exact", u)
		}
	}
	if bound := 1e-4 * float64(g.NumEdges()); l1 > bound {
		t.Errorf("L1 error %v over the bound %v", l1, bound)
	}
}

func TestPusherApproachesExact(t *testing.T) {
	g := undirectedRandom(200, 800, 9)
	exact := PPR(g, map[int]float64{7: 1}, 0.8, 1e-13, 10000)
	var l1 float64
	got := map[int]float64{}
	corrected := map[int]float64{}
	for _, ns := range NewPusher(g).PPR(map[int]float64{7: 1}, 0.8, 1e-9) {
		got[int(ns.Node)] = ns.Score
		corrected[int(ns.Node)] = ns.Score + 0.2*ns.Residual
	}
	// The residual-corrected estimate is still a lower bound, and closer.
	var l1c float64
	for u, x := range exact {
		if corrected[u] > x+1e-12 {
			t.Errorf("node %d: corrected push %v above exact %v", u, corrected[u], x)
		}
		l1c += x - corrected[u]
	}
	for u, x := range exact {
		if got[u] > x+1e-12 {
			t.Errorf("node %d: push %v above exact %v", u, got[u], x)
		}
		l1 += x - got[u]
	}
	if l1 > 1e-5 || l1c >= l1 {
		t.Errorf("L1 error %v at eps 1e-9, corrected %v", l1, l1c)
	}
}

func BenchmarkPusherMetaQASized(b *testing.B) {
	// About MetaQA's shape: 43k nodes, 134k edges.
	g := undirectedRandom(43000, 134000, 1)
	w := NewPusher(g)
	for b.Loop() {
		w.PPR(map[int]float64{17: 1}, 0.8, 1e-6)
	}
}
