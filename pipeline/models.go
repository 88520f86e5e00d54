package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// LLMSettings choose and tune the model-backed stages. With LLM empty,
// ingestion is offline: the built-in extractor, no summaries.
type LLMSettings struct {
	LLM         string // openai:MODEL, ollama:MODEL, anthropic:MODEL
	Gleaning    int
	NERVariant  string
	EntityTypes []string
	Concurrency int
	RPM         int
	TPM         int
	Timeout     time.Duration
	Retries     int
	Cache       string // response cache file; "off" disables; "" means beside the graph
	// ContextTokens is the model's context budget for one extraction conversation.
	ContextTokens int
	// DescriptionTokens bounds a merged description before it is summarised.
	DescriptionTokens int
	// Stall stops an ingest whose model has answered nothing for this long
	// while its calls failed (0: never).
	Stall time.Duration
}

// AddLLMFlags registers the model flags.
func (l *LLMSettings) AddLLMFlags(fs *pflag.FlagSet) {
	fs.StringVar(&l.LLM, "llm", "", "LLM for extraction and summaries: openai:MODEL (OPENAI_API_KEY, OPENAI_BASE_URL), ollama:MODEL (OLLAMA_HOST), anthropic:MODEL (ANTHROPIC_API_KEY); empty = offline")
	fs.IntVar(&l.Gleaning, "gleaning", 1, "loop-NER gleaning rounds after the first extraction")
	fs.StringVar(&l.NERVariant, "ner-variant", "base", "loop-NER variant: base (glean, then ask the judge) or trial (judge first)")
	fs.StringSliceVar(&l.EntityTypes, "entity-types", nil, "entity types the extraction prompt allows (default: organization, person, location, event, ...)")
	l.AddClientFlags(fs)
	fs.IntVar(&l.ContextTokens, "llm-context-tokens", 32000, "context budget of one extraction conversation; gleaning rounds that would exceed it are skipped")
	fs.IntVar(&l.DescriptionTokens, "description-tokens", 300, "merged descriptions longer than this are summarised by the LLM (truncated offline)")
	fs.DurationVar(&l.Stall, "llm-stall", DefaultStall, "stop the run when the model (or a provider embedder) has answered nothing for this long while its calls failed or timed out; a slow model that still answers is never stopped (0 = never)")
}

// DefaultStall is --llm-stall: long enough for a model server to restart
// or a rate limit to lift, short enough that a dead endpoint costs minutes,
// not the whole corpus's retries.
const DefaultStall = 5 * time.Minute

// AddClientFlags registers the flags every model call goes by: limits,
// timeout, retries and the response cache. query has them too.
func (l *LLMSettings) AddClientFlags(fs *pflag.FlagSet) {
	fs.IntVar(&l.Concurrency, "llm-concurrency", 16, "LLM calls in flight at once")
	fs.IntVar(&l.RPM, "rpm", 0, "LLM requests per minute (0 = unlimited)")
	fs.IntVar(&l.TPM, "tpm", 0, "LLM tokens per minute (0 = unlimited)")
	fs.DurationVar(&l.Timeout, "llm-timeout", 2*time.Minute, "timeout of one LLM call (0 = none)")
	fs.IntVar(&l.Retries, "llm-retries", 6, "retries of a failed LLM call (429, 5xx, timeouts), with exponential backoff")
	fs.StringVar(&l.Cache, "llm-cache", "", `LLM response cache file (default: llm-cache.db beside the graph; "off" to disable)`)
}

// ClientOptions are the llm client options the settings ask for, the
// response cache included.
func (s Settings) ClientOptions() []llm.Option {
	opts := []llm.Option{
		llm.WithConcurrency(s.LLMSettings.Concurrency), llm.WithRPM(s.RPM), llm.WithTPM(s.TPM),
		llm.WithTimeout(s.Timeout), llm.WithRetries(s.Retries),
	}
	if cache := s.cachePath(); cache != "" {
		opts = append(opts, llm.WithCache(cache))
	}
	return opts
}

// Models are the model-backed parts of a run: the embedder always, the chat
// model and its extractor and summariser when an LLM is configured.
type Models struct {
	Embedder   embedstore.Embedder
	Chat       *llm.Client // nil offline
	Extractor  ner.Extractor
	Summarizer graphbuild.Summarizer // nil offline
	descBudget int
}

