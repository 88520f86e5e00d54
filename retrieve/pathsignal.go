package retrieve

import (
	"context"
	"fmt"
	"sync"

	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
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

// versioned keeps one value built from the store's graph, rebuilding it
// when GraphVersion moves. Concurrent queries share one build. In
// background mode only the first build blocks: after a change, callers get
// the previous value while one goroutine builds the new one, so a
// long-running server never stalls on a reload (and a chunk the old value
// names but the store no longer holds is dropped when passages are filled).
type versioned[T any] struct {
	mu         sync.Mutex
	built      bool
	version    string
	val        T
	background bool
	building   bool // a background build is under way
}

func (c *versioned[T]) get(ctx context.Context, gs store.GraphScanner, build func(context.Context) (T, error)) (T, error) {
	var zero T
	version, err := gs.GraphVersion(ctx)
	if err != nil {
		return zero, fmt.Errorf("graph version: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built && c.version == version {
		return c.val, nil
	}
	if c.background && c.built {
		if !c.building {
			c.building = true
			// The build outlives the query that noticed the change.
			go c.rebuild(context.WithoutCancel(ctx), version, build)
		}
		return c.val, nil
	}
	v, err := build(ctx)
	if err != nil {
		return zero, err
	}
	c.val, c.version, c.built = v, version, true
	return v, nil
}

// rebuild is a background build; a failed one leaves the old value for the
// next change (or query) to try again.
func (c *versioned[T]) rebuild(ctx context.Context, version string, build func(context.Context) (T, error)) {
	v, err := build(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.building = false
	if err == nil {
		c.val, c.version = v, version
	}
}
