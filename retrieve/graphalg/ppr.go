package graphalg

import (
	"fmt"
	"math"
	"slices"
)

// personalization normalises the seed weights into a probability vector,
// dropping non-positive weights. It panics on a seed that is not a node.
func personalization(g *Graph, seeds map[int]float64) (nodes []int, weights []float64) {
	n := g.NumNodes()
	var total float64
	for u, w := range seeds {
		if u < 0 || u >= n {
			panic(fmt.Sprintf("graphalg: seed %d outside nodes 0..%d", u, n-1))
		}
		if w > 0 && !math.IsInf(w, 1) {
			total += w
		}
	}
	if total == 0 {
		return nil, nil
	}
	for u, w := range seeds {
		if w > 0 && !math.IsInf(w, 1) {
			nodes = append(nodes, u)
		}
	}
	// Seeds in node order: the order mass is pushed in, and so the
	// estimates of the push methods, must not depend on map iteration.
	slices.Sort(nodes)
	weights = make([]float64, len(nodes))
	for i, u := range nodes {
		weights[i] = seeds[u] / total
	}
	return nodes, weights
}

func checkDamping(damping float64) {
	if !(damping >= 0 && damping < 1) {
		panic(fmt.Sprintf("graphalg: damping %v outside [0, 1)", damping))
	}
}

// PPR computes Personalized PageRank exactly, by power iteration: the
// stationary distribution of a walk that follows an out-edge (chosen in
// proportion to its weight) with probability damping and otherwise restarts
// at a seed (chosen in proportion to the seed weights). Iteration stops when
// the L1 change of the scores falls below tol, or after maxIter rounds.
//
// The result has one score per node and sums to 1; it is all zeros when no
// seed has a positive weight. Each round costs O(edges leaving nodes that
// hold mass), so sparse seeds on a big graph start cheap.
func PPR(g *Graph, seeds map[int]float64, damping, tol float64, maxIter int) []float64 {
	checkDamping(damping)
	n := g.NumNodes()
	x := make([]float64, n)
	nodes, weights := personalization(g, seeds)
	if len(nodes) == 0 {
		return x
	}
	for i, u := range nodes {
		x[u] = weights[i]
	}
	next := make([]float64, n)
	for it := 0; it < maxIter; it++ {
		clear(next)
		var dangling float64
		for u, mass := range x {
			if mass == 0 {
				continue
			}
			if g.out[u] == 0 {
				dangling += mass
				continue
			}
			f := damping * mass / g.out[u]
			a, b := g.offsets[u], g.offsets[u+1]
			for k := a; k < b; k++ {
				next[g.targets[k]] += f * g.weights[k]
			}
		}
		restart := 1 - damping + damping*dangling
		for i, u := range nodes {
			next[u] += restart * weights[i]
		}
		var diff float64
		for u := range next {
			diff += math.Abs(next[u] - x[u])
		}
		x, next = next, x
		if diff < tol {
			break
		}
	}
	return x
}

// PPRPush approximates Personalized PageRank by forward push (Andersen,
// Chung and Lang): it keeps an estimate and a residual per node and pushes
// every node whose residual is at least eps times its out-degree, so it only
// ever touches the neighbourhood of the seeds. Its cost is bounded by
// 1/((1-damping)*eps) pushes whatever the graph's size.
//
// The result maps each touched node to its estimate. Estimates never exceed
// the exact PPR scores, and the missing mass is what was left in residuals,
// each under eps times its node's degree: smaller eps is more exact and slower.
// Damping and dangling nodes mean what they mean for PPR.
func PPRPush(g *Graph, seeds map[int]float64, damping, eps float64) map[int]float64 {
	checkDamping(damping)
	if !(eps > 0) {
		panic(fmt.Sprintf("graphalg: push threshold %v must be positive", eps))
	}
	p := map[int]float64{}
	nodes, weights := personalization(g, seeds)
	if len(nodes) == 0 {
		return p
	}
	r := make(map[int]float64, len(nodes)*8)
	queued := make(map[int]bool, len(nodes)*8)
	var queue []int
	threshold := func(u int) float64 {
		return eps * float64(max(g.Degree(u), 1))
	}
	add := func(u int, mass float64) {
		r[u] += mass
		if !queued[u] && r[u] >= threshold(u) {
			queued[u] = true
			queue = append(queue, u)
		}
	}
	for i, u := range nodes {
		add(u, weights[i])
	}
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		queued[u] = false
		ru := r[u]
		if ru < threshold(u) {
			continue
		}
		r[u] = 0
		p[u] += (1 - damping) * ru
		if g.out[u] == 0 {
			for i, s := range nodes {
				add(s, damping*ru*weights[i])
			}
			continue
		}
		f := damping * ru / g.out[u]
		a, b := g.offsets[u], g.offsets[u+1]
		for k := a; k < b; k++ {
			add(int(g.targets[k]), f*g.weights[k])
		}
		// Reclaim the consumed prefix now and then so a long run stays small.
		if head > 4096 && head*2 > len(queue) {
			queue = append(queue[:0], queue[head+1:]...)
			head = -1
		}
	}
	return p
}
