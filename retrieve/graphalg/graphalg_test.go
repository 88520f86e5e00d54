package graphalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestBuildMergesAndSorts(t *testing.T) {
	b := NewBuilder(4)
	b.AddEdge(0, 3, 1)
	b.AddEdge(0, 1, 2)
	b.AddEdge(0, 3, 0.5) // repeat: weights add
	b.AddEdge(2, 2, 1)   // self loop kept
	b.AddEdge(1, 0, 0)   // zero weight ignored
	b.AddUndirected(1, 2, 4)
	g := b.Build()

	if g.NumNodes() != 4 || g.NumEdges() != 5 {
		t.Fatalf("nodes, edges = %d, %d; want 4, 5", g.NumNodes(), g.NumEdges())
	}
	ts, ws := g.Neighbors(0)
	if fmt.Sprint(ts, ws) != "[1 3] [2 1.5]" {
		t.Errorf("Neighbors(0) = %v %v, want [1 3] [2 1.5]", ts, ws)
	}
	tests := []struct {
		u, v int
		w    float64
		ok   bool
	}{
		{0, 3, 1.5, true}, {1, 2, 4, true}, {2, 1, 4, true}, {2, 2, 1, true},
		{1, 0, 0, false}, {3, 0, 0, false},
	}
	for _, tt := range tests {
		if w, ok := g.Weight(tt.u, tt.v); w != tt.w || ok != tt.ok {
			t.Errorf("Weight(%d, %d) = %v, %v; want %v, %v", tt.u, tt.v, w, ok, tt.w, tt.ok)
		}
	}
	if g.OutWeight(0) != 3.5 || g.Degree(0) != 2 || g.Degree(3) != 0 {
		t.Errorf("OutWeight(0)=%v Degree(0)=%d Degree(3)=%d", g.OutWeight(0), g.Degree(0), g.Degree(3))
	}
	// A later build includes later edges; the first graph is unchanged.
	b.AddEdge(3, 0, 1)
	if g2 := b.Build(); g2.Degree(3) != 1 || g.Degree(3) != 0 {
		t.Errorf("rebuild: new degree %d, old degree %d", g2.Degree(3), g.Degree(3))
	}
}

func TestAddEdgePanicsOutsideNodes(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AddEdge(0, 5) on 3 nodes did not panic")
		}
	}()
	NewBuilder(3).AddEdge(0, 5, 1)
}

// exactPPR solves (I - d*M) x = (1-d) p by Gaussian elimination, where M is
// the walk's transition matrix with dangling nodes jumping to p: an
// independent route to the same numbers.
func exactPPR(g *Graph, seeds map[int]float64, d float64) []float64 {
	n := g.NumNodes()
	p := make([]float64, n)
	var tot float64
	for _, w := range seeds {
		tot += w
	}
	for u, w := range seeds {
		p[u] = w / tot
	}
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
		a[i][i] = 1
		a[i][n] = (1 - d) * p[i]
	}
	for u := 0; u < n; u++ {
		if g.OutWeight(u) == 0 {
			for v := 0; v < n; v++ {
				a[v][u] -= d * p[v]
			}
			continue
		}
		ts, ws := g.Neighbors(u)
		for k, v := range ts {
			a[v][u] -= d * ws[k] / g.OutWeight(u)
		}
	}
	for c := 0; c < n; c++ {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		a[c], a[piv] = a[piv], a[c]
		for r := 0; r < n; r++ {
			if r == c || a[r][c] == 0 {
				continue
			}
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = a[i][n] / a[i][i]
	}
	return x
}

// randomGraph has a few dangling nodes and uneven weights.
func randomGraph(n, edges int, seed uint64) *Graph {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := NewBuilder(n)
	for i := 0; i < edges; i++ {
		u, v := rng.IntN(n), rng.IntN(n)
		if u%11 == 5 { // dangling: no out-edges
			continue
		}
		b.AddEdge(u, v, 0.1+rng.Float64()*3)
	}
	return b.Build()
}

func TestPPRMatchesLinearSolve(t *testing.T) {
	tests := []struct {
		name    string
		n, m    int
		damping float64
		seeds   map[int]float64
	}{
		{"one seed", 30, 90, 0.5, map[int]float64{3: 1}},
		{"weighted seeds", 40, 160, 0.85, map[int]float64{1: 2, 7: 1, 16: 0.5}},
		{"dangling seed", 25, 60, 0.6, map[int]float64{5: 1, 2: 1}},
		{"no walk", 10, 20, 0, map[int]float64{4: 1}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := randomGraph(tt.n, tt.m, uint64(i+1))
			want := exactPPR(g, tt.seeds, tt.damping)
			got := PPR(g, tt.seeds, tt.damping, 1e-12, 1000)
			var sum float64
			for u := range want {
				sum += got[u]
				if math.Abs(got[u]-want[u]) > 1e-9 {
					t.Errorf("node %d: PPR %.12f, linear solve %.12f", u, got[u], want[u])
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("scores sum to %v, want 1", sum)
			}
		})
	}
}

