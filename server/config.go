package server

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
)

// Config is how queries retrieve and answer: the values every request
// starts from before its own fields override them. The query commands
// fill it from their flags; DefaultConfig is what they start from.
type Config struct {
	// Retrieval are the limits and weights of retrieval.
	Retrieval retrieve.Config
	// LLM is the chat model as provider:model; empty runs offline (no
	// answers, keywords from the text).
	LLM string
	// MaxContextTokens bounds the prompt the model gets, in tokens.
	MaxContextTokens int
	// ResponseType is the answer's shape ("" for a few paragraphs).
	ResponseType string
	// Client are the limits, timeout, retries and cache of model calls.
	Client pipeline.LLMSettings
	// Logger hears about model calls being retried (nil: silent).
	Logger *slog.Logger
	// Paths configures path mode (LEGO-GraphRAG reasoning paths).
	Paths PathConfig
}

// DefaultConfig is the configuration the query commands start from
// before their flags.
func DefaultConfig() Config {
	var c Config
	c.Retrieval = retrieve.DefaultConfig()
	c.Retrieval.PathSpec = retrieve.DefaultPathSpec
	c.MaxContextTokens = retrieve.DefaultBudget().MaxTokens
	fs := pflag.NewFlagSet("defaults", pflag.ContinueOnError)
	c.Client.AddClientFlags(fs)
	c.Paths = DefaultPathConfig()
	return c
}

// Budget is the context budget the configuration asks for.
func (c Config) Budget() retrieve.Budget {
	b := retrieve.DefaultBudget()
	b.MaxTokens = c.MaxContextTokens
	return b
}

// model opens the configured LLM with s's client settings (limits,
// timeout, retries, cache), or returns nil without one.
func (c Config) model(s pipeline.Settings) (*llm.Client, error) {
	if strings.TrimSpace(c.LLM) == "" {
		return nil, nil
	}
	opts := s.ClientOptions()
	if c.Logger != nil {
		opts = append(opts, llm.WithLogger(c.Logger))
	}
	client, err := llm.New(c.LLM, opts...)
	if err != nil {
		return nil, fmt.Errorf("--llm %s: %w", c.LLM, err)
	}
	return client, nil
}

// OpenModels builds the embedder s names (a provider's caches beside
// s.Store) and the chat model c names (nil without one), both with c's
// client settings; done releases both.
func (c Config) OpenModels(ctx context.Context, s pipeline.Settings) (emb embedstore.Embedder, model llms.Model, done func(), err error) {
	s.LLMSettings = c.Client
	// A query whose embedder fails answers from full-text and graph search
	// (retrieve's embedOrWarn), so one retry is worth waiting for, not six.
	es := s
	es.Retries = 1
	emb, err = OpenQueryEmbedder(ctx, es)
	if err != nil {
		return nil, nil, nil, err
	}
	client, err := c.model(s)
	if err != nil {
		CloseQueryEmbedder(emb)
		return nil, nil, nil, err
	}
	done = func() { CloseQueryEmbedder(emb) }
	if client != nil {
		model = client
		done = func() { client.Close(); CloseQueryEmbedder(emb) }
	}
	return emb, model, done, nil
}

// OpenQueryStore opens an existing store read-only, with the embedder it
// holds unless embedderSet says s names one, and c's model; done closes
// all three. longLived is for a server (see store.Options.LongLived).
func OpenQueryStore(ctx context.Context, s pipeline.Settings, c Config, embedderSet, longLived bool) (embedstore.Embedder, llms.Model, store.Store, func(), error) {
	spec, err := pipeline.AdoptEmbedder(ctx, s, embedderSet)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	s.Embedder = spec
	emb, model, done, err := c.OpenModels(ctx, s)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	st, err := pipeline.OpenExistingStore(ctx, s, store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		// The merger makes again the vectors a store keeps no copy of.
		Merger:    pipeline.NewMerger(emb),
		ReadOnly:  true,
		LongLived: longLived,
	})
	if err != nil {
		done()
		return nil, nil, nil, nil, err
	}
	return emb, model, st, func() { st.Close(); done() }, nil
}

