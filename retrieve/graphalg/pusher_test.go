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
	// One workspace serves many queries: each must be as if fresh.
	for i, seeds := range []map[int]float64{{3: 1}, {10: 2, 40: 1}, {3: 1}, {298: 1}, {} /* none */} {
		for _, eps := range []float64{1e-3, 1e-6} {
			want := PPRPush(g, seeds, 0.8, eps)
			got := w.PPR(seeds, 0.8, eps)
			if len(got) != len(want) {
				t.Fatalf("query %d eps %g: %d nodes, PPRPush %d", i, eps, len(got), len(want))
			}
			for _, ns := range got {
				if math.Abs(ns.Score-want[int(ns.Node)]) > 1e-15 {
					t.Errorf("query %d eps %g node %d: %v, PPRPush %v", i, eps, ns.Node, ns.Score, want[int(ns.Node)])
				}
			}
		}
	}
}

func TestPusherApproachesExact(t *testing.T) {
	g := undirectedRandom(200, 800, 9)
	exact := PPR(g, map[int]float64{7: 1}, 0.8, 1e-13, 10000)
	var l1 float64
	got := map[int]float64{}
	for _, ns := range NewPusher(g).PPR(map[int]float64{7: 1}, 0.8, 1e-9) {
		got[int(ns.Node)] = ns.Score
	}
	for u, x := range exact {
		if got[u] > x+1e-12 {
			t.Errorf("node %d: push %v above exact %v", u, got[u], x)
		}
		l1 += x - got[u]
	}
	if l1 > 1e-5 {
		t.Errorf("L1 error %v at eps 1e-9", l1)
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