func TestPPRStopsAtMaxIter(t *testing.T) {
	g := randomGraph(30, 90, 1)
	one := PPR(g, map[int]float64{3: 1}, 0.5, 0, 1)
	exact := exactPPR(g, map[int]float64{3: 1}, 0.5)
	var diff float64
	for u := range one {
		diff += math.Abs(one[u] - exact[u])
	}
	if diff < 1e-3 {
		t.Errorf("one iteration is within %v of the fixed point; maxIter was not honoured", diff)
	}
}

func TestPPRPushBoundsAndConverges(t *testing.T) {
	g := randomGraph(60, 300, 3)
	seeds := map[int]float64{2: 1, 9: 3}
	exact := exactPPR(g, seeds, 0.5)
	prevErr := math.Inf(1)
	for _, eps := range []float64{1e-2, 1e-3, 1e-4, 1e-6} {
		got := PPRPush(g, seeds, 0.5, eps)
		var l1 float64
		for u := range exact {
			if got[u] > exact[u]+1e-12 {
				t.Errorf("eps %g: node %d estimate %v above exact %v", eps, u, got[u], exact[u])
			}
			l1 += exact[u] - got[u]
		}
		if l1 > prevErr+1e-12 {
			t.Errorf("eps %g: error %v grew from %v", eps, l1, prevErr)
		}
		prevErr = l1
	}
	if prevErr > 1e-3 {
		t.Errorf("eps 1e-6: L1 error %v, want below 1e-3", prevErr)
	}
}

func TestPPRPushIsLocal(t *testing.T) {
	// Two components: mass never leaks into the one without seeds.
	b := NewBuilder(6)
	b.AddUndirected(0, 1, 1)
	b.AddUndirected(1, 2, 1)
	b.AddUndirected(3, 4, 1)
	b.AddUndirected(4, 5, 1)
	g := b.Build()
	got := PPRPush(g, map[int]float64{0: 1}, 0.5, 1e-8)
	for u := range got {
		if u >= 3 {
			t.Errorf("push touched node %d in the other component", u)
		}
	}
	if got[0] <= got[1] || got[1] <= 0 || got[2] <= 0 {
		t.Errorf("scores %v: want seed > neighbour > 0 and the far node reached", got)
	}
}

func TestNoSeeds(t *testing.T) {
	g := randomGraph(10, 30, 2)
	for _, seeds := range []map[int]float64{nil, {3: 0}, {3: -1}} {
		x := PPR(g, seeds, 0.5, 1e-9, 50)
		for _, v := range x {
			if v != 0 {
				t.Fatalf("seeds %v: PPR gave mass %v", seeds, x)
			}
		}
		if p := PPRPush(g, seeds, 0.5, 1e-6); len(p) != 0 {
			t.Fatalf("seeds %v: PPRPush gave %v", seeds, p)
		}
	}
}

func TestInvalidArgumentsPanic(t *testing.T) {
	g := randomGraph(5, 10, 1)
	for name, f := range map[string]func(){
		"damping 1":      func() { PPR(g, map[int]float64{0: 1}, 1, 1e-6, 10) },
		"negative":       func() { PPRPush(g, map[int]float64{0: 1}, -0.1, 1e-3) },
		"eps 0":          func() { PPRPush(g, map[int]float64{0: 1}, 0.5, 0) },
		"seed not found": func() { PPR(g, map[int]float64{9: 1}, 0.5, 1e-6, 10) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func Example() {
	// Passages 0..2 and entities 3..4: entity 3 is named in passages 0 and
	// 1, entity 4 in passages 1 and 2.
	b := NewBuilder(5)
	b.AddUndirected(3, 0, 1)
	b.AddUndirected(3, 1, 1)
	b.AddUndirected(4, 1, 1)
	b.AddUndirected(4, 2, 1)
	g := b.Build()

	// A question naming entity 3: passages 0 and 1 name it (1 a little
	// higher, as entity 4 sends mass back); passage 2 is reached only
	// through the graph, two hops away.
	scores := PPR(g, map[int]float64{3: 1}, 0.5, 1e-9, 100)
	for _, p := range []int{0, 1, 2} {
		fmt.Printf("passage %d: %.3f\n", p, scores[p])
	}
	// Output:
	// passage 0: 0.155
	// passage 1: 0.167
	// passage 2: 0.012
}

func ExamplePPRPush() {
	b := NewBuilder(4)
	b.AddUndirected(0, 1, 1)
	b.AddUndirected(1, 2, 1)
	b.AddUndirected(2, 3, 1)
	approx := PPRPush(b.Build(), map[int]float64{0: 1}, 0.5, 1e-3)
	nodes := make([]int, 0, len(approx))
	for u := range approx {
		nodes = append(nodes, u)
	}
	sort.Ints(nodes)
	for _, u := range nodes {
		fmt.Printf("node %d: %.2f\n", u, approx[u])
	}
	// Output:
	// node 0: 0.58
	// node 1: 0.31
	// node 2: 0.09
	// node 3: 0.02
}

func BenchmarkPPR(b *testing.B) {
	g := randomGraph(40000, 200000, 9)
	seeds := map[int]float64{10: 1, 2000: 1, 30001: 1}
	b.Run("exact", func(b *testing.B) {
		for b.Loop() {
			PPR(g, seeds, 0.5, 1e-6, 50)
		}
	})
	b.Run("push", func(b *testing.B) {
		for b.Loop() {
			PPRPush(g, seeds, 0.5, 1e-5)
		}
	})
}
