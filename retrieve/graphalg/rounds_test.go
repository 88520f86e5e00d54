package graphalg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
)

// graphNeighborhood hands PPRRounds a Graph's edges, and fails the test
// when the walk asks for a node twice or reads one it never fetched.
type graphNeighborhood struct {
	t       *testing.T
	g       *Graph
	fetched map[int32]bool
	calls   int
	err     error // returned by Fetch when set
}

func newGraphNeighborhood(t *testing.T, g *Graph) *graphNeighborhood {
	return &graphNeighborhood{t: t, g: g, fetched: map[int32]bool{}}
}

func (n *graphNeighborhood) Fetch(_ context.Context, nodes []int32) error {
	n.calls++
	if n.err != nil {
		return n.err
	}
	for _, u := range nodes {
		if n.fetched[u] {
			n.t.Errorf("node %d fetched twice", u)
		}
		n.fetched[u] = true
	}
	return nil
}

func (n *graphNeighborhood) Edges(u int32) ([]int32, []float64) {
	if !n.fetched[u] {
		n.t.Fatalf("Edges(%d) before it was fetched", u)
	}
	return n.g.Neighbors(int(u))
}

// bipartite is a passage graph in small: chunks 0..chunks-1, entities
// after them, each chunk mentioning a few entities, some by a title edge
// of weight 4, and one chunk whose only entity is left out (dangling).
func bipartite(chunks, entities int) *Graph {
	b := NewBuilder(chunks + entities)
	for c := 1; c < chunks; c++ {
		for k := range 3 {
			e := chunks + (c*7+k*5)%entities
			w := 1.0
			if k == 0 && c%3 == 0 {
				w = 4
			}
			b.AddUndirected(c, e, w)
		}
	}
	return b.Build()
}

func TestPPRRoundsMatchesExactPPR(t *testing.T) {
	tests := []struct {
		name    string
		g       *Graph
		damping float64
		seeds   map[int]float64
	}{
		{"directed with dangling nodes", randomGraph(60, 300, 3), 0.5, map[int]float64{2: 1, 9: 3}},
		{"dangling seed", randomGraph(25, 60, 3), 0.6, map[int]float64{5: 1, 2: 1}},
		{"undirected", undirectedRandom(80, 240, 4), 0.8, map[int]float64{3: 1}},
		{"passage graph, entity seeds", bipartite(40, 25), 0.5, map[int]float64{40: 1, 47: 0.25, 52: 0.5}},
		{"passage graph, dangling chunk seed", bipartite(40, 25), 0.5, map[int]float64{0: 1, 44: 1}},
		{"no walk", randomGraph(10, 20, 1), 0, map[int]float64{4: 1}},
	}
	for _, tt := range tests {
		exact := exactPPR(tt.g, tt.seeds, tt.damping)
		prevL1 := math.Inf(1)
		for _, eps := range []float64{1e-2, 1e-4, 1e-6, 1e-10} {
			t.Run(fmt.Sprintf("%s/eps=%g", tt.name, eps), func(t *testing.T) {
				nb := newGraphNeighborhood(t, tt.g)
				got, st, err := PPRRounds(context.Background(), nb, tt.seeds, tt.damping, eps)
				if err != nil {
					t.Fatal(err)
				}
				score := make([]float64, tt.g.NumNodes())
				var l1, residual, bound float64
				for _, ns := range got {
					u := int(ns.Node)
					deg := float64(max(tt.g.Degree(u), 1))
					score[u] = ns.Score
					residual += ns.Residual
					bound += eps * deg
					if ns.Residual < 0 || ns.Residual >= eps*deg {
						t.Errorf("node %d: residual %v outside [0, eps*degree = %v)", u, ns.Residual, eps*deg)
					}
				}
				for u := range exact {
					if score[u] > exact[u]+1e-12 {
						t.Errorf("node %d: estimate %v above exact %v", u, score[u], exact[u])
					}
					l1 += exact[u] - score[u]
				}
				// The mass not yet in the estimates is the residual left.
				if math.Abs(l1-residual) > 1e-9 || l1 > bound+1e-12 {
					t.Errorf("L1 error %v: residual left %v, bound eps*degrees %v", l1, residual, bound)
				}
				if l1 > prevL1+1e-12 {
					t.Errorf("L1 error %v grew from %v at a larger eps", l1, prevL1)
				}
				prevL1 = l1
				if eps == 1e-10 && l1 > 1e-7 {
					t.Errorf("eps 1e-10: L1 error %v", l1)
				}
				if nb.calls != st.Fetches || st.Fetches > st.Rounds || st.Fetched != len(nb.fetched) || st.Pushes < st.Fetches {
					t.Errorf("stats %+v: %d Fetch calls, %d nodes fetched", st, nb.calls, len(nb.fetched))
				}
			})
		}
	}
}

