package retrieve

import (
	"context"

	"docgraph/retrieve/paths"
	"docgraph/store"
)

// WithBackgroundReload makes a long-running retriever keep answering from
// its in-memory graph while a newer one is loaded after the store changed
// (for a server beside `ingest --watch`): only the first load blocks. Text
// and vector search read the store itself and see a change at once.
func WithBackgroundReload() Option { return func(r *Retriever) { r.background = true } }

// WithConfig returns a retriever with configuration c (zero fields take
// defaults) sharing r's store, models and in-memory caches: the passage
// graph when c shapes it as r's does, the reasoning-path graph when c asks
// for the same path signal. A server derives one per request from a warm
// retriever instead of loading the graph again.
func (r *Retriever) WithConfig(c Config) *Retriever {
	d := *r
	d.cfg = c.withDefaults()
	if d.cfg.Graph != r.cfg.Graph {
		d.graph = &versioned[*passageGraph]{background: r.background}
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

// Refresh brings the in-memory graphs up to date with the store, so that
// the next query need not (in background mode it starts the reload and
// returns). Stores that cannot hand over their graph have nothing to refresh.
func (r *Retriever) Refresh(ctx context.Context) error {
	gs, ok := r.store.(store.GraphScanner)
	if !ok {
		return nil
	}
	if _, err := r.graph.get(ctx, gs, func(ctx context.Context) (*passageGraph, error) {
		return buildGraph(ctx, r.store, gs, r.cfg.Graph)
	}); err != nil {
		return err
	}
	if ks, ok := r.store.(store.KGScanner); ok && r.paths != nil {
		if _, err := r.paths.get(ctx, gs, ks); err != nil {
			return err
		}
	}
	return nil
}
