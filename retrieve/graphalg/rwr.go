package graphalg

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// Walker samples random walks on a Graph. It precomputes cumulative edge
// weights so that each step costs a binary search, even on hubs. A Walker
// is read-only once built and safe for concurrent use.
type Walker struct {
	g   *Graph
	cum []float64 // cumulative weights parallel to the graph's targets
}

// NewWalker prepares g for random walks.
func NewWalker(g *Graph) *Walker {
	w := &Walker{g: g, cum: make([]float64, len(g.weights))}
	for u := 0; u < g.NumNodes(); u++ {
		var c float64
		for k := g.offsets[u]; k < g.offsets[u+1]; k++ {
			c += g.weights[k]
			w.cum[k] = c
		}
	}
	return w
}

// step picks an out-neighbour of u in proportion to edge weight; ok is
// false for a node without out-edges.
func (w *Walker) step(u int, rng *rand.Rand) (int, bool) {
	a, b := w.g.offsets[u], w.g.offsets[u+1]
	if a == b {
		return 0, false
	}
	cum := w.cum[a:b]
	r := rng.Float64() * cum[len(cum)-1]
	i := sort.SearchFloat64s(cum, r)
	if i < len(cum) && cum[i] == r {
		i++ // r falls on a boundary: it belongs to the next edge's range
	}
	return int(w.g.targets[int(a)+min(i, len(cum)-1)]), true
}

// RWR scores nodes by Random Walk with Restart, sampled: from every seed
// in turn, walks random walks each follow a random out-edge (chosen in
// proportion to weight) with probability damping at each step and end
// otherwise, or at a node without out-edges. A node's score is the share
// of one seed's walk steps spent on it, averaged over the seeds, so the
// scores sum to 1 and estimate Personalized PageRank with the same damping
// and uniform seed weights; unlike PPR's restart vector, each walk returns
// to its own fixed start. rngSeed makes the sampling reproducible.
func (w *Walker) RWR(seeds []int, damping float64, walks int, rngSeed uint64) map[int]float64 {
	checkDamping(damping)
	if walks <= 0 {
		panic(fmt.Sprintf("graphalg: %d walks per seed", walks))
	}
	n := w.g.NumNodes()
	uniq := make([]int, 0, len(seeds))
	seen := map[int]bool{}
	for _, s := range seeds {
		if s < 0 || s >= n {
			panic(fmt.Sprintf("graphalg: seed %d outside nodes 0..%d", s, n-1))
		}
		if !seen[s] {
			seen[s] = true
			uniq = append(uniq, s)
		}
	}
	scores := map[int]float64{}
	for _, s := range uniq {
		rng := rand.New(rand.NewPCG(rngSeed, uint64(s)))
		visits := map[int]int{}
		total := 0
		for range walks {
			u := s
			for {
				visits[u]++
				total++
				if rng.Float64() >= damping {
					break
				}
				v, ok := w.step(u, rng)
				if !ok {
					break
				}
				u = v
			}
		}
		for u, c := range visits {
			scores[u] += float64(c) / float64(total) / float64(len(uniq))
		}
	}
	return scores
}

// Ego returns the nodes within hops of the seeds, nearest first (the seeds,
// then their neighbours, and so on), with their hop distances; within one
// distance nodes come in the order the search met them. At most limit
// nodes are returned (0 means no bound).
func Ego(g *Graph, seeds []int, hops, limit int) (nodes, dist []int) {
	seen := map[int]bool{}
	var frontier []int
	for _, s := range seeds {
		if s < 0 || s >= g.NumNodes() {
			panic(fmt.Sprintf("graphalg: seed %d outside nodes 0..%d", s, g.NumNodes()-1))
		}
		if !seen[s] {
			seen[s] = true
			frontier = append(frontier, s)
		}
	}
	for d := 0; len(frontier) > 0; d++ {
		for _, u := range frontier {
			if limit > 0 && len(nodes) == limit {
				return nodes, dist
			}
			nodes = append(nodes, u)
			dist = append(dist, d)
		}
		if d == hops {
			break
		}
		var next []int
		for _, u := range frontier {
			ts, _ := g.Neighbors(u)
			for _, v := range ts {
				if !seen[int(v)] {
					seen[int(v)] = true
					next = append(next, int(v))
				}
			}
		}
		frontier = next
	}
	return nodes, dist
}
