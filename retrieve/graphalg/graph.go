// Package graphalg holds the graph algorithms retrieval runs in memory: a
// compressed sparse row (CSR) weighted graph and Personalized PageRank over it.
//
// Nodes are the integers 0..n-1; callers keep their own mapping from ids to
// nodes. A graph is built once with a Builder and is then read-only, so one
// Graph can serve any number of concurrent queries:
//
//	b := graphalg.NewBuilder(n)
//	b.AddUndirected(u, v, 1) // or AddEdge for one direction
//	g := b.Build()
//
//	// Exact: power iteration until the L1 change is below tol.
//	scores := graphalg.PPR(g, map[int]float64{u: 1}, 0.5, 1e-6, 100)
//	// Fast and local: forward push, touching only nodes near the seeds.
//	approx := graphalg.PPRPush(g, map[int]float64{u: 1}, 0.5, 1e-4)
//
// In both, damping is the probability that the walk follows an edge at each
// step (igraph's and networkx's "damping", HippoRAG's 0.5); with probability
// 1-damping it jumps back to a seed chosen by the seed weights. A node without
// out-edges sends all its mass back to the seeds.
package graphalg

import (
	"fmt"
	"sort"
)

// Graph is a weighted directed graph in compressed sparse row form. An
// undirected graph is stored as both directions of every edge.
type Graph struct {
	offsets []int32   // out-edges of u are targets[offsets[u]:offsets[u+1]]
	targets []int32   // sorted within each node
	weights []float64 // parallel to targets
	out     []float64 // total out-weight of each node
}

// NumNodes is n.
func (g *Graph) NumNodes() int { return len(g.offsets) - 1 }

// NumEdges counts directed edges (an undirected edge counts twice).
func (g *Graph) NumEdges() int { return len(g.targets) }

// Neighbors returns u's out-neighbours in increasing order and the weights of
// the edges to them. The slices belong to the graph: do not modify them.
func (g *Graph) Neighbors(u int) ([]int32, []float64) {
	a, b := g.offsets[u], g.offsets[u+1]
	return g.targets[a:b], g.weights[a:b]
}

// Degree is the number of u's out-edges.
func (g *Graph) Degree(u int) int { return int(g.offsets[u+1] - g.offsets[u]) }

// OutWeight is the total weight of u's out-edges.
func (g *Graph) OutWeight(u int) float64 { return g.out[u] }

// Weight returns the weight of the edge u->v and whether it exists.
func (g *Graph) Weight(u, v int) (float64, bool) {
	ts, ws := g.Neighbors(u)
	i := sort.Search(len(ts), func(i int) bool { return int(ts[i]) >= v })
	if i < len(ts) && int(ts[i]) == v {
		return ws[i], true
	}
	return 0, false
}

// Builder collects edges for a Graph. It is not safe for concurrent use.
type Builder struct {
	n     int
	edges []edge
}

type edge struct {
	u, v int32
	w    float64
}

// NewBuilder starts a graph with n nodes.
func NewBuilder(n int) *Builder {
	if n < 0 || n > 1<<31-2 {
		panic(fmt.Sprintf("graphalg: node count %d out of range", n))
	}
	return &Builder{n: n}
}

// AddEdge adds the directed edge u->v with weight w. Repeated edges are
// merged by adding their weights; edges with w <= 0 are ignored. It panics
// when u or v is not a node, like an index out of range.
func (b *Builder) AddEdge(u, v int, w float64) {
	if u < 0 || u >= b.n || v < 0 || v >= b.n {
		panic(fmt.Sprintf("graphalg: edge %d->%d outside nodes 0..%d", u, v, b.n-1))
	}
	if !(w > 0) {
		return
	}
	b.edges = append(b.edges, edge{int32(u), int32(v), w})
}

// AddUndirected adds u->v and v->u with weight w.
func (b *Builder) AddUndirected(u, v int, w float64) {
	b.AddEdge(u, v, w)
	if u != v {
		b.AddEdge(v, u, w)
	}
}

// Build returns the graph. The builder can keep adding edges afterwards and
// build again; graphs already built do not change.
func (b *Builder) Build() *Graph {
	edges := make([]edge, len(b.edges))
	copy(edges, b.edges)
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].u != edges[j].u {
			return edges[i].u < edges[j].u
		}
		return edges[i].v < edges[j].v
	})
	// Merge repeats in place.
	m := 0
	for i, e := range edges {
		if i > 0 && e.u == edges[m-1].u && e.v == edges[m-1].v {
			edges[m-1].w += e.w
			continue
		}
		edges[m] = e
		m++
	}
	edges = edges[:m]
	g := &Graph{
		offsets: make([]int32, b.n+1),
		targets: make([]int32, m),
		weights: make([]float64, m),
		out:     make([]float64, b.n),
	}
	for i, e := range edges {
		g.offsets[e.u+1]++
		g.targets[i] = e.v
		g.weights[i] = e.w
		g.out[e.u] += e.w
	}
	for u := 0; u < b.n; u++ {
		g.offsets[u+1] += g.offsets[u]
	}
	return g
}