// NewModels builds the embedder and, when s.LLM is set, the LLM client, the
// loop-NER extractor and the summariser, all sharing one response cache.
// extra client options (a logger for retries) follow those s asks for.
func NewModels(ctx context.Context, s Settings, extra ...llm.Option) (*Models, error) {
	m := &Models{descBudget: s.DescriptionTokens}
	opts := append(s.ClientOptions(), extra...)
	emb, err := newEmbedder(ctx, s.Embedder, opts)
	if err != nil {
		return nil, err
	}
	m.Embedder = emb
	if s.LLM == "" {
		m.Extractor = ner.NewOffline()
		return m, nil
	}
	variant, err := ner.ParseVariant(orDefault(s.NERVariant, "base"))
	if err != nil {
		m.Close()
		return nil, err
	}
	client, err := llm.New(s.LLM, opts...)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("--llm %s: %w", s.LLM, err)
	}
	m.Chat = client
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		m.Close()
		return nil, err
	}
	loopOpts := []ner.LoopOption{
		ner.WithGleaning(s.Gleaning), ner.WithVariant(variant), ner.WithTokenCounter(tok.Count),
	}
	if s.ContextTokens > 0 {
		loopOpts = append(loopOpts, ner.WithContextTokens(s.ContextTokens))
	}
	if len(s.EntityTypes) > 0 {
		loopOpts = append(loopOpts, ner.WithEntityTypes(s.EntityTypes...))
	}
	m.Extractor = ner.NewLoop(client, loopOpts...)
	m.Summarizer = llm.NewSummarizer(client, llm.WithSummaryTokenCounter(tok.Count))
	return m, nil
}

// OpenForWrite builds the models s names and opens the store for writing
// with them. Unless the embedder was chosen (explicitEmbedder), a store
// holding another embedder's vectors (one made before the offline
// embedder's current version, or with a provider's) is opened with that
// embedder instead, so that it is extended with vectors like its own;
// adopted then says which, and s.Embedder is its spec. extra client
// options follow those s asks for, as in NewModels.
func OpenForWrite(ctx context.Context, s *Settings, explicitEmbedder bool, extra ...llm.Option) (m *Models, st store.Store, adopted *store.EmbedderInfo, err error) {
	for {
		m, err := NewModels(ctx, *s, extra...)
		if err != nil {
			return nil, nil, nil, err
		}
		st, err := OpenStore(ctx, *s, m.Embedder, m.Merger())
		if err == nil {
			return m, st, adopted, nil
		}
		m.Close()
		var mm *store.EmbedderMismatchError
		if explicitEmbedder || adopted != nil || !errors.As(err, &mm) {
			return nil, nil, nil, err
		}
		held := mm.Held
		adopted, s.Embedder = &held, held.Spec()
	}
}

// OpenEmbedder builds the embedder s.Embedder names: the offline hash
// embedder, or a provider's (openai:MODEL, ollama:MODEL) through the cached,
// rate-limited client, its cache beside s.Store. A zero Timeout or Retries
// means the client's default, not "none": commands without the LLM flags
// pass zero. Close a provider embedder with CloseEmbedder.
func OpenEmbedder(ctx context.Context, s Settings) (embedstore.Embedder, error) {
	var opts []llm.Option
	if s.Timeout > 0 {
		opts = append(opts, llm.WithTimeout(s.Timeout))
	}
	if s.Retries > 0 {
		opts = append(opts, llm.WithRetries(s.Retries))
	}
	if cache := s.cachePath(); cache != "" {
		opts = append(opts, llm.WithCache(cache))
	}
	return newEmbedder(ctx, s.Embedder, opts)
}

// CloseEmbedder releases a provider embedder's client and cache.
func CloseEmbedder(e embedstore.Embedder) error {
	if c, ok := e.(*llm.Embedder); ok {
		return c.Close()
	}
	return nil
}

// Merger is the store merger for these models: LLM summaries of long
// descriptions when a chat model is configured, truncation otherwise.
func (m *Models) Merger() store.Merger {
	opts := []graphbuild.MergerOption{graphbuild.WithDescriptionBudget(m.descBudget)}
	if m.Summarizer != nil {
		opts = append(opts, graphbuild.WithSummarizer(m.Summarizer))
	}
	return graphbuild.NewMerger(m.Embedder, opts...)
}

// ExtractorName identifies the extractor in the fingerprint.
func (m *Models) ExtractorName() string {
	if n, ok := m.Extractor.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", m.Extractor)
}