// TestPPRRoundsFetchesByRound checks the batching: on a path walked from
// one end, each round reaches one node further, and every round that meets
// new nodes asks for them in one call.
func TestPPRRoundsFetchesByRound(t *testing.T) {
	b := NewBuilder(6)
	for u := range 5 {
		b.AddUndirected(u, u+1, 1)
	}
	// A star around node 0: its five leaves come in one round, one call.
	g := b.Build()
	nb := newGraphNeighborhood(t, g)
	_, st, err := PPRRounds(context.Background(), nb, map[int]float64{0: 1}, 0.5, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if st.Fetched != 6 || st.Fetches != 6 {
		t.Errorf("path of 6: %+v; want 6 nodes fetched, one a round", st)
	}

	sb := NewBuilder(7)
	for v := 1; v <= 5; v++ {
		sb.AddUndirected(0, v, 1)
	}
	nb = newGraphNeighborhood(t, sb.Build())
	got, st, err := PPRRounds(context.Background(), nb, map[int]float64{0: 1}, 0.5, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	if st.Fetches != 2 || st.Fetched != 6 {
		t.Errorf("star of 5: %+v; want the centre, then the 5 leaves in one call", st)
	}
	for _, ns := range got {
		if ns.Node == 6 {
			t.Errorf("isolated node 6 reached: %+v", ns)
		}
	}
}

func TestPPRRoundsIsLocal(t *testing.T) {
	b := NewBuilder(6)
	b.AddUndirected(0, 1, 1)
	b.AddUndirected(1, 2, 1)
	b.AddUndirected(3, 4, 1)
	b.AddUndirected(4, 5, 1)
	nb := newGraphNeighborhood(t, b.Build())
	got, _, err := PPRRounds(context.Background(), nb, map[int]float64{0: 1}, 0.5, 1e-8)
	if err != nil {
		t.Fatal(err)
	}
	for u := range nb.fetched {
		if u >= 3 {
			t.Errorf("fetched node %d of the other component", u)
		}
	}
	if len(got) != 3 || got[0].Node != 0 {
		t.Errorf("reached %+v; want nodes 0, 1, 2, the seed first", got)
	}
}

func TestPPRRoundsErrors(t *testing.T) {
	g := undirectedRandom(50, 150, 2)
	nb := newGraphNeighborhood(t, g)
	nb.err = errors.New("store down")
	if _, _, err := PPRRounds(context.Background(), nb, map[int]float64{1: 1}, 0.5, 1e-4); !errors.Is(err, nb.err) {
		t.Errorf("failing Fetch: error %v, want %v", err, nb.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := PPRRounds(ctx, newGraphNeighborhood(t, g), map[int]float64{1: 1}, 0.5, 1e-4); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error %v", err)
	}
	for _, seeds := range []map[int]float64{nil, {3: 0}, {3: -1}} {
		got, st, err := PPRRounds(context.Background(), newGraphNeighborhood(t, g), seeds, 0.5, 1e-4)
		if len(got) != 0 || st.Fetches != 0 || err != nil {
			t.Errorf("seeds %v: %v, %+v, %v; want nothing", seeds, got, st, err)
		}
	}
}

// PPRRounds walks a graph it fetches round by round: here the whole
// graph is in memory, and Fetch only counts the calls.
func ExamplePPRRounds() {
	b := NewBuilder(4)
	b.AddUndirected(0, 1, 1)
	b.AddUndirected(1, 2, 1)
	b.AddUndirected(1, 3, 1)
	nb := &countingNeighborhood{g: b.Build()}
	scores, st, err := PPRRounds(context.Background(), nb, map[int]float64{0: 1}, 0.5, 1e-4)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("node %d scores %.3f; %d nodes fetched in %d calls\n", scores[0].Node, scores[0].Score, st.Fetched, st.Fetches)
	// Output:
	// node 0 scores 0.556; 4 nodes fetched in 3 calls
}

type countingNeighborhood struct{ g *Graph }

func (n *countingNeighborhood) Fetch(context.Context, []int32) error { return nil }

func (n *countingNeighborhood) Edges(u int32) ([]int32, []float64) { return n.g.Neighbors(int(u)) }
