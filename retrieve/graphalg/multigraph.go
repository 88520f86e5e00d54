package graphalg

import (
	"fmt"
	"sort"
)

// MultiGraph is a directed multigraph whose every edge can be walked both
// ways, in CSR form: a knowledge graph where two entities may be linked by
// several typed relations, and a reasoning path may follow a relation
// against its direction ("Kismet <-[directed_by]- William Dieterle" is
// walked from the director). Edges are the integers 0..m-1 in the order they
// were added, so callers keep their own labels per edge.
type MultiGraph struct {
	offsets []int32 // steps from u are steps[offsets[u]:offsets[u+1]]
	steps   []Step
	src     []int32 // per edge
	dst     []int32
}

// Step is one edge walked from a node: to node To along edge Edge, against
// the edge's direction when Reverse.
type Step struct {
	To      int32
	Edge    int32
	Reverse bool
}

// NumNodes is n.
func (g *MultiGraph) NumNodes() int { return len(g.offsets) - 1 }

// NumEdges is the number of edges added (each walkable both ways).
func (g *MultiGraph) NumEdges() int { return len(g.src) }

// Steps returns every way to leave u: each out-edge forwards and each
// in-edge in reverse, ordered by target node, then edge, then direction.
// The slice belongs to the graph: do not modify it.
func (g *MultiGraph) Steps(u int) []Step { return g.steps[g.offsets[u]:g.offsets[u+1]] }

// Degree is the number of steps leaving u (in-edges plus out-edges; a
// self-loop counts twice).
func (g *MultiGraph) Degree(u int) int { return int(g.offsets[u+1] - g.offsets[u]) }

// Edge returns edge e's source and target.
func (g *MultiGraph) Edge(e int) (src, dst int) { return int(g.src[e]), int(g.dst[e]) }

// Undirected returns the weighted graph PPR and its relatives walk: every
// edge in both directions with weight 1 (weight 2 for a self-loop, which
// adds two to its node's degree), so parallel edges add up as they do in
// igraph's undirected multigraphs.
func (g *MultiGraph) Undirected() *Graph {
	b := NewBuilder(g.NumNodes())
	for e := range g.src {
		u, v := int(g.src[e]), int(g.dst[e])
		if u == v {
			b.AddEdge(u, u, 2)
			continue
		}
		b.AddUndirected(u, v, 1)
	}
	return b.Build()
}

// MultiBuilder collects edges for a MultiGraph. It is not safe for concurrent use.
type MultiBuilder struct {
	n        int
	src, dst []int32
}

// NewMultiBuilder starts a multigraph with n nodes.
func NewMultiBuilder(n int) *MultiBuilder {
	if n < 0 || n > 1<<31-2 {
		panic(fmt.Sprintf("graphalg: node count %d out of range", n))
	}
	return &MultiBuilder{n: n}
}

// AddEdge adds the edge u->v and returns its index. Parallel edges stay
// distinct. It panics when u or v is not a node.
func (b *MultiBuilder) AddEdge(u, v int) int {
	if u < 0 || u >= b.n || v < 0 || v >= b.n {
		panic(fmt.Sprintf("graphalg: edge %d->%d outside nodes 0..%d", u, v, b.n-1))
	}
	b.src = append(b.src, int32(u))
	b.dst = append(b.dst, int32(v))
	return len(b.src) - 1
}

// Build returns the multigraph.
func (b *MultiBuilder) Build() *MultiGraph {
	g := &MultiGraph{
		offsets: make([]int32, b.n+1),
		src:     append([]int32(nil), b.src...),
		dst:     append([]int32(nil), b.dst...),
	}
	for e := range g.src {
		g.offsets[g.src[e]+1]++
		g.offsets[g.dst[e]+1]++
	}
	for u := 0; u < b.n; u++ {
		g.offsets[u+1] += g.offsets[u]
	}
	g.steps = make([]Step, 2*len(g.src))
	fill := append([]int32(nil), g.offsets[:b.n]...)
	for e := range g.src {
		u, v := g.src[e], g.dst[e]
		g.steps[fill[u]] = Step{To: v, Edge: int32(e)}
		fill[u]++
		g.steps[fill[v]] = Step{To: u, Edge: int32(e), Reverse: true}
		fill[v]++
	}
	for u := 0; u < b.n; u++ {
		s := g.steps[g.offsets[u]:g.offsets[u+1]]
		sort.Slice(s, func(i, j int) bool {
			if s[i].To != s[j].To {
				return s[i].To < s[j].To
			}
			if s[i].Edge != s[j].Edge {
				return s[i].Edge < s[j].Edge
			}
			return !s[i].Reverse && s[j].Reverse
		})
	}
	return g
}

// Path is a walk from Start along Steps; a path from the graph algorithms
// here never visits a node twice.
type Path struct {
	Start int32
	Steps []Step
}

// End is the last node of the path.
func (p Path) End() int {
	if len(p.Steps) == 0 {
		return int(p.Start)
	}
	return int(p.Steps[len(p.Steps)-1].To)
}

// Len is the number of hops.
func (p Path) Len() int { return len(p.Steps) }

// extend returns p with one more step, sharing nothing with p.
func (p Path) extend(s Step) Path {
	steps := make([]Step, len(p.Steps)+1)
	copy(steps, p.Steps)
	steps[len(p.Steps)] = s
	return Path{Start: p.Start, Steps: steps}
}

// visits says whether the path passes through node v.
func (p Path) visits(v int32) bool {
	if p.Start == v {
		return true
	}
	for _, s := range p.Steps {
		if s.To == v {
			return true
		}
	}
	return false
}
