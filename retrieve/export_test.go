package retrieve

import (
	"context"
	"fmt"

	"docgraph/retrieve/graphalg"
	"docgraph/store"
)

// PageRank runs mix's PageRank from the seed entities over the store's
// passage graph, as a query does, with push threshold eps, and returns
// every chunk's score.
func PageRank(ctx context.Context, r *Retriever, seeds map[string]float64, eps float64) (map[string]float64, graphalg.RoundStats, error) {
	pg, ok := r.store.(store.PassageGraph)
	if !ok {
		return nil, graphalg.RoundStats{}, fmt.Errorf("%T has no passage graph", r.store)
	}
	w, err := r.startWalk(ctx, pg)
	if err != nil {
		return nil, graphalg.RoundStats{}, err
	}
	ids := make([]string, 0, len(seeds))
	for id := range seeds {
		ids = append(ids, id)
	}
	counts, err := w.entityCounts(ctx, ids)
	if err != nil {
		return nil, graphalg.RoundStats{}, err
	}
	ranked, st, err := w.rankChunks(ctx, seeds, counts, r.cfg.Damping, eps, 0)
	out := map[string]float64{}
	for _, s := range ranked {
		out[s.ID] = s.Score
	}
	return out, st, err
}

// SetNeighborCacheLimit bounds r's passage graph cache to edges.
func SetNeighborCacheLimit(r *Retriever, edges int) {
	r.neighbors.mu.Lock()
	defer r.neighbors.mu.Unlock()
	r.neighbors.limit, r.neighbors.gen = edges, nil
}

// NeighborCacheSize is what r's passage graph cache holds: entries and
// their cost in edges (entries plus edges).
func NeighborCacheSize(r *Retriever) (entries, cost int) {
	r.neighbors.mu.Lock()
	g := r.neighbors.gen
	r.neighbors.mu.Unlock()
	if g == nil {
		return 0, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range []map[nodeKey]*adjEntry{g.young, g.old} {
		for _, e := range m {
			entries++
			cost += e.cost()
		}
	}
	return entries, cost
}