// PathConfig is path retrieval's configuration (query --mode path and
// the MetaQA evaluation). Zero numbers take path retrieval's defaults
// where DefaultPathConfig gives one.
type PathConfig struct {
	// Specs are the path modules, e.g. "se=ppr,pf=beam:bm25,pr=emb"
	// (default paths.RecommendedSpec); a query uses the first.
	Specs []string
	// MaxEnt is how many entities subgraph extraction keeps.
	MaxEnt int
	// MaxHop is the longest path, in relations.
	MaxHop int
	// BeamWidth and MaxBeam are beam search's width and the most paths
	// dynamic pruning keeps per step (0: 16 times the width).
	BeamWidth, MaxBeam int
	// TopK is how many paths refinement keeps.
	TopK int
	// Damping is PPR's and RWR's probability of following an edge.
	Damping float64
	// PushEps is approximate PPR's residual threshold per unit of degree.
	PushEps float64
	// Triple scores only each step's new triple in beam search.
	Triple bool
	// Dynamic keeps beam candidates above the step's mean score.
	Dynamic bool
	// PerTarget is the shortest paths kept per target entity, MaxPaths the
	// candidate paths per seed entity.
	PerTarget, MaxPaths int
	// PerEnd is the refined paths kept per end entity (0: all).
	PerEnd int
	// Filter is "" or "fi" (GraphRAG-FI, needs a model), with FIThreshold
	// the coarse filter's share of the score range and FICoarse the most
	// paths it passes to the model.
	Filter      string
	FIThreshold float64
	FICoarse    int
}

// Path retrieval's defaults where a shared setting has another meaning's
// default (a query's top-k counts passages, its damping is mix's).
const (
	DefaultPathTopK    = 64
	DefaultPathDamping = 0.8
)

// DefaultPathConfig is path retrieval's default configuration.
func DefaultPathConfig() PathConfig {
	return PathConfig{MaxEnt: 1000, MaxHop: 3, BeamWidth: 8, TopK: DefaultPathTopK, Damping: DefaultPathDamping,
		PushEps: 5e-6, PerTarget: 8, MaxPaths: 10000, PerEnd: 1, FIThreshold: 0.5, FICoarse: 40}
}

// ParsedSpecs are the path specs parsed, the recommended one when none
// is given.
func (c PathConfig) ParsedSpecs() ([]paths.Spec, error) {
	texts := c.Specs
	if len(texts) == 0 {
		texts = []string{paths.RecommendedSpec}
	}
	out := make([]paths.Spec, len(texts))
	for i, t := range texts {
		s, err := paths.ParseSpec(t)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Options are the path retriever's options for c, with emb and model
// (nil: none).
func (c PathConfig) Options(emb embeddings.Embedder, model llms.Model) ([]paths.Option, error) {
	opts := []paths.Option{
		paths.WithMaxEnt(c.MaxEnt), paths.WithMaxHop(c.MaxHop), paths.WithBeamWidth(c.BeamWidth, c.MaxBeam),
		paths.WithTopK(c.TopK), paths.WithDamping(c.Damping), paths.WithPushEpsilon(c.PushEps),
		paths.WithPathLimits(c.PerTarget, c.MaxPaths), paths.WithPerEnd(c.PerEnd),
		paths.WithEmbedder(emb),
	}
	if c.Triple {
		opts = append(opts, paths.WithTripleScoring(true))
	}
	if c.Dynamic {
		opts = append(opts, paths.WithDynamicPruning(true))
	}
	if model != nil {
		opts = append(opts, paths.WithLLM(model, 0))
	}
	switch c.Filter {
	case "":
	case "fi":
		opts = append(opts, paths.WithFI(c.FIThreshold, c.FICoarse))
	default:
		return nil, fmt.Errorf("--filter %q: unknown filter (have fi)", c.Filter)
	}
	return opts, nil
}
