package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/store"
)

// OpenQueryEmbedder opens s's embedder. When its endpoint fails (the
// dimension probe is a call like any other) and the store records the
// same embedder, the query still runs: a retryingEmbedder stands in with
// the store's dimension, fails each embedding until the endpoint answers,
// and retrieval answers from full-text and graph search meanwhile. The
// probe gets the wait of a query's embedding (retrieve.EmbedWait): an
// endpoint that never answers must not hold the query to its deadline
// before retrieval has begun.
func OpenQueryEmbedder(ctx context.Context, s pipeline.Settings) (embedstore.Embedder, error) {
	var emb embedstore.Embedder
	err := retrieve.WithinEmbedWait(ctx, func(ctx context.Context) (err error) {
		emb, err = pipeline.OpenEmbedder(ctx, s)
		return err
	})
	var ce *llm.CallError
	if err == nil || ctx.Err() != nil || !errors.As(err, &ce) {
		return emb, err
	}
	held, herr := heldEmbedder(ctx, s)
	if herr != nil || held.Dimension <= 0 || (held.Name != s.Embedder && held.Spec() != s.Embedder) {
		return nil, err
	}
	r := &retryingEmbedder{s: s, name: held.Name, dim: held.Dimension, err: err}
	var slow *retrieve.EmbedWaitError
	if errors.As(err, &slow) {
		r.silent(err)
	}
	return r, nil
}

// heldEmbedder is the embedder the store at s records.
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
	// An endpoint that did not answer at all is not asked again before
	// silentUntil: each try would cost a whole embedding wait, and the
	// embeddings of one query (hybrid makes two) and the queries right
	// after it would each spend it. silentErr is what they get meanwhile.
	silentUntil time.Time
	silentErr   error
}

// silentRetry is how long an embedding endpoint that did not answer is
// left alone.
const silentRetry = 30 * time.Second

func (e *retryingEmbedder) Name() string   { return e.name }
func (e *retryingEmbedder) Dimension() int { return e.dim }

// silent notes that the endpoint did not answer; e.mu held or e not yet shared.
func (e *retryingEmbedder) silent(err error) {
	e.silentUntil = time.Now().Add(silentRetry)
	e.silentErr = err
}

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
	if time.Now().Before(e.silentUntil) {
		return nil, e.silentErr
	}
	start := time.Now()
	emb, err := pipeline.OpenEmbedder(ctx, e.s)
	if err != nil {
		if ctx.Err() != nil {
			// The embedding's wait (or the query) ended the probe: the
			// endpoint is silent, not failing.
			e.silent(&retrieve.EmbedWaitError{Wait: time.Since(start), Err: err})
		}
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

// CloseQueryEmbedder releases what OpenQueryEmbedder opened.
func CloseQueryEmbedder(emb embedstore.Embedder) {
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
