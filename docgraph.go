// Package docgraph turns a folder of documents into a knowledge graph and
// answers questions over it (GraphRAG), as a library for Go programs.
//
// Open a store (an embedded SQLite file by default, or a Neo4j server),
// ingest files into it, and query it:
//
//	g, err := docgraph.Open(ctx, "sqlite://./notes.db")
//	if err != nil { ... }
//	defer g.Close()
//	if _, err := g.Ingest(ctx, "notes/"); err != nil { ... } // no shell expands ~ here
//	res, err := g.Query(ctx, "Who designed Go?", docgraph.WithTopK(3))
//	for _, p := range res.Passages {
//		fmt.Println(p.DocPath, p.Score)
//	}
//
// Without WithLLM everything runs offline: a built-in entity extractor, a
// hashing embedder and extractive results (passages, entities, relations).
// With WithLLM, extraction is LLM loop-NER and Query also answers, citing
// its passages. Graph.Handler is the HTTP API (and the Model Context
// Protocol server at /mcp) to mount in a server of your own. The ingest and query commands are this package's thin
// shells: every setting they expose is an Option here (WithSettings takes
// them all at once).
package docgraph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/server"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
	// Both backends register their URL schemes with store.Open.
	_ "github.com/docgraph/docgraph/store/neo4j"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// Graph is an opened store with the models that build and read it. Its
// methods are safe for concurrent use, except Close.
type Graph struct {
	settings pipeline.Settings
	models   *pipeline.Models
	st       store.Store
	pipe     *pipeline.Pipeline
	ret      *retrieve.Retriever
	cfg      config

	tokOnce sync.Once
	tok     *splitter.Tokenizer
	tokErr  error

	engOnce sync.Once
	eng     *server.Engine
	engErr  error
}

// config is what the Options set.
type config struct {
	settings pipeline.Settings
	progress func(FileResult)
	retrieve retrieve.Config
}

// Option configures Open.
type Option func(*config)

// WithSettings replaces every setting at once, as the commands fill them
// from their flags; Options after it change single fields.
func WithSettings(s pipeline.Settings) Option { return func(c *config) { c.settings = s } }

// WithEmbedder chooses the embedder: "hash" or "hash:DIM" (offline, the
// default), "openai:MODEL" or "ollama:MODEL". An existing store keeps the
// embedder it was built with unless this option is given.
func WithEmbedder(spec string) Option { return func(c *config) { c.settings.Embedder = spec } }

// WithLLM chooses the language model for extraction, summaries and
// answers: "openai:MODEL", "ollama:MODEL" or "anthropic:MODEL", with keys
// and endpoints from the provider's environment variables. Without it
// everything runs offline.
func WithLLM(spec string) Option { return func(c *config) { c.settings.LLM = spec } }

// WithChunkTokens sets the chunk size in tokens (default 768).
func WithChunkTokens(n int) Option { return func(c *config) { c.settings.ChunkTokens = n } }

// WithConcurrency sets how many documents are processed at once (default 4).
func WithConcurrency(n int) Option { return func(c *config) { c.settings.Concurrency = n } }

// WithProgress calls fn once for every file an Ingest or Watch has dealt
// with (added, updated, unchanged, failed, ...). fn must be safe for
// concurrent use.
func WithProgress(fn func(FileResult)) Option { return func(c *config) { c.progress = fn } }

// WithRetrieval sets the retrieval limits and weights Query uses (zero
// fields: the defaults).
func WithRetrieval(rc retrieve.Config) Option { return func(c *config) { c.retrieve = rc } }

// FileResult is what happened to one file during an ingest.
type FileResult = pipeline.FileResult

// IngestSummary is what an ingest did, file by file and in total.
type IngestSummary = pipeline.Summary

// DefaultSettings are the settings the ingest and query commands start
// from before their flags: the embedded store, the offline models.
func DefaultSettings() pipeline.Settings {
	var s pipeline.Settings
	fs := pflag.NewFlagSet("defaults", pflag.ContinueOnError)
	s.AddStoreFlags(fs)
	s.AddIngestFlags(fs)
	s.AddLLMFlags(fs)
	return s
}

// Open opens the store at storeURL ("sqlite://PATH", a plain path, or
// "neo4j://HOST:7687" with NEO4J_USER and NEO4J_PASSWORD in the
// environment), creating an embedded store that does not exist yet, with
// the embedder and models the options name. Close releases it.
func Open(ctx context.Context, storeURL string, opts ...Option) (*Graph, error) {
	cfg := config{settings: DefaultSettings()}
	explicitEmbedder := false
	for _, o := range opts {
		before := cfg.settings.Embedder
		o(&cfg)
		if cfg.settings.Embedder != before {
			explicitEmbedder = true
		}
	}
	s := cfg.settings
	if strings.TrimSpace(storeURL) != "" {
		s.Store = storeURL
	}
	models, st, _, err := pipeline.OpenForWrite(ctx, &s, explicitEmbedder)
	if err != nil {
		return nil, err
	}
	p, err := pipeline.New(s, models, st)
	if err != nil {
		st.Close()
		models.Close()
		return nil, err
	}
	var chat llms.Model
	if models.Chat != nil {
		chat = models.Chat // not a typed nil in the interface
	}
	g := &Graph{settings: s, models: models, st: st, pipe: p, cfg: cfg}
	g.ret = retrieve.New(st, models.Embedder, retrieve.WithConfig(cfg.retrieve), retrieve.WithModel(chat))
	return g, nil
}

// Close releases the store and the models. Index files of an embedded
// store are brought up to date first.
func (g *Graph) Close() error {
	return errors.Join(g.st.Close(), g.models.Close())
}

