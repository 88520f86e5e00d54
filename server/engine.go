package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// Engine is what the long-running commands (query serve, query mcp) hold:
// one open store, embedder and model, and a warm retriever whose graph
// every request shares. It turns a Request into what `query --json`
// prints, and is safe for concurrent use.
type Engine struct {
	storeURL string
	st       store.Store
	emb      embedstore.Embedder
	model    llms.Model
	tok      retrieve.TokenCounter
	cfg      Config // start-up defaults of every request
	root     *retrieve.Retriever

	mu     sync.Mutex
	bySpec map[string]*retrieve.Retriever // mix path signal spec -> retriever sharing root's graph
	specs  []string                       // bySpec keys, oldest first
	kg     kgCache                        // path mode's graph
	done   func()
}

// maxSpecs bounds the path-signal specs whose graphs a server keeps.
const maxSpecs = 4

// OpenEngine opens the store s names read-only, with the models cfg
// names, and builds the warm retriever; Close releases them. Without
// embedderSet the store's own embedder is used, whatever s.Embedder says.
func OpenEngine(ctx context.Context, s pipeline.Settings, cfg Config, embedderSet bool) (*Engine, error) {
	emb, model, st, done, err := OpenQueryStore(ctx, s, cfg, embedderSet, true)
	if err != nil {
		return nil, err
	}
	e, err := NewEngine(st, emb, model, s.Store, cfg)
	if err != nil {
		done()
		return nil, err
	}
	e.done = done
	return e, nil
}

// StartEngine opens the engine (OpenEngine), loads the store into it and
// follows other processes' writes to the store every refresh until stop,
// which also closes the engine. logger hears the load and refresh errors.
func StartEngine(ctx context.Context, s pipeline.Settings, cfg Config, embedderSet bool, refresh time.Duration, logger *log.Logger) (e *Engine, stop func(), err error) {
	t := time.Now()
	if e, err = OpenEngine(ctx, s, cfg, embedderSet); err != nil {
		return nil, nil, err
	}
	if err := e.Warm(ctx); err != nil {
		e.Close()
		return nil, nil, fmt.Errorf("load the store: %w", err)
	}
	logger.Printf("store %s loaded in %s", store.Redact(s.Store), time.Since(t).Round(time.Millisecond))
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Follow(fctx, refresh, logger.Printf)
	}()
	return e, func() { cancel(); <-done; e.Close() }, nil
}

// NewEngine is an engine over a store and models the caller opened and
// keeps (a docgraph.Graph's): its Close leaves them open. storeURL is the
// store's location, shown redacted in the statistics; model may be nil
// (no answers). The engine only reads st.
func NewEngine(st store.Store, emb embedstore.Embedder, model llms.Model, storeURL string, cfg Config) (*Engine, error) {
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		return nil, err
	}
	e := &Engine{storeURL: storeURL, st: st, emb: emb, model: model, tok: tok, cfg: cfg,
		bySpec: map[string]*retrieve.Retriever{}, done: func() {}}
	opts := []retrieve.Option{retrieve.WithConfig(cfg.Retrieval), retrieve.WithModel(model), retrieve.WithBackgroundReload()}
	if pipeline.EmbeddedStore(storeURL) {
		// The passage graph in memory, per version, while the store's
		// passage graph file lags behind the writes (a current file is
		// walked in place). A Neo4j store is walked on the server, so that
		// no process streams its whole graph.
		opts = append(opts, retrieve.WithPassageSnapshot())
	}
	e.root = retrieve.New(st, emb, opts...)
	return e, nil
}

// Close releases the store and the models OpenEngine opened (nothing
// for an engine from NewEngine).
func (e *Engine) Close() {
	e.done()
}

// Store is the store the engine reads (read-only).
func (e *Engine) Store() store.Store { return e.st }

// Warm loads what the first query would otherwise load: the store's
// vector caches and the retriever's graphs. Later calls bring them up to
// date after another process wrote (the path graph reloads in the
// background).
func (e *Engine) Warm(ctx context.Context) error {
	if w, ok := e.st.(interface{ Warm(context.Context) error }); ok {
		if err := w.Warm(ctx); err != nil {
			return err
		}
	}
	return e.root.Refresh(ctx)
}

