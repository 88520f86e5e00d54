package graphalg

import (
	"fmt"
)

// NodeScore is a node with a score and, from a push, the residual mass
// left on it. Score+(1-damping)*Residual is still a lower bound of the
// exact score (the node keeps at least that share of its residual when it
// is next pushed) and a closer one: hubs hold large residuals under a
// threshold that grows with degree.
type NodeScore struct {
	Node     int32
	Score    float64
	Residual float64
}

// Pusher runs forward push (the algorithm of PPRPush) over dense arrays it
// keeps between queries, clearing only what a query touched. On a graph
// of tens of thousands of nodes queried again and again (path retrieval on
// a knowledge graph), map operations are most of PPRPush's time; here a
// residual update is an array write. A Pusher is not safe for concurrent
// use: keep one per goroutine (or in a sync.Pool).
type Pusher struct {
	g       *Graph
	deg     []float64 // max(out-degree, 1): the push threshold is eps times it
	p, r    []float64
	queued  []bool
	touched []int32
	queue   []int32
}

// NewPusher prepares a push workspace for g.
func NewPusher(g *Graph) *Pusher {
	n := g.NumNodes()
	w := &Pusher{g: g, deg: make([]float64, n), p: make([]float64, n), r: make([]float64, n), queued: make([]bool, n)}
	for u := range w.deg {
		w.deg[u] = float64(max(g.Degree(u), 1))
	}
	return w
}

// PPR approximates Personalized PageRank from the seeds exactly as PPRPush
// does (same damping, threshold eps times degree, FIFO order, dangling
// mass back to the seeds) and returns every node it reached, with its
// estimate and its residual, in the order they were first reached.
func (w *Pusher) PPR(seeds map[int]float64, damping, eps float64) []NodeScore {
	checkDamping(damping)
	if !(eps > 0) {
		panic(fmt.Sprintf("graphalg: push threshold %v must be positive", eps))
	}
	g := w.g
	nodes, weights := personalization(g, seeds)
	if len(nodes) == 0 {
		return nil
	}
	w.reset()
	p, r, queued, deg := w.p, w.r, w.queued, w.deg
	add := func(u int32, mass float64) {
		if r[u] == 0 && p[u] == 0 && !queued[u] {
			w.touched = append(w.touched, u)
		}
		r[u] += mass
		if !queued[u] && r[u] >= eps*deg[u] {
			queued[u] = true
			w.queue = append(w.queue, u)
		}
	}
	for i, u := range nodes {
		add(int32(u), weights[i])
	}
	offsets, targets, ws := g.offsets, g.targets, g.weights
	for head := 0; head < len(w.queue); head++ {
		u := w.queue[head]
		queued[u] = false
		ru := r[u]
		if ru < eps*deg[u] {
			continue
		}
		r[u] = 0
		p[u] += (1 - damping) * ru
		if g.out[u] == 0 {
			for i, s := range nodes {
				add(int32(s), damping*ru*weights[i])
			}
			continue
		}
		f := damping * ru / g.out[u]
		for k := offsets[u]; k < offsets[u+1]; k++ {
			// The hot loop: add, written out.
			v := targets[k]
			if r[v] == 0 && p[v] == 0 && !queued[v] {
				w.touched = append(w.touched, v)
			}
			r[v] += f * ws[k]
			if !queued[v] && r[v] >= eps*deg[v] {
				queued[v] = true
				w.queue = append(w.queue, v)
			}
		}
		if head > 4096 && head*2 > len(w.queue) {
			w.queue = append(w.queue[:0], w.queue[head+1:]...)
			head = -1
		}
	}
	out := make([]NodeScore, len(w.touched))
	for i, u := range w.touched {
		out[i] = NodeScore{Node: u, Score: p[u], Residual: r[u]}
	}
	return out
}

func (w *Pusher) reset() {
	for _, u := range w.touched {
		w.p[u], w.r[u], w.queued[u] = 0, 0, false
	}
	w.touched, w.queue = w.touched[:0], w.queue[:0]
}
