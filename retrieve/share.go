package retrieve

import (
	"context"

	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
)

// WithBackgroundReload makes a long-running retriever keep answering from
// its in-memory path graph (mix's path signal) while a newer one is loaded
// after the store changed (for a server beside `ingest --watch`): only the
// first load blocks. Text and vector search and PageRank over the passage
// graph read the store itself and see a change at once.
func WithBackgroundReload() Option { return func(r *Retriever) { r.background = true } }

// WithConfig returns a retriever with configuration c (zero fields take
// defaults) sharing r's store, models and in-memory caches: the passage
// graph's when c cuts hubs at the same MaxEntityChunks, the reasoning-path
// graph when c asks for the same path signal. A server derives one per
// request from a warm retriever instead of loading the graphs again.
func (r *Retriever) WithConfig(c Config) *Retriever {
	d := *r
	d.cfg = c.withDefaults()
	if d.cfg.Graph.MaxEntityChunks != r.cfg.Graph.MaxEntityChunks {
		d.neighbors = d.newNeighborCache(d.cfg.Graph.MaxEntityChunks)
	}
	switch {
	case d.cfg.Weights.Paths <= 0:
		d.paths, d.pathsErr = nil, nil
	case r.paths == nil || r.cfg.Weights.Paths <= 0 || pathSpecOf(d.cfg) != pathSpecOf(r.cfg):
		d.paths, d.pathsErr = newPathCache(d.cfg.PathSpec, r.background, paths.WithEmbedder(r.emb))
	}
	return &d
}

func pathSpecOf(c Config) string {
	if c.PathSpec == "" {
		return DefaultPathSpec
	}
	return c.PathSpec
}

// Refresh brings the in-memory path graph (mix's path signal) up to date
// with the store, so that the next query need not load it (in background
// mode it starts the reload and returns). Without WithPassageSnapshot the
// passage graph is never loaded whole: PageRank reads it around each
// question's entities, and the first query after a change reads afresh;
// with it, the new version's snapshot starts building. Without a path
// signal, or on a store that cannot hand over its graph, there is nothing
// to refresh.
func (r *Retriever) Refresh(ctx context.Context) error {
	gs, ok := r.store.(store.GraphScanner)
	if !ok {
		return nil
	}
	if r.neighbors.snap != nil {
		// Start reading the passage graph's snapshot of this version now
		// rather than at the next query (WithPassageSnapshot).
		v, err := gs.GraphVersion(ctx)
		if err != nil {
			return err
		}
		r.neighbors.snapshot(v)
	}
	if ks, ok := r.store.(store.KGScanner); ok && r.paths != nil {
		if _, err := r.paths.get(ctx, gs, ks); err != nil {
			return err
		}
	}
	return nil
}
