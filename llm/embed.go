package llm

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Embedder is an embedding model reached through langchaingo, with the same
// limits, retries, cache and counters as Client. It implements
// embedstore.Embedder. Safe for concurrent use.
type Embedder struct {
	client   embeddings.EmbedderClient
	provider string
	endpoint string // cacheEndpoint of the base URL, for cache keys
	model    string
	eng      *engine
	cache    *cache
	batch    int
	dim      int
}

// NewEmbedder builds the embedding model that spec names, e.g.
// "openai:text-embedding-3-small" or "ollama:nomic-embed-text", with the
// same environment variables as New. It embeds a probe text once to learn
// the dimension (answered from the cache on later runs).
func NewEmbedder(ctx context.Context, spec string, opts ...Option) (*Embedder, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	hc := newHTTPClient(cfg.concurrency, cfg.responseCap(true))
	var client embeddings.EmbedderClient
	switch s.Provider {
	case "openai":
		o, err := openaiOptions(s, &cfg, hc)
		if err != nil {
			return nil, err
		}
		m, err := openai.New(append(o, openai.WithEmbeddingModel(s.Model))...)
		if err != nil {
			return nil, fmt.Errorf("embedder %s: %s", s, cfg.redactor().redact(err.Error()))
		}
		client = m
	case "ollama":
		o, err := ollamaOptions(s, &cfg, hc)
		if err != nil {
			return nil, err
		}
		m, err := ollama.New(o...)
		if err != nil {
			return nil, fmt.Errorf("embedder %s: %s", s, cfg.redactor().redact(err.Error()))
		}
		client = m
	default:
		return nil, fmt.Errorf("embedder %s: %w", s, errNoEmbeddings)
	}
	return newEmbedder(ctx, client, s, cfg)
}

// WrapEmbedder puts the Embedder's limits, retries and cache around any
// langchaingo embedding client (for instance one from embeddings/... or a
// test double); spec names it, with the base URL WithBaseURL gives in
// cache keys (none: the keys have no endpoint).
func WrapEmbedder(ctx context.Context, client embeddings.EmbedderClient, spec Spec, opts ...Option) (*Embedder, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	cfg.endpoint = cfg.baseURL
	return newEmbedder(ctx, client, spec, cfg)
}

// probeText is embedded once to learn the model's dimension.
const probeText = "docgraph dimension probe"

func newEmbedder(ctx context.Context, client embeddings.EmbedderClient, s Spec, cfg config) (*Embedder, error) {
	e := &Embedder{
		client:   client,
		provider: s.Provider,
		endpoint: cacheEndpoint(cfg.endpoint),
		model:    s.Model,
		eng:      newEngine(s.Provider, s.Model, cfg),
		batch:    cfg.batchSize,
	}
	if cfg.cachePath != "" {
		c, err := openCache(cfg.cachePath)
		if err != nil {
			return nil, err
		}
		e.cache = c
	}
	v, err := e.EmbedQuery(ctx, probeText)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("embedder %s: probing the dimension: %w", s, err)
	}
	if len(v) == 0 {
		e.Close()
		return nil, fmt.Errorf("embedder %s: probe returned an empty vector", s)
	}
	e.dim = len(v)
	return e, nil
}

// Name is the embedder's spec, "provider:model".
func (e *Embedder) Name() string { return e.provider + ":" + e.model }

// Dimension is the length of the vectors the model returns.
func (e *Embedder) Dimension() int { return e.dim }

// Stats returns the counters so far; CacheHits counts texts, Calls requests.
func (e *Embedder) Stats() Stats { return e.eng.stats.snapshot() }

// Close releases the cache.
func (e *Embedder) Close() error {
	if e.cache == nil {
		return nil
	}
	return e.cache.close()
}

// EmbedQuery embeds one text.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := e.EmbedDocuments(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}

// EmbedDocuments embeds texts in batches, taking what it can from the cache
// text by text, so a re-run with different batch boundaries still hits.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []int
	for i, t := range texts {
		if v, ok := e.cached(ctx, t); ok {
			out[i] = v
			e.eng.stats.cacheHits.Add(1)
			continue
		}
		missing = append(missing, i)
	}
	for start := 0; start < len(missing); start += e.batch {
		idx := missing[start:min(start+e.batch, len(missing))]
		batch := make([]string, len(idx))
		tokens := 0
		for j, i := range idx {
			// Newlines hurt some embedding models and never help retrieval.
			batch[j] = strings.ReplaceAll(texts[i], "\n", " ")
			tokens += EstimateTokens(batch[j])
		}
		var vecs [][]float32
		err := e.eng.run(ctx, tokens, func(ctx context.Context) error {
			v, err := e.client.CreateEmbedding(ctx, batch)
			if err == nil && len(v) != len(batch) {
				err = fmt.Errorf("got %d vectors for %d texts", len(v), len(batch))
			}
			vecs = v
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("embedder %s: %w", e.Name(), err)
		}
		e.eng.stats.promptTokens.Add(int64(tokens))
		for j, i := range idx {
			if e.dim != 0 && len(vecs[j]) != e.dim {
				return nil, fmt.Errorf("embedder %s: vector of length %d, want %d", e.Name(), len(vecs[j]), e.dim)
			}
			out[i] = vecs[j]
			e.store(ctx, texts[i], vecs[j])
		}
	}
	return out, nil
}

func (e *Embedder) cached(ctx context.Context, text string) ([]float32, bool) {
	if e.cache == nil {
		return nil, false
	}
	b, ok, err := e.cache.get(ctx, embedKey(e.provider, e.endpoint, e.model, text))
	if err != nil || !ok {
		if err != nil {
			e.logCache(ctx, err)
		}
		return nil, false
	}
	v, err := decodeVector(b)
	if err != nil || len(v) == 0 || (e.dim != 0 && len(v) != e.dim) {
		return nil, false
	}
	return v, true
}

func (e *Embedder) store(ctx context.Context, text string, v []float32) {
	if e.cache == nil {
		return
	}
	if err := e.cache.put(ctx, embedKey(e.provider, e.endpoint, e.model, text), "embedding", e.provider, e.model, encodeVector(v)); err != nil {
		e.logCache(ctx, err)
	}
}

func (e *Embedder) logCache(ctx context.Context, err error) {
	if l := e.eng.cfg.logger; l != nil {
		l.LogAttrs(ctx, slog.LevelWarn, "embedding cache", slog.String("model", e.Name()), slog.String("error", err.Error()))
	}
}

// Waits reports what the embedder's calls are doing now (see Client.Waits).
func (e *Embedder) Waits() Waits { return e.eng.waits() }
