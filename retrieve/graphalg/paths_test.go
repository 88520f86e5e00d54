package graphalg

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// movieKG is a small typed graph with a parallel edge and two routes to
// the genre:
//
//	0 Kismet  -e0 directed_by->  1 Dieterle
//	0 Kismet  -e7 written_by->   1 Dieterle
//	0 Kismet  -e1 starred->      2 Dietrich
//	3 Morocco -e2 starred->      2 Dietrich
//	3 Morocco -e3 directed_by->  4 Sternberg
//	0 Kismet  -e4 genre->        5 Drama
//	3 Morocco -e5 genre->        5 Drama
//	0 Kismet  -e6 year->         6 1944
func movieKG() *MultiGraph {
	b := NewMultiBuilder(7)
	for _, e := range [][2]int{{0, 1}, {0, 2}, {3, 2}, {3, 4}, {0, 5}, {3, 5}, {0, 6}, {0, 1}} {
		b.AddEdge(e[0], e[1])
	}
	return b.Build()
}

// show renders a path as "2 <e1- 0 -e0> 1".
func show(p Path) string {
	var b strings.Builder
	fmt.Fprint(&b, p.Start)
	for _, s := range p.Steps {
		if s.Reverse {
			fmt.Fprintf(&b, " <e%d- %d", s.Edge, s.To)
		} else {
			fmt.Fprintf(&b, " -e%d> %d", s.Edge, s.To)
		}
	}
	return b.String()
}

func showAll(ps []Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = show(p)
	}
	return out
}

func TestMultiGraphSteps(t *testing.T) {
	g := movieKG()
	if g.NumNodes() != 7 || g.NumEdges() != 8 {
		t.Fatalf("nodes, edges = %d, %d", g.NumNodes(), g.NumEdges())
	}
	// Kismet leaves by its five out-edges and none in reverse; Dieterle only in reverse, twice.
	if got := fmt.Sprint(g.Steps(0)); got != "[{1 0 false} {1 7 false} {2 1 false} {5 4 false} {6 6 false}]" {
		t.Errorf("Steps(0) = %s", got)
	}
	if got := fmt.Sprint(g.Steps(1)); got != "[{0 0 true} {0 7 true}]" {
		t.Errorf("Steps(1) = %s", got)
	}
	if s, d := g.Edge(3); s != 3 || d != 4 {
		t.Errorf("Edge(3) = %d->%d", s, d)
	}
	u := g.Undirected()
	if w, ok := u.Weight(1, 0); !ok || w != 2 {
		t.Errorf("undirected weight Dieterle-Kismet = %v, %v; want 2 (parallel edges add)", w, ok)
	}
	if u.Degree(0) != 4 || u.OutWeight(0) != 5 {
		t.Errorf("undirected Kismet: degree %d, out-weight %v; want 4 neighbours, weight 5", u.Degree(0), u.OutWeight(0))
	}
	loop := NewMultiBuilder(2)
	loop.AddEdge(1, 1)
	loop.AddEdge(0, 1)
	if w, _ := loop.Build().Undirected().Weight(1, 1); w != 2 {
		t.Errorf("self-loop weight %v, want 2 (it adds two to the degree)", w)
	}
}