// Follow keeps the caches in step with the store until ctx ends: every
// interval it reads the store's graph version and, when another process
// moved it, warms the caches, so that queries see a commit without paying
// for the reload. Errors are reported to logf and retried.
func (e *Engine) Follow(ctx context.Context, interval time.Duration, logf func(string, ...any)) {
	gs, ok := e.st.(store.GraphScanner)
	if !ok || interval <= 0 {
		return
	}
	last, _ := gs.GraphVersion(ctx)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, err := gs.GraphVersion(ctx)
		if err != nil || v == last {
			continue
		}
		if err := e.Warm(ctx); err != nil && ctx.Err() == nil {
			logf("refresh after store change: %v", err)
			continue
		}
		last = v
	}
}

// APIError is a failure a client can act on: an HTTP status, a stable
// code and a message. Errors that are not APIErrors are internal.
type APIError struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error is the message.
func (e *APIError) Error() string { return e.Message }

func badRequest(code, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *APIError {
	return &APIError{Status: http.StatusNotFound, Code: "not_found", Message: fmt.Sprintf(format, args...)}
}

// Stable error codes: clients may switch on them.
const (
	CodeInvalidJSON     = "invalid_json"
	CodeUnknownField    = "unknown_field"
	CodeBodyTooLarge    = "body_too_large"
	CodeEmptyQuestion   = "empty_question"
	CodeQuestionTooLong = "question_too_long"
	CodeUnknownMode     = "unknown_mode"
	CodeOutOfRange      = "out_of_range"
	CodeInvalidParam    = "invalid_parameter"
	CodeMissingParam    = "missing_parameter"
	CodeNotFound        = "not_found"
	CodeUnauthorized    = "unauthorized"
	CodeForbiddenHost   = "forbidden_host"
	CodeMethod          = "method_not_allowed"
	CodeTimeout         = "timeout"
	CodeUnavailable     = "unavailable"
	CodeInternal        = "internal"
)

// maxQuestionBytes bounds a question: longer text is a document, not a question.
const maxQuestionBytes = 8 << 10

// Request is one query: what `query`'s flags take. Absent fields take
// the server's start-up values.
type Request struct {
	Question         string   `json:"question"`
	Mode             string   `json:"mode,omitempty"`
	TopK             *int     `json:"top_k,omitempty"`
	Candidates       *int     `json:"candidates,omitempty"`
	MaxEntities      *int     `json:"max_entities,omitempty"`
	MaxRelations     *int     `json:"max_relations,omitempty"`
	FactTopK         *int     `json:"fact_top_k,omitempty"`
	FactThreshold    *float64 `json:"fact_threshold,omitempty"`
	MinFacts         *int     `json:"min_facts,omitempty"`
	Damping          *float64 `json:"damping,omitempty"`
	PathWeight       *float64 `json:"path_weight,omitempty"`
	PathSignal       string   `json:"path_signal,omitempty"`
	MaxContextTokens *int     `json:"max_context_tokens,omitempty"`
	ResponseType     string   `json:"response_type,omitempty"`
	Paths            string   `json:"paths,omitempty"`
	Seeds            []string `json:"seeds,omitempty"`
	ContextOnly      bool     `json:"context_only,omitempty"`
	Stream           bool     `json:"stream,omitempty"`
	// noAnswer skips the model's answer (an MCP client is a model itself).
	noAnswer bool
}

// Ranges of the request's numbers.
var (
	topKRange    = [2]int{1, 200}
	pathTopRange = [2]int{1, 1000}
	countRange   = [2]int{1, 1000}
	budgetRange  = [2]int{256, 1 << 20}
)

// validate checks the request without touching the store.
func (q *Request) validate() *APIError {
	switch {
	case strings.TrimSpace(q.Question) == "":
		return badRequest(CodeEmptyQuestion, "question is empty")
	case len(q.Question) > maxQuestionBytes:
		return badRequest(CodeQuestionTooLong, "question is %d bytes, at most %d are taken", len(q.Question), maxQuestionBytes)
	case !utf8.ValidString(q.Question):
		return badRequest(CodeInvalidParam, "question is not valid UTF-8")
	}
	if q.Mode == "" {
		q.Mode = retrieve.ModeMix
	}
	if q.Mode != ModePath && !slices.Contains(retrieve.Modes(), q.Mode) {
		return badRequest(CodeUnknownMode, "unknown mode %q (available: %s, %s)", q.Mode, strings.Join(retrieve.Modes(), ", "), ModePath)
	}
	top := topKRange
	if q.Mode == ModePath {
		top = pathTopRange
	}
	ints := []struct {
		name string
		v    *int
		r    [2]int
	}{
		{"top_k", q.TopK, top}, {"candidates", q.Candidates, countRange}, {"max_entities", q.MaxEntities, countRange},
		{"max_relations", q.MaxRelations, countRange}, {"fact_top_k", q.FactTopK, countRange},
		{"min_facts", q.MinFacts, [2]int{0, 1000}}, {"max_context_tokens", q.MaxContextTokens, budgetRange},
	}
	for _, f := range ints {
		if f.v != nil && (*f.v < f.r[0] || *f.v > f.r[1]) {
			return badRequest(CodeOutOfRange, "%s %d is out of range [%d, %d]", f.name, *f.v, f.r[0], f.r[1])
		}
	}
	floats := []struct {
		name   string
		v      *float64
		ok     func(float64) bool
		bounds string
	}{
		{"fact_threshold", q.FactThreshold, func(v float64) bool { return v >= -1 && v <= 1 }, "[-1, 1]"},
		{"damping", q.Damping, func(v float64) bool { return v > 0 && v < 1 }, "(0, 1)"},
		{"path_weight", q.PathWeight, func(v float64) bool { return v >= 0 && v <= 100 }, "[0, 100]"},
	}
	for _, f := range floats {
		if f.v != nil && !f.ok(*f.v) {
			return badRequest(CodeOutOfRange, "%s %v is out of range %s", f.name, *f.v, f.bounds)
		}
	}
	if len(q.ResponseType) > 200 {
		return badRequest(CodeOutOfRange, "response_type is %d bytes, at most 200 are taken", len(q.ResponseType))
	}
	if len(q.Seeds) > 32 {
		return badRequest(CodeOutOfRange, "%d seeds, at most 32 are taken", len(q.Seeds))
	}
	for _, spec := range []struct{ name, text string }{{"paths", q.Paths}, {"path_signal", q.PathSignal}} {
		if spec.text == "" {
			continue
		}
		if _, err := paths.ParseSpec(spec.text); err != nil {
			return badRequest(CodeInvalidParam, "%s: %v", spec.name, err)
		}
	}
	if q.Mode != ModePath && (q.Paths != "" || len(q.Seeds) > 0) {
		return badRequest(CodeInvalidParam, "paths and seeds apply to mode %q only", ModePath)
	}
	return nil
}

// config is the retrieval configuration of the request: the start-up
// configuration overridden by the fields it sets.
func (e *Engine) config(q *Request) retrieve.Config {
	c := e.cfg.Retrieval
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.TopK, q.TopK)
	set(&c.Candidates, q.Candidates)
	set(&c.MaxEntities, q.MaxEntities)
	set(&c.MaxRelations, q.MaxRelations)
	set(&c.FactTopK, q.FactTopK)
	set(&c.MinFacts, q.MinFacts)
	if q.FactThreshold != nil {
		c.FactThreshold = *q.FactThreshold
	}
	if q.Damping != nil {
		c.Damping = *q.Damping
	}
	if q.PathWeight != nil {
		c.Weights.Paths = *q.PathWeight
	}
	if q.PathSignal != "" {
		c.PathSpec = q.PathSignal
	}
	return c
}