// ModelStats are the LLM counters of a run, for the ingest summary.
type ModelStats struct {
	Model            string `json:"model,omitempty"`
	Calls            int64  `json:"calls"`
	CacheHits        int64  `json:"cache_hits"`
	Retries          int64  `json:"retries"`
	Failures         int64  `json:"failures"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	EmbedCalls       int64  `json:"embedding_calls,omitempty"`
	EmbedCacheHits   int64  `json:"embedding_cache_hits,omitempty"`
	GleaningRounds   int64  `json:"gleaning_rounds,omitempty"`
	JudgeYes         int64  `json:"judge_yes,omitempty"`
	JudgeNo          int64  `json:"judge_no,omitempty"`
	JudgeInvalid     int64  `json:"judge_invalid,omitempty"`
	ContextSkips     int64  `json:"context_skips,omitempty"`
	RejectedRecords  int64  `json:"rejected_records,omitempty"`
	UnusableAnswers  int64  `json:"unusable_answers,omitempty"`
	// UnusableSummaries are description summaries the model answered in
	// no usable form; the descriptions were kept cut to the budget.
	UnusableSummaries int64 `json:"unusable_summaries,omitempty"`
	// UnusableSummary is the first of them: model, entity and the
	// answer's start.
	UnusableSummary  string  `json:"unusable_summary,omitempty"`
	RetryWaitSeconds float64 `json:"retry_wait_seconds,omitempty"`
}

// Stats reports the counters so far; nil when nothing model-backed ran.
func (m *Models) Stats() *ModelStats {
	var out ModelStats
	any := false
	if m.Chat != nil {
		s := m.Chat.Stats()
		out.Model = m.Chat.Name()
		out.Calls, out.CacheHits, out.Retries, out.Failures = s.Calls, s.CacheHits, s.Retries, s.Failures
		out.PromptTokens, out.CompletionTokens = s.PromptTokens, s.CompletionTokens
		out.RetryWaitSeconds = s.RetryWait.Seconds()
		any = true
	}
	if e, ok := m.Embedder.(*llm.Embedder); ok {
		s := e.Stats()
		out.EmbedCalls, out.EmbedCacheHits = s.Calls, s.CacheHits
		out.Retries += s.Retries
		out.Failures += s.Failures
		any = true
	}
	if l, ok := m.Extractor.(*ner.Loop); ok {
		s := l.Stats()
		out.GleaningRounds, out.JudgeYes, out.JudgeNo, out.JudgeInvalid = s.Rounds, s.JudgeYes, s.JudgeNo, s.JudgeInvalid
		out.ContextSkips, out.RejectedRecords, out.UnusableAnswers = s.ContextSkips, s.Rejected, s.Unusable
	}
	if sm, ok := m.Summarizer.(*llm.Summarizer); ok {
		if s := sm.Stats(); s.Unusable > 0 {
			out.UnusableSummaries = s.Unusable
			out.UnusableSummary = s.Example.Error()
		}
	}
	if !any {
		return nil
	}
	return &out
}

// Waits are what the model-backed clients' calls are doing now: the chat
// model's and a provider embedder's, those with calls in flight first,
// the longest waiting first among them.
func (m *Models) Waits() []llm.Waits {
	var out []llm.Waits
	if m.Chat != nil {
		out = append(out, m.Chat.Waits())
	}
	if e, ok := m.Embedder.(*llm.Embedder); ok {
		out = append(out, e.Waits())
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].InFlight > 0) != (out[j].InFlight > 0) {
			return out[i].InFlight > 0
		}
		return out[i].Oldest > out[j].Oldest
	})
	return out
}

// Busy says whether any model call is in flight.
func (m *Models) Busy() bool {
	for _, w := range m.Waits() {
		if w.InFlight > 0 {
			return true
		}
	}
	return false
}

// Stalled is an *llm.StallError when a client has answered nothing for
// window while its calls failed; nil otherwise.
func (m *Models) Stalled(window time.Duration) error {
	for _, w := range m.Waits() {
		if err := w.Stalled(window); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the clients and their caches.
func (m *Models) Close() error {
	var errs []error
	if m.Chat != nil {
		errs = append(errs, m.Chat.Close())
	}
	if e, ok := m.Embedder.(*llm.Embedder); ok {
		errs = append(errs, e.Close())
	}
	return errors.Join(errs...)
}

// cachePath is where LLM responses are cached: beside a SQLite graph, or
// under ./.docgraph for server stores. The default place is skipped (no
// cache) when its folder exists but cannot be written, as beside a store
// that is only read.
func (s Settings) cachePath() string {
	switch s.Cache {
	case "off", "none", "false":
		return ""
	case "":
	default:
		return s.Cache
	}
	st := s.Store
	if st == "" {
		st = DefaultStore
	}
	dir := ".docgraph"
	if rest, ok := strings.CutPrefix(st, "sqlite://"); ok {
		dir = filepath.Dir(rest)
	} else if !strings.Contains(st, "://") {
		dir = filepath.Dir(st)
	}
	if info, err := os.Stat(dir); err == nil && info.IsDir() && !store.WritableDir(dir) {
		return ""
	}
	return filepath.Join(dir, "llm-cache.db")
}

func newEmbedder(ctx context.Context, spec string, opts []llm.Option) (embedstore.Embedder, error) {
	name, _, _ := strings.Cut(spec, ":")
	if name == "" || name == "hash" || name == "hash-v1" || name == "hash-v2" {
		return NewEmbedder(spec)
	}
	e, err := llm.NewEmbedder(ctx, spec, opts...)
	if err != nil {
		return nil, fmt.Errorf("--embedder %s: %w", spec, err)
	}
	return e, nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
