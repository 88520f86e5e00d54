package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// A Session is one query run start to end, as `query` runs it: unlike an
// Engine it opens the store for one question, and hands each stage's
// result back so that the caller prints it as it comes (a plan before the
// answer that follows it). Its stages report the step they are at to the
// Steps under their context.

// Steps follows one query run: the step it is at and the model calls it
// waits for, so that a run stopped by its deadline can say what it was
// waiting for. It is safe for concurrent use.
type Steps struct {
	mu   sync.Mutex
	step string
	// asking is what the model calls in flight ask for (retrieve's
	// ModelCallHook), cut what those that ended after the deadline did.
	asking, cut []string
	expired     func() bool
}

// NewSteps is a tracker for a run whose deadline has passed when expired
// says so (nil: never).
func NewSteps(expired func() bool) *Steps { return &Steps{expired: expired} }

type stepsKey struct{}

// WithSteps has Step and retrieve's model calls under ctx report to s.
func WithSteps(ctx context.Context, s *Steps) context.Context {
	ctx = context.WithValue(ctx, stepsKey{}, s)
	return retrieve.WithModelCallHook(ctx, s.Call)
}

// Step notes the step the run under ctx has reached (nothing without
// WithSteps).
func Step(ctx context.Context, step string) {
	if s, ok := ctx.Value(stepsKey{}).(*Steps); ok {
		s.Set(step)
	}
}

// Set notes the step the run has reached.
func (s *Steps) Set(step string) {
	s.mu.Lock()
	s.step = step
	s.mu.Unlock()
}

// Call notes a model call asking for what, until end is called; it is
// retrieve's ModelCallHook.
func (s *Steps) Call(what string) (end func()) {
	s.mu.Lock()
	s.asking = append(s.asking, what)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if i := slices.Index(s.asking, what); i >= 0 {
			s.asking = slices.Delete(s.asking, i, i+1)
		}
		// The call has ended by the time the deadline's error is read, so
		// the calls the deadline cut are kept apart.
		if s.expired != nil && s.expired() && !slices.Contains(s.cut, what) {
			s.cut = append(s.cut, what)
		}
	}
}

// Snapshot is the step the run is at and what the model calls in flight,
// or cut by the deadline, ask for: sorted, each once (calls side by side
// end in any order).
func (s *Steps) Snapshot() (step string, waitingFor []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range append(slices.Clone(s.cut), s.asking...) {
		if !slices.Contains(waitingFor, w) {
			waitingFor = append(waitingFor, w)
		}
	}
	slices.Sort(waitingFor)
	return s.step, waitingFor
}

// Session is what one query opens: the store (read-only), the embedder,
// the chat model (nil without one) and a retriever over them. Close
// releases them.
type Session struct {
	// Store is the store, opened read-only.
	Store store.Store
	// Embedder is the store's own embedder unless the settings chose one.
	Embedder embedstore.Embedder
	// Model is the chat model, nil without one (no answers).
	Model llms.Model
	// Retriever retrieves over Store with the configuration's settings.
	Retriever *retrieve.Retriever

	storeURL string
	cfg      Config
	tok      chan loadedTokenizer
	done     func()
}

type loadedTokenizer struct {
	tok *splitter.Tokenizer
	err error
}

// OpenSession opens the existing store s names read-only, with the
// embedder it holds unless embedderSet says s names one, and the model
// cfg names.
func OpenSession(ctx context.Context, s pipeline.Settings, cfg Config, embedderSet bool) (*Session, error) {
	// The tokenizer is needed only to assemble the context: load its ranks
	// on the other core while the store opens and retrieval runs.
	tokc := make(chan loadedTokenizer, 1)
	go func() {
		tok, err := splitter.NewTokenizer("")
		tokc <- loadedTokenizer{tok, err}
	}()
	emb, model, st, done, err := OpenQueryStore(ctx, s, cfg, embedderSet, false)
	if err != nil {
		return nil, err
	}
	r := retrieve.New(st, emb, retrieve.WithConfig(cfg.Retrieval), retrieve.WithModel(model))
	return &Session{Store: st, Embedder: emb, Model: model, Retriever: r, storeURL: s.Store, cfg: cfg, tok: tokc, done: done}, nil
}

// Close releases the store and the models.
func (s *Session) Close() { s.done() }

// tokenizer waits for the tokenizer OpenSession started loading.
func (s *Session) tokenizer() (*splitter.Tokenizer, error) {
	lt := <-s.tok
	s.tok <- lt
	return lt.tok, lt.err
}

// Retrieve runs mode's retrieval for question.
func (s *Session) Retrieve(ctx context.Context, question, mode string) (*retrieve.Result, error) {
	Step(ctx, "retrieval")
	return s.Retriever.Retrieve(ctx, question, mode)
}

// Assemble is the context the model gets from res, asking for answers of
// responseType, timed as "context".
func (s *Session) Assemble(ctx context.Context, res *retrieve.Result, responseType string) (*retrieve.Context, error) {
	tok, err := s.tokenizer()
	if err != nil {
		return nil, err
	}
	Step(ctx, "context assembly")
	t := time.Now()
	c, err := retrieve.Assemble(res, tok, s.cfg.Budget(), responseType)
	if err != nil {
		return nil, err
	}
	res.Timings["context"] = time.Since(t)
	return c, nil
}