// answerSetup is the request's context budget and answer shape: the
// start-up configuration overridden by the fields it sets.
func (e *Engine) answerSetup(q *Request) retrieve.AnswerSetup {
	b := e.cfg.Budget()
	if q.MaxContextTokens != nil {
		b.MaxTokens = *q.MaxContextTokens
	}
	responseType := e.cfg.ResponseType
	if q.ResponseType != "" {
		responseType = q.ResponseType
	}
	return retrieve.AnswerSetup{Tokens: e.tok, Budget: b, ResponseType: responseType}
}

// retriever returns a retriever for c sharing the warm graph; one per
// path-signal spec keeps its reasoning-path graph, the least recently
// added going when there are more than maxSpecs.
func (e *Engine) retriever(c retrieve.Config) *retrieve.Retriever {
	if c.Weights.Paths <= 0 {
		return e.root.WithConfig(c)
	}
	spec := c.PathSpec
	if spec == "" {
		spec = retrieve.DefaultPathSpec
	}
	e.mu.Lock()
	base, ok := e.bySpec[spec]
	if !ok {
		base = e.root.WithConfig(c)
		e.bySpec[spec] = base
		e.specs = append(e.specs, spec)
		if len(e.specs) > maxSpecs {
			delete(e.bySpec, e.specs[0])
			e.specs = e.specs[1:]
		}
	}
	e.mu.Unlock()
	return base.WithConfig(c)
}