// Store is the opened store, for what the Graph does not wrap (status,
// export, deleting documents).
func (g *Graph) Store() store.Store { return g.st }

// Ingest brings the store up to date with the files under paths (files
// and folders, recursively): new and changed files are loaded, split,
// extracted and written, unchanged ones skipped. A file that fails is
// reported in the summary and never stops the others; the error is for
// the run itself (ctx cancelled, the store unusable, a model that stopped
// answering). Cancelling ctx rolls the documents in flight back. Symbolic
// links leading outside paths are passed over unread unless the settings
// say FollowOutsideLinks (see pipeline.Walk).
func (g *Graph) Ingest(ctx context.Context, paths ...string) (*IngestSummary, error) {
	if len(paths) == 0 {
		return nil, errors.New("docgraph: ingest: no paths")
	}
	p := *g.pipe
	if g.cfg.progress != nil {
		p.Progress = progressFunc(g.cfg.progress)
	}
	sum, err := p.Ingest(ctx, paths, pipeline.Options{})
	if sum != nil {
		sum.LLM = g.models.Stats()
	}
	return sum, err
}

// Watch ingests paths, then keeps applying every change under them (new,
// changed, renamed and deleted files) until ctx ends; each change is
// reported through WithProgress. It returns nil when ctx ends.
func (g *Graph) Watch(ctx context.Context, paths ...string) error {
	if len(paths) == 0 {
		return errors.New("docgraph: watch: no paths")
	}
	p := *g.pipe
	var opts []pipeline.WatchOption
	if fn := g.cfg.progress; fn != nil {
		p.Progress = progressFunc(fn)
		opts = append(opts, pipeline.WithOnChange(fn))
	}
	err := p.Watch(ctx, paths, opts...)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// progressFunc adapts a callback to pipeline.Progress.
type progressFunc func(FileResult)

func (f progressFunc) Start(int)         {}
func (f progressFunc) File(r FileResult) { f(r) }

// Result is what Query found: the ranked passages (each naming its
// document's file in DocPath), the entities and relations behind them,
// and with an LLM the answer citing the passages as [n].
type Result struct {
	*retrieve.Result
	// Answer is the model's answer; empty without an LLM.
	Answer string `json:"answer,omitempty"`
	// Sources are the passages the answer was given, numbered as it cites
	// them.
	Sources []retrieve.Source `json:"sources,omitempty"`
}

// QueryOption configures one Query.
type QueryOption func(*queryConfig)

type queryConfig struct {
	mode   string
	topK   int
	stream io.Writer
	noLLM  bool
}

// Modes lists the retrieval modes WithMode accepts, the default first.
func Modes() []string { return retrieve.Modes() }

// WithMode chooses the retrieval mode: "mix" (the default), "naive",
// "local", "global", "hybrid" or "logic".
func WithMode(mode string) QueryOption { return func(q *queryConfig) { q.mode = mode } }

// WithTopK sets how many passages are returned (default 15).
func WithTopK(k int) QueryOption { return func(q *queryConfig) { q.topK = k } }

// WithStream writes the answer to w as the model produces it (with an LLM).
func WithStream(w io.Writer) QueryOption { return func(q *queryConfig) { q.stream = w } }

// WithoutAnswer retrieves only, even with an LLM configured.
func WithoutAnswer() QueryOption { return func(q *queryConfig) { q.noLLM = true } }

// Query retrieves the passages, entities and relations for question and,
// with an LLM, answers it from them.
func (g *Graph) Query(ctx context.Context, question string, opts ...QueryOption) (*Result, error) {
	qc := queryConfig{mode: retrieve.ModeMix}
	for _, o := range opts {
		o(&qc)
	}
	if strings.TrimSpace(question) == "" {
		return nil, errors.New("docgraph: query: empty question")
	}
	if !slices.Contains(retrieve.Modes(), qc.mode) {
		return nil, fmt.Errorf("docgraph: query: unknown mode %q (available: %s)", qc.mode, strings.Join(retrieve.Modes(), ", "))
	}
	r := g.ret
	if qc.topK > 0 {
		c := r.Config()
		c.TopK = qc.topK
		r = r.WithConfig(c)
	}
	res, err := r.Retrieve(ctx, question, qc.mode)
	if err != nil {
		return nil, err
	}
	out := &Result{Result: res}
	if g.models.Chat == nil || qc.noLLM || len(res.Passages) == 0 {
		return out, nil
	}
	tok, err := g.tokenizer()
	if err != nil {
		return nil, err
	}
	c, err := retrieve.Assemble(res, tok, retrieve.DefaultBudget(), "")
	if err != nil {
		return nil, err
	}
	a, err := retrieve.Answer(ctx, g.models.Chat, c, qc.stream)
	if err != nil {
		return out, fmt.Errorf("docgraph: answer: %w", err)
	}
	out.Answer, out.Sources = a.Text, a.Sources
	return out, nil
}

// tokenizer loads the context assembly's tokenizer on the first answer.
func (g *Graph) tokenizer() (*splitter.Tokenizer, error) {
	g.tokOnce.Do(func() { g.tok, g.tokErr = splitter.NewTokenizer("") })
	return g.tok, g.tokErr
}

// Stats are the LLM's and provider embedder's counters so far (calls,
// cache hits, tokens); nil when everything ran offline.
func (g *Graph) Stats() *pipeline.ModelStats { return g.models.Stats() }

// Waits are what the model calls in flight are doing now (see llm.Waits).
func (g *Graph) Waits() []llm.Waits { return g.models.Waits() }
