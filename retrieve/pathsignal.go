package retrieve

import (
	"context"
	"fmt"

	"docgraph/retrieve/paths"
	"docgraph/store"
)

// pathCache keeps mix's reasoning-path retriever: LEGO-GraphRAG path
// retrieval (retrieve/paths) over the store's whole entity graph, loaded
// on first use and again whenever the store's graph version changes.
type pathCache struct {
	spec  paths.Spec
	opts  []paths.Option
	cache *versioned[*paths.Retriever]
}

// newPathCache checks the spec now, so a bad --paths fails before any query.
func newPathCache(spec string, background bool, opts ...paths.Option) (*pathCache, error) {
	if spec == "" {
		spec = DefaultPathSpec
	}
	s, err := paths.ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return &pathCache{spec: s, opts: opts, cache: &versioned[*paths.Retriever]{background: background}}, nil
}

func (c *pathCache) get(ctx context.Context, gs store.GraphScanner, ks store.KGScanner) (*paths.Retriever, error) {
	return c.cache.get(ctx, gs, func(ctx context.Context) (*paths.Retriever, error) {
		kg, err := paths.LoadKG(ctx, ks)
		if err != nil {
			return nil, err
		}
		return paths.New(kg, c.spec, append([]paths.Option{paths.WithProvenance(ks)}, c.opts...)...)
	})
}

// DefaultPathSpec is the modules behind mix's path signal.
const DefaultPathSpec = paths.RecommendedSpec

// rankPathChunks ranks the chunks the paths came from: a chunk scores by
// the best path it supports (1 / rank), ties by more supporting paths.
func rankPathChunks(ps []paths.Path) []scoredID {
	score := map[string]float64{}
	for i, p := range ps {
		for _, c := range p.Chunks() {
			if _, ok := score[c]; !ok {
				score[c] = 1 / float64(i+1)
			} else {
				score[c] += 1e-6 / float64(i+1)
			}
		}
	}
	out := make([]scoredID, 0, len(score))
	for id, s := range score {
		out = append(out, scoredID{id, s})
	}
	sortScored(out)
	return out
}

// pathSignal runs path retrieval from the question's entities and ranks
// the chunks of the paths it finds; a store that cannot hand over its
// graph, or a question naming no entity of it, gives no ranking.
func (r *Retriever) pathSignal(ctx context.Context, question string, seeds []string) ([]scoredID, *paths.Result, error) {
	gs, ok1 := r.store.(store.GraphScanner)
	ks, ok2 := r.store.(store.KGScanner)
	if r.paths == nil || !ok1 || !ok2 || len(seeds) == 0 {
		return nil, nil, nil
	}
	pr, err := r.paths.get(ctx, gs, ks)
	if err != nil {
		return nil, nil, fmt.Errorf("path signal: %w", err)
	}
	res, err := pr.Retrieve(ctx, question, seeds)
	if err != nil {
		return nil, nil, fmt.Errorf("path signal: %w", err)
	}
	return rankPathChunks(res.Paths), res, nil
}