// Reply is the answer to a Request.
type Reply struct {
	// JSON is what `query --json` prints: a *Response, or a contextReply
	// for context_only.
	JSON any
	// Context is the assembled context (context_only), of ContextTokens
	// tokens.
	Context       string
	ContextTokens int
	// Sources are the numbered passages the answer may cite (mix and
	// LightRAG modes, with a model), for a stream's sources event.
	Sources any
}

// contextReply is the JSON of a context_only query.
type contextReply struct {
	Question      string `json:"question"`
	Mode          string `json:"mode"`
	Context       string `json:"context"`
	ContextTokens int    `json:"context_tokens"`
}

// Query runs one request, validating it first. With a model (and not context_only)
// the answer is generated, and written to stream as it arrives when
// stream is not nil.
func (e *Engine) Query(ctx context.Context, q *Request, stream io.Writer) (*Reply, error) {
	// The engine's model is shared by concurrent requests, so a request's
	// usage is counted through its context, not the client's totals.
	u := &llm.Usage{}
	reply, err := e.runQuery(llm.WithUsage(ctx, u), q, stream)
	if r, ok := replyJSON(reply); ok {
		r.LLMUsage = u.Counts()
	}
	return reply, err
}

func replyJSON(reply *Reply) (*Response, bool) {
	if reply == nil {
		return nil, false
	}
	r, ok := reply.JSON.(*Response)
	return r, ok
}

func (e *Engine) runQuery(ctx context.Context, q *Request, stream io.Writer) (*Reply, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	if q.Mode == ModePath {
		return e.pathQuery(ctx, q, stream)
	}
	if q.Mode == retrieve.ModeLogic {
		return e.logicQuery(ctx, q, stream)
	}
	start := time.Now()
	r := e.retriever(e.config(q))
	res, err := r.Retrieve(ctx, q.Question, q.Mode)
	if err != nil {
		return nil, err
	}
	t := time.Now()
	setup := e.answerSetup(q)
	c, err := retrieve.Assemble(res, e.tok, setup.Budget, setup.ResponseType)
	if err != nil {
		if strings.HasPrefix(err.Error(), "max context tokens") {
			return nil, badRequest(CodeOutOfRange, "max_context_tokens %d: %v", setup.Budget.MaxTokens, err)
		}
		return nil, err
	}
	res.Timings["context"] = time.Since(t)
	if q.ContextOnly {
		return &Reply{JSON: contextReply{Question: res.Question, Mode: res.Mode, Context: c.String(), ContextTokens: c.Tokens},
			Context: c.String(), ContextTokens: c.Tokens}, nil
	}
	out := NewResponse(res, c)
	reply := &Reply{JSON: out, ContextTokens: c.Tokens}
	if e.model != nil && !q.noAnswer {
		t := time.Now()
		a, err := retrieve.Answer(ctx, e.model, c, stream)
		if err != nil {
			return nil, err
		}
		res.Timings["answer"] = time.Since(t)
		out.SetAnswer(a)
		reply.Sources = a.Sources
	}
	res.Timings["total"] = time.Since(start)
	return reply, nil
}

// logicQuery is `query --mode logic` for one request: the logic form, its
// pre-check, and the answer from it or, when it cannot answer, from mix.
func (e *Engine) logicQuery(ctx context.Context, q *Request, stream io.Writer) (*Reply, error) {
	if e.model == nil {
		return nil, badRequest(CodeInvalidParam, "mode logic needs a model: start the server with --llm")
	}
	start := time.Now()
	r := e.retriever(e.config(q))
	out, err := r.PrepareLogic(ctx, q.Question, e.answerSetup(q))
	if err != nil {
		return nil, err
	}
	if q.ContextOnly {
		c := out.Context.String()
		return &Reply{JSON: contextReply{Question: q.Question, Mode: retrieve.ModeLogic, Context: c, ContextTokens: out.Context.Tokens},
			Context: c, ContextTokens: out.Context.Tokens}, nil
	}
	resp := NewResponse(out.Result, out.Context)
	resp.Mode = retrieve.ModeLogic
	resp.Logic, resp.Precheck, resp.AnsweredBy, resp.FallbackReason = out.Logic.Logic, out.Precheck, out.AnsweredBy, out.Reason
	reply := &Reply{JSON: resp, ContextTokens: out.Context.Tokens}
	if !q.noAnswer {
		t := time.Now()
		a, err := retrieve.Answer(ctx, e.model, out.Context, stream)
		if err != nil {
			return nil, err
		}
		out.Result.Timings["answer"] = time.Since(t)
		resp.SetAnswer(a)
		reply.Sources = a.Sources
	}
	out.Result.Timings["total"] = time.Since(start)
	return reply, nil
}

