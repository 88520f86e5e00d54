package graphalg

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// Neighborhood is a graph PPRRounds learns as it walks: nodes are the
// integers the neighbourhood hands out (0, 1, 2, ... as it meets them), and
// a node's out-edges are known once Fetch has been called with it.
type Neighborhood interface {
	// Fetch makes the out-edges of nodes known. PPRRounds calls it once per
	// round, with every node it is about to push whose edges it has not
	// asked for yet, so an implementation answers a round with one read.
	Fetch(ctx context.Context, nodes []int32) error
	// Edges returns the out-edges of a fetched node, which must not change
	// afterwards; the slices belong to the neighbourhood. A node with
	// none (or only edges of weight 0) is dangling.
	Edges(u int32) (targets []int32, weights []float64)
}

// A DegreeBounder is a Neighborhood that knows, before a node is fetched,
// a number its out-degree is at least: in an undirected graph, the number
// of fetched nodes with an edge to it. PPRRounds then fetches a node only
// once its residual reaches eps times that bound, not eps, sparing the
// fetches of nodes it would not push.
type DegreeBounder interface {
	MinDegree(u int32) int
}

// RoundStats says what a PPRRounds run did.
type RoundStats struct {
	Rounds  int // rounds of pushes
	Fetches int // Fetch calls (rounds that met nodes not fetched before)
	Fetched int // nodes fetched
	Pushes  int // node pushes
}

// PPRRounds approximates Personalized PageRank from the seeds by forward
// push, as PPRPush does (damping, threshold eps times a node's out-degree,
// dangling mass back to the seeds), on a graph it fetches as it goes, in
// rounds: each round pushes every node whose residual is over its
// threshold, after fetching, in one Fetch call, the edges of those among
// them it has not fetched before. A node whose degree is not known yet is
// fetched as soon as its residual reaches eps (the least threshold) and
// then pushed only if its residual reaches eps times its degree (with a
// DegreeBounder, as soon as it reaches eps times the bound).
//
// It returns every node it reached, with its estimate and residual, in the
// order they were first reached. The estimates obey PPRPush's bounds: none
// exceeds the exact score, and the missing mass is the residual left, under
// eps times each node's degree. The order of pushes within a round
// differs from PPRPush's queue, so the estimates differ within those bounds.
// Each round checks ctx; a failed Fetch ends the run with its error.
func PPRRounds(ctx context.Context, nb Neighborhood, seeds map[int]float64, damping, eps float64) ([]NodeScore, RoundStats, error) {
	checkDamping(damping)
	if !(eps > 0) {
		panic(fmt.Sprintf("graphalg: push threshold %v must be positive", eps))
	}
	var st RoundStats
	var total float64
	var nodes []int32
	for u, w := range seeds {
		if u < 0 || u > math.MaxInt32 {
			panic(fmt.Sprintf("graphalg: seed %d is not a node", u))
		}
		if w > 0 && !math.IsInf(w, 1) {
			total += w
			nodes = append(nodes, int32(u))
		}
	}
	if total == 0 {
		return nil, st, nil
	}
	slices.Sort(nodes)
	weights := make([]float64, len(nodes))
	for i, u := range nodes {
		weights[i] = seeds[int(u)] / total
	}

	var (
		p, r    []float64
		deg     []float64 // max(out-degree, 1) once fetched, 1 before
		outW    []float64 // total out-weight once fetched
		fetched []bool
		queued  []bool
		touched []int32
		queue   []int32
	)
	grow := func(u int32) {
		for int(u) >= len(p) {
			p, r, deg, outW = append(p, 0), append(r, 0), append(deg, 1), append(outW, 0)
			fetched, queued = append(fetched, false), append(queued, false)
		}
	}
	bounder, _ := nb.(DegreeBounder)
	threshold := func(u int32) float64 {
		if !fetched[u] && bounder != nil {
			return eps * float64(max(bounder.MinDegree(u), 1))
		}
		return eps * deg[u]
	}
	add := func(u int32, mass float64) {
		grow(u)
		if r[u] == 0 && p[u] == 0 && !queued[u] {
			touched = append(touched, u)
		}
		r[u] += mass
		if !queued[u] && r[u] >= threshold(u) {
			queued[u] = true
			queue = append(queue, u)
		}
	}
	for i, u := range nodes {
		add(u, weights[i])
	}
	var round, missing []int32
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, st, err
		}
		st.Rounds++
		round, queue = append(round[:0], queue...), queue[:0]
		missing = missing[:0]
		for _, u := range round {
			if !fetched[u] {
				missing = append(missing, u)
			}
		}
		if len(missing) > 0 {
			if err := nb.Fetch(ctx, missing); err != nil {
				return nil, st, err
			}
			st.Fetches++
			st.Fetched += len(missing)
			for _, u := range missing {
				fetched[u] = true
				targets, ws := nb.Edges(u)
				deg[u] = float64(max(len(targets), 1))
				for _, w := range ws {
					outW[u] += w
				}
			}
		}
		for _, u := range round {
			queued[u] = false
			ru := r[u]
			if ru < eps*deg[u] {
				continue // fetched, and its degree asks for more mass
			}
			st.Pushes++
			r[u] = 0
			p[u] += (1 - damping) * ru
			if !(outW[u] > 0) {
				for i, s := range nodes {
					add(s, damping*ru*weights[i])
				}
				continue
			}
			targets, ws := nb.Edges(u)
			f := damping * ru / outW[u]
			for k, v := range targets {
				add(v, f*ws[k])
			}
		}
	}
	out := make([]NodeScore, len(touched))
	for i, u := range touched {
		out[i] = NodeScore{Node: u, Score: p[u], Residual: r[u]}
	}
	return out, st, nil
}
