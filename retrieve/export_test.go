package retrieve

import (
	"context"
	"fmt"
	"time"

	"github.com/docgraph/docgraph/retrieve/graphalg"
	"github.com/docgraph/docgraph/store"
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

// SnapshotDiffers reads r's store's whole passage graph as a snapshot and
// compares every node of it, and unknown ones, with the store's own
// answers through the cache; it returns the first difference, or "".
func SnapshotDiffers(ctx context.Context, r *Retriever) (string, int, error) {
	pg := r.store.(store.PassageGraph)
	src := r.store.(snapshotSource)
	version, err := pg.GraphVersion(ctx)
	if err != nil {
		return "", 0, err
	}
	snap, err := readSnapshot(ctx, src, r.cfg.Graph.MaxEntityChunks, version)
	if err != nil || snap == nil {
		return "", 0, fmt.Errorf("no snapshot: %v", err)
	}
	keys := []nodeKey{{id: "no such entity"}, {chunk: true, id: "no such chunk"}}
	keys = append(keys, snap.keys...)
	fromStore, err := newNeighborCache(r.cfg.Graph.MaxEntityChunks).forVersion(version).lookup(ctx, pg, keys)
	if err != nil {
		return "", 0, err
	}
	for i, k := range keys {
		a, b := snap.entry(k), fromStore[i]
		if a.chunks != b.chunks || fmt.Sprint(a.to) != fmt.Sprint(b.to) || fmt.Sprint(a.title) != fmt.Sprint(b.title) {
			return fmt.Sprintf("%+v: snapshot %+v, store %+v", k, *a, *b), len(keys), nil
		}
	}
	return "", len(keys), nil
}

// SnapshotReady waits until r holds the snapshot of its store's graph
// version (WithPassageSnapshot), asking for it as a query would.
func SnapshotReady(ctx context.Context, r *Retriever) error {
	pg := r.store.(store.PassageGraph)
	for {
		v, err := pg.GraphVersion(ctx)
		if err != nil {
			return err
		}
		if r.neighbors.snapshot(v) != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// BuildSnapshotsAlways makes r build passage snapshots even while its
// store's passage graph file is current, as for a store without one.
func BuildSnapshotsAlways(r *Retriever) {
	if r.neighbors.snap != nil {
		r.neighbors.snap.file = nil
	}
}

// SnapshotState says whether r holds a passage snapshot and whether one is
// being built.
func SnapshotState(r *Retriever) (held, building bool) {
	s := r.neighbors.snap
	if s == nil {
		return false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current != nil, s.building
}
