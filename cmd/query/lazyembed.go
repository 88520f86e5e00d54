package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// openQueryEmbedder opens s's embedder. When its endpoint fails (the
// dimension probe is a call like any other) and the store records the
// same embedder, the query still runs: a retryingEmbedder stands in with
// the store's dimension, fails each embedding until the endpoint answers,
// and retrieval answers from full-text and graph search meanwhile.
func openQueryEmbedder(ctx context.Context, s pipeline.Settings) (embedstore.Embedder, error) {
	emb, err := pipeline.OpenEmbedder(ctx, s)
	var ce *llm.CallError
	if err == nil || ctx.Err() != nil || !errors.As(err, &ce) {
		return emb, err
	}
	held, herr := heldEmbedder(ctx, s)
	if herr != nil || held.Dimension <= 0 || (held.Name != s.Embedder && held.Spec() != s.Embedder) {
		return nil, err
	}
	return &retryingEmbedder{s: s, name: held.Name, dim: held.Dimension, err: err}, nil
}

func heldEmbedder(ctx context.Context, s pipeline.Settings) (store.EmbedderInfo, error) {
	st, err := pipeline.OpenExistingStore(ctx, s, store.Options{ReadOnly: true})
	if err != nil {
		return store.EmbedderInfo{}, err
	}
	defer st.Close()
	return st.Embedder(), nil
}

// retryingEmbedder is an embedder whose endpoint failed when the query
// began. Each embedding tries to open it again, so a server stays usable
// once the endpoint is back; until then the embedding fails fast with the
// last error.
type retryingEmbedder struct {
	s    pipeline.Settings
	name string
	dim  int

	mu   sync.Mutex
	real embedstore.Embedder
	err  error
}

func (e *retryingEmbedder) Name() string   { return e.name }
func (e *retryingEmbedder) Dimension() int { return e.dim }

func (e *retryingEmbedder) get(ctx context.Context) (embedstore.Embedder, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.real != nil {
		return e.real, nil
	}
	if e.err != nil {
		// The failure that made this stand-in is the answer for the query
		// that met it; later calls try the endpoint again.
		err := e.err
		e.err = nil
		return nil, err
	}
	emb, err := pipeline.OpenEmbedder(ctx, e.s)
	if err != nil {
		return nil, err
	}
	if emb.Dimension() != e.dim {
		pipeline.CloseEmbedder(emb)
		return nil, fmt.Errorf("embedder %s: %d dimensions, the store holds %d", e.name, emb.Dimension(), e.dim)
	}
	e.real = emb
	return emb, nil
}

func (e *retryingEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	emb, err := e.get(ctx)
	if err != nil {
		return nil, err
	}
	return emb.EmbedQuery(ctx, text)
}

func (e *retryingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	emb, err := e.get(ctx)
	if err != nil {
		return nil, err
	}
	return emb.EmbedDocuments(ctx, texts)
}

// closeQueryEmbedder releases what openQueryEmbedder opened.
func closeQueryEmbedder(emb embedstore.Embedder) {
	if r, ok := emb.(*retryingEmbedder); ok {
		r.mu.Lock()
		emb = r.real
		r.mu.Unlock()
		if emb == nil {
			return
		}
	}
	pipeline.CloseEmbedder(emb)
}