// Context is the context the model gets from res, asking for answers of
// responseType, as one step of a larger one (untimed).
func (s *Session) Context(res *retrieve.Result, responseType string) (*retrieve.Context, error) {
	tok, err := s.tokenizer()
	if err != nil {
		return nil, err
	}
	return retrieve.Assemble(res, tok, s.cfg.Budget(), responseType)
}

// Logic is logic-form retrieval (HuixiangDou2), its pre-check, and the
// context of the answer: from the logic form or, when it cannot answer,
// from mix.
func (s *Session) Logic(ctx context.Context, question string) (*retrieve.LogicOutcome, error) {
	tok, err := s.tokenizer()
	if err != nil {
		return nil, err
	}
	Step(ctx, "logic-form retrieval")
	return s.Retriever.PrepareLogic(ctx, question, retrieve.AnswerSetup{Tokens: tok, Budget: s.cfg.Budget(), ResponseType: s.cfg.ResponseType})
}

// Integrate is GraphRAG-FI's integration of the model's answer to the
// retrieved prompt msgs with its own answer to question; timings hears
// how long it took, as "integrate".
func (s *Session) Integrate(ctx context.Context, msgs []llms.MessageContent, question string, o retrieve.IntegrateOptions, timings map[string]time.Duration) (*retrieve.Integration, error) {
	t := time.Now()
	Step(ctx, "integration")
	in, err := retrieve.Integrate(ctx, s.Model, msgs, question, o)
	if err != nil {
		return nil, err
	}
	timings["integrate"] = time.Since(t)
	return in, nil
}

// PathRun is path mode's retrieval: the paths, split into the priority
// and additional lists of the answer prompt when a filter ranked them.
type PathRun struct {
	// Result is the path retriever's result: seeds, paths, timings.
	Result *paths.Result
	// Priority and Additional are the prompt's two lists; without a
	// filter Priority is every path and Additional is nil.
	Priority, Additional []paths.Path
	// Prompt is the answer prompt over the paths (GraphRAG-FI's Figure 5).
	Prompt string
}

// Paths is path mode (LEGO-GraphRAG reasoning paths) for question with
// spec's modules and c's settings, starting from the entities seeds
// names (none: those the question names).
func (s *Session) Paths(ctx context.Context, question string, spec paths.Spec, c PathConfig, seeds []string) (*PathRun, error) {
	scanner, ok := s.Store.(store.KGScanner)
	if !ok {
		return nil, fmt.Errorf("store %s cannot hand over its graph for path retrieval", store.Redact(s.storeURL))
	}
	start := time.Now()
	Step(ctx, "loading the graph")
	kg, err := paths.LoadKG(ctx, scanner)
	if err != nil {
		return nil, err
	}
	loaded := time.Since(start)
	popts, err := c.Options(s.Embedder, s.Model)
	if err != nil {
		return nil, err
	}
	r, err := paths.New(kg, spec, append(popts, paths.WithProvenance(scanner))...)
	if err != nil {
		return nil, err
	}
	Step(ctx, "path retrieval")
	ids, err := PathSeeds(ctx, kg, s.Store, seeds, question)
	if err != nil {
		return nil, err
	}
	res, err := r.Retrieve(ctx, question, ids)
	if err != nil {
		return nil, err
	}
	res.Timings["load_graph"] = loaded
	run := &PathRun{Result: res, Priority: res.Paths}
	if res.Priority != nil || res.Additional != nil {
		run.Priority, run.Additional = res.Priority, res.Additional
	}
	if run.Prompt, err = paths.AnswerPrompt(question, run.Priority, run.Additional); err != nil {
		return nil, err
	}
	return run, nil
}

// Passages are the passages the run's paths came from, and where each
// chunk lives (PathPassages).
func (s *Session) Passages(ctx context.Context, run *PathRun) ([]retrieve.Passage, map[string]PathSource, error) {
	Step(ctx, "reading the paths' passages")
	return PathPassages(ctx, s.Store, run.Result)
}

// CitedSources are sources with those the integration's final
// candidates cite marked.
func CitedSources(sources []retrieve.Source, in *retrieve.Integration) []retrieve.Source {
	cited := map[int]bool{}
	for _, f := range in.Final {
		for _, n := range f.Cites {
			cited[n] = true
		}
	}
	out := append([]retrieve.Source(nil), sources...)
	for i := range out {
		out[i].Cited = cited[out[i].N]
	}
	return out
}

// CandidateChunks are, for each final candidate of the integration not
// from the model alone, the chunks of the paths whose text names it
// (names compared folded, as entity keys are).
func CandidateChunks(ps []paths.Path, in *retrieve.Integration) map[string][]string {
	chunks := map[string][]string{}
	for _, f := range in.Final {
		if f.From == "llm_only" {
			continue
		}
		key := " " + graphbuild.NormalizeKey(f.Text) + " "
		var ids []string
		seen := map[string]bool{}
		for _, p := range ps {
			if !strings.Contains(" "+graphbuild.NormalizeKey(p.Text)+" ", key) {
				continue
			}
			for _, c := range p.Chunks() {
				if !seen[c] {
					seen[c] = true
					ids = append(ids, c)
				}
			}
		}
		if len(ids) > 0 {
			chunks[f.Text] = ids
		}
	}
	return chunks
}
