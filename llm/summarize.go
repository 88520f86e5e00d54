package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"golang.org/x/sync/errgroup"

	"github.com/docgraph/docgraph/prompts"
)

// Summarizer merges the descriptions an entity or relation collected from
// many chunks into one, with a model. Safe for concurrent use.
type Summarizer struct {
	model         llms.Model
	contextTokens int
	maxWords      int
	language      string
	count         func(string) int
	callOpts      []llms.CallOption
	parallel      int
}

// SummarizerOption configures a Summarizer.
type SummarizerOption func(*Summarizer)

// WithSummaryContextTokens bounds the descriptions sent in one request
// (default 4000 tokens); more are summarised in groups first (map-reduce).
func WithSummaryContextTokens(n int) SummarizerOption {
	return func(s *Summarizer) {
		if n > 0 {
			s.contextTokens = n
		}
	}
}

// WithSummaryMaxWords is the length the summary is asked to stay within (default 150).
func WithSummaryMaxWords(n int) SummarizerOption {
	return func(s *Summarizer) {
		if n > 0 {
			s.maxWords = n
		}
	}
}

// WithSummaryLanguage is the language summaries are written in (default English).
func WithSummaryLanguage(lang string) SummarizerOption {
	return func(s *Summarizer) { s.language = lang }
}

// WithSummaryTokenCounter replaces EstimateTokens, e.g. with a real tokenizer's count.
func WithSummaryTokenCounter(count func(string) int) SummarizerOption {
	return func(s *Summarizer) {
		if count != nil {
			s.count = count
		}
	}
}

// WithSummaryCallOptions are passed to every model call (default temperature 0).
func WithSummaryCallOptions(opts ...llms.CallOption) SummarizerOption {
	return func(s *Summarizer) { s.callOpts = opts }
}

// NewSummarizer returns a Summarizer that asks model; pass an llm.Client so
// that the calls are limited, retried and cached.
func NewSummarizer(model llms.Model, opts ...SummarizerOption) *Summarizer {
	s := &Summarizer{
		model:         model,
		contextTokens: 4000,
		maxWords:      150,
		count:         EstimateTokens,
		callOpts:      []llms.CallOption{llms.WithTemperature(0)},
		parallel:      4,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// maxLevels bounds the map-reduce: each level shrinks the text by about the
// ratio of the context to the summary length, so more is never needed.
const maxLevels = 4

// Summarize merges descriptions of the entity or relation called name
// (kind "entity" or "relation"). When the descriptions exceed the context
// budget they are summarised in groups, then the summaries are summarised.
func (s *Summarizer) Summarize(ctx context.Context, kind, name string, descriptions []string) (string, error) {
	descs := distinctNonEmpty(descriptions)
	if len(descs) == 0 {
		return "", nil
	}
	for level := 0; ; level++ {
		groups := s.pack(descs)
		if len(groups) == 1 || level == maxLevels {
			return s.once(ctx, kind, name, s.fit(descs))
		}
		next := make([]string, len(groups))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(s.parallel)
		for i, grp := range groups {
			g.Go(func() error {
				sum, err := s.once(gctx, kind, name, grp)
				next[i] = sum
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return "", err
		}
		descs = next
	}
}

// pack groups descriptions greedily, in order, each group within the budget;
// a description longer than the budget is cut to fit and goes alone.
func (s *Summarizer) pack(descs []string) [][]string {
	var groups [][]string
	var cur []string
	used := 0
	for _, d := range descs {
		n := s.count(d)
		if n > s.contextTokens {
			d, n = s.truncate(d, n, s.contextTokens), s.contextTokens
		}
		if len(cur) > 0 && used+n > s.contextTokens {
			groups = append(groups, cur)
			cur, used = nil, 0
		}
		cur = append(cur, d)
		used += n
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

// fit keeps the descriptions that fit the budget, for the last level.
func (s *Summarizer) fit(descs []string) []string {
	var out []string
	used := 0
	for _, d := range descs {
		n := s.count(d)
		if used+n > s.contextTokens {
			if len(out) == 0 {
				out = append(out, s.truncate(d, n, s.contextTokens))
			}
			break
		}
		out = append(out, d)
		used += n
	}
	return out
}

func (s *Summarizer) truncate(d string, tokens, budget int) string {
	r := []rune(d)
	keep := len(r) * budget / tokens
	return string(r[:keep])
}

func (s *Summarizer) once(ctx context.Context, kind, name string, descs []string) (string, error) {
	p, err := prompts.RenderSummarize(prompts.SummarizeData{
		Kind: kind, Name: name, Descriptions: descs, Language: s.language, MaxWords: s.maxWords,
	})
	if err != nil {
		return "", err
	}
	out, err := llms.GenerateFromSinglePrompt(ctx, s.model, p, s.callOpts...)
	if err != nil {
		return "", fmt.Errorf("llm summary: %w", err)
	}
	out = strings.TrimSpace(out)
	if out == "" {
		return "", fmt.Errorf("llm summary of %s %q: the model returned an empty summary", kind, name)
	}
	return out, nil
}

func distinctNonEmpty(in []string) []string {
	seen := make(map[string]bool, len(in))
	var out []string
	for _, d := range in {
		d = strings.TrimSpace(d)
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}