// kgCache keeps path mode's graph, reloaded when the store's graph
// version moves.
type kgCache struct {
	mu      sync.Mutex
	version string
	kg      *paths.KG
}

func (c *kgCache) get(ctx context.Context, st store.Store) (*paths.KG, store.KGScanner, error) {
	ks, ok1 := st.(store.KGScanner)
	gs, ok2 := st.(store.GraphScanner)
	if !ok1 || !ok2 {
		return nil, nil, badRequest(CodeInvalidParam, "this store cannot hand over its graph for path retrieval")
	}
	v, err := gs.GraphVersion(ctx)
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kg == nil || c.version != v {
		kg, err := paths.LoadKG(ctx, ks)
		if err != nil {
			return nil, nil, err
		}
		c.kg, c.version = kg, v
	}
	return c.kg, ks, nil
}

// pathQuery is `query --mode path` for one request.
func (e *Engine) pathQuery(ctx context.Context, q *Request, stream io.Writer) (*Reply, error) {
	kg, ks, err := e.kg.get(ctx, e.st)
	if err != nil {
		return nil, err
	}
	spec := q.Paths
	if spec == "" {
		specs, err := e.cfg.Paths.ParsedSpecs()
		if err != nil {
			return nil, err
		}
		spec = specs[0].String()
	}
	s, err := paths.ParseSpec(spec)
	if err != nil {
		return nil, badRequest(CodeInvalidParam, "paths: %v", err)
	}
	opts, err := e.cfg.Paths.Options(e.emb, e.model)
	if err != nil {
		return nil, err
	}
	if q.TopK != nil {
		opts = append(opts, paths.WithTopK(*q.TopK))
	}
	if q.Damping != nil {
		opts = append(opts, paths.WithDamping(*q.Damping))
	}
	r, err := paths.New(kg, s, append(opts, paths.WithProvenance(ks))...)
	if err != nil {
		return nil, badRequest(CodeInvalidParam, "paths: %v", err)
	}
	for _, n := range q.Seeds {
		if _, ok := kg.Lookup(n); !ok {
			return nil, badRequest(CodeInvalidParam, "seed %q: no such entity in the graph", n)
		}
	}
	seeds, err := PathSeeds(ctx, kg, e.st, q.Seeds, q.Question)
	if err != nil {
		return nil, err
	}
	res, err := r.Retrieve(ctx, q.Question, seeds)
	if err != nil {
		return nil, err
	}
	priority, additional := res.Paths, []paths.Path(nil)
	if res.Priority != nil || res.Additional != nil {
		priority, additional = res.Priority, res.Additional
	}
	prompt, err := paths.AnswerPrompt(q.Question, priority, additional)
	if err != nil {
		return nil, err
	}
	if q.ContextOnly {
		n := e.tok.Count(prompt)
		return &Reply{JSON: contextReply{Question: q.Question, Mode: ModePath, Context: prompt, ContextTokens: n}, Context: prompt, ContextTokens: n}, nil
	}
	passages, _, err := PathPassages(ctx, e.st, res)
	if err != nil {
		return nil, err
	}
	out := NewPathResponse(res, passages)
	if e.model != nil && len(res.Paths) > 0 && !q.noAnswer {
		t := time.Now()
		msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}
		if out.Answer, err = retrieve.Generate(ctx, e.model, msgs, stream); err != nil {
			return nil, fmt.Errorf("answer: %w", err)
		}
		res.Timings["answer"] = time.Since(t)
	}
	return &Reply{JSON: out, Sources: orEmpty(passages)}, nil
}

// asAPIError classifies an error for a client: its own APIError, a
// timeout, or an internal failure (whose text is still shown: it names
// the store and cause, never a secret).
func asAPIError(err error) *APIError {
	var ae *APIError
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, context.DeadlineExceeded):
		return &APIError{Status: http.StatusGatewayTimeout, Code: CodeTimeout, Message: "the request took longer than the server's time limit"}
	case errors.Is(err, store.ErrNotFound):
		return &APIError{Status: http.StatusNotFound, Code: CodeNotFound, Message: err.Error()}
	}
	return &APIError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: err.Error()}
}

// Modes lists what a request's mode may be: retrieve's modes and path.
func Modes() []string { return append(slices.Clone(retrieve.Modes()), ModePath) }