func TestShortestPaths(t *testing.T) {
	g := movieKG()
	except0 := []bool{false, true, true, true, true, true, true}
	tests := []struct {
		name                     string
		targets                  []int
		allowed                  []bool
		maxHop, perTarget, limit int
		want                     []string
	}{
		{"all shortest, parallel edges and two routes", []int{1, 5, 4, 6, 0, 3, 2}, nil, 3, 0, 0, []string{
			"2 <e1- 0 -e0> 1", "2 <e1- 0 -e7> 1",
			"2 <e1- 0 -e4> 5", "2 <e2- 3 -e5> 5",
			"2 <e2- 3 -e3> 4",
			"2 <e1- 0 -e6> 6",
			"2 <e1- 0",
			"2 <e2- 3",
		}},
		{"one per target", []int{1, 5}, nil, 3, 1, 0, []string{"2 <e1- 0 -e0> 1", "2 <e1- 0 -e4> 5"}},
		{"limit", []int{1, 5, 4}, nil, 3, 0, 3, []string{"2 <e1- 0 -e0> 1", "2 <e1- 0 -e7> 1", "2 <e1- 0 -e4> 5"}},
		{"one hop only", []int{1, 0, 3}, nil, 1, 0, 0, []string{"2 <e1- 0", "2 <e2- 3"}},
		{"subgraph without Kismet", []int{1, 5, 6, 4}, except0, 3, 0, 0, []string{"2 <e2- 3 -e5> 5", "2 <e2- 3 -e3> 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := showAll(ShortestPaths(g, 2, tt.targets, tt.allowed, tt.maxHop, tt.perTarget, tt.limit))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestCompletePaths(t *testing.T) {
	g := movieKG()
	two := []string{
		"2 <e1- 0", "2 <e2- 3",
		"2 <e1- 0 -e0> 1", "2 <e1- 0 -e7> 1", "2 <e1- 0 -e4> 5", "2 <e1- 0 -e6> 6",
		"2 <e2- 3 -e3> 4", "2 <e2- 3 -e5> 5",
	}
	if got := showAll(CompletePaths(g, 2, nil, 2, 0)); !reflect.DeepEqual(got, two) {
		t.Errorf("2 hops:\ngot  %q\nwant %q", got, two)
	}
	// The third hop only goes round the Drama cycle: every other end is a dead end.
	three := append(append([]string(nil), two...), "2 <e1- 0 -e4> 5 <e5- 3", "2 <e2- 3 -e5> 5 <e4- 0")
	if got := showAll(CompletePaths(g, 2, nil, 3, 0)); !reflect.DeepEqual(got, three) {
		t.Errorf("3 hops:\ngot  %q\nwant %q", got, three)
	}
	if got := CompletePaths(g, 2, nil, 3, 5); len(got) != 5 {
		t.Errorf("limit 5: %d paths", len(got))
	}
	for _, p := range CompletePaths(g, 1, nil, 4, 0) {
		seen := map[int32]bool{p.Start: true}
		for _, s := range p.Steps {
			if seen[s.To] {
				t.Errorf("path %s repeats node %d", show(p), s.To)
			}
			seen[s.To] = true
		}
	}
}

// directorScorer favours directed_by edges (e0, e3) over starred ones (e1, e2).
func directorScorer(cands []Path) ([]float64, error) {
	out := make([]float64, len(cands))
	for i, p := range cands {
		for _, s := range p.Steps {
			switch s.Edge {
			case 0, 3:
				out[i]++
			case 1, 2:
				out[i] += 0.5
			}
		}
	}
	return out, nil
}

func TestBeamSearch(t *testing.T) {
	g := movieKG()
	show := func(ps []ScoredPath) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = fmt.Sprintf("%s (%.1f)", show(p.Path), p.Score)
		}
		return out
	}
	tests := []struct {
		name string
		opts BeamOptions
		want []string
	}{
		{"width 1 follows the tie generated first", BeamOptions{Width: 1, MaxHop: 3},
			[]string{"2 <e1- 0 (0.5)", "2 <e1- 0 -e0> 1 (1.5)"}},
		{"width 2", BeamOptions{Width: 2, MaxHop: 3},
			[]string{"2 <e1- 0 (0.5)", "2 <e2- 3 (0.5)", "2 <e1- 0 -e0> 1 (1.5)", "2 <e2- 3 -e3> 4 (1.5)"}},
		{"dynamic keeps what beats the mean", BeamOptions{Width: 1, MaxHop: 3, Dynamic: true},
			[]string{"2 <e1- 0 (0.5)", "2 <e2- 3 (0.5)", "2 <e1- 0 -e0> 1 (1.5)", "2 <e2- 3 -e3> 4 (1.5)"}},
		{"dynamic bounded by MaxBeam", BeamOptions{Width: 1, MaxHop: 1, Dynamic: true, MaxBeam: 1},
			[]string{"2 <e1- 0 (0.5)"}},
		{"max hop 1", BeamOptions{Width: 8, MaxHop: 1}, []string{"2 <e1- 0 (0.5)", "2 <e2- 3 (0.5)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := BeamSearch(g, 2, tt.opts, directorScorer)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(show(got), tt.want) {
				t.Errorf("got  %q\nwant %q", show(got), tt.want)
			}
		})
	}
	bad := func([]Path) ([]float64, error) { return []float64{1}, nil }
	if _, err := BeamSearch(g, 2, BeamOptions{}, bad); err == nil || !strings.Contains(err.Error(), "1 scores for 2 candidates") {
		t.Errorf("short score slice: err %v", err)
	}
}

func TestRWRAgreesWithPPR(t *testing.T) {
	// An undirected graph has no dangling nodes, where the sampled walk and
	// PPR's restart vector describe the same chain.
	g := movieKG().Undirected()
	seeds := []int{2, 6}
	exact := PPR(g, map[int]float64{2: 1, 6: 1}, 0.8, 1e-12, 1000)
	got := NewWalker(g).RWR(seeds, 0.8, 40000, 1)
	var sum float64
	for u := range exact {
		sum += got[u]
		if math.Abs(got[u]-exact[u]) > 0.01 {
			t.Errorf("node %d: RWR %.4f, PPR %.4f", u, got[u], exact[u])
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("RWR scores sum to %v", sum)
	}
	again := NewWalker(g).RWR(seeds, 0.8, 40000, 1)
	if !reflect.DeepEqual(got, again) {
		t.Error("same rng seed, different scores")
	}
	if only := NewWalker(g).RWR([]int{4}, 0, 10, 1); len(only) != 1 || only[4] != 1 {
		t.Errorf("damping 0 should stay on the seed: %v", only)
	}
}

func TestEgo(t *testing.T) {
	g := movieKG().Undirected()
	nodes, dist := Ego(g, []int{1}, 2, 0)
	if fmt.Sprint(nodes, dist) != "[1 0 2 5 6] [0 1 2 2 2]" {
		t.Errorf("Ego(Dieterle, 2) = %v %v", nodes, dist)
	}
	nodes, _ = Ego(g, []int{1, 4}, 1, 3)
	if fmt.Sprint(nodes) != "[1 4 0]" {
		t.Errorf("Ego(Dieterle+Sternberg, 1, limit 3) = %v", nodes)
	}
}

func ExampleShortestPaths() {
	// Kismet (0) was directed by Dieterle (1), who also directed Salome (2).
	b := NewMultiBuilder(3)
	b.AddEdge(0, 1)
	b.AddEdge(2, 1)
	g := b.Build()
	for _, p := range ShortestPaths(g, 0, []int{2}, nil, 3, 0, 0) {
		fmt.Println(p.Start, p.Steps, "ends at", p.End())
	}
	// Output:
	// 0 [{1 0 false} {2 1 true}] ends at 2
}
