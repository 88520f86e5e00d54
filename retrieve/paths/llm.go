package paths

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/prompts"
)

// Prompt names this package renders (files in prompts/templates).
const (
	promptSelect = "paths_select"
	promptAnswer = "paths_answer"
)

// ErrUnparsable marks a model answer that is not a list of path numbers.
var ErrUnparsable = errors.New("not a list of path numbers")

// ParseSelection reads a model's choice of numbered paths, strictly: the
// answer must be 1-based numbers separated by commas (optionally inside
// one pair of square brackets), or NONE. Numbers outside 1..n are dropped
// and counted in invalid, repeats are dropped; anything else makes the
// whole answer unparsable. The result is 0-based, in the model's order.
func ParseSelection(answer string, n int) (picked []int, invalid int, err error) {
	s := strings.TrimSpace(answer)
	s = strings.TrimSuffix(s, ".")
	if strings.EqualFold(s, "none") || s == "[]" {
		return nil, 0, nil
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	if strings.TrimSpace(s) == "" {
		return nil, 0, fmt.Errorf("%w: %q", ErrUnparsable, clip(answer, 80))
	}
	seen := map[int]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i, err := strconv.Atoi(f)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %q", ErrUnparsable, clip(answer, 80))
		}
		switch {
		case i < 1 || i > n:
			invalid++
		case !seen[i]:
			seen[i] = true
			picked = append(picked, i-1)
		}
	}
	return picked, invalid, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// LLMStats counts what an LLM scorer's model did.
type LLMStats struct {
	Calls      int // model calls
	Unparsable int // answers that were not a list of numbers
	Invalid    int // numbers outside the list
	FilledIn   int // calls where the fill-in scorer ranked part of the list
}

// LLM scores paths by asking a language model which of them help answer
// the question (prompts/templates/paths_select.tmpl), read strictly with
// ParseSelection. The fill-in scorer first ranks every path; the best
// MaxPaths go to the model, whose picks come first, in its order; every
// other path follows in the fill-in order, so a model that returns too few
// valid paths, or an unusable answer, still yields a full ranking
// (LEGO-GraphRAG's LLM with EEM supplement). Scores are rank-based.
type LLM struct {
	model    llms.Model
	fill     Scorer
	maxPaths int

	mu    sync.Mutex
	stats LLMStats
}

// NewLLM returns an LLM scorer that sends at most maxPaths paths (32 when
// 0) per call and fills in with fill (required).
func NewLLM(model llms.Model, fill Scorer, maxPaths int) *LLM {
	if maxPaths <= 0 {
		maxPaths = 32
	}
	return &LLM{model: model, fill: fill, maxPaths: maxPaths}
}

// Name is "llm".
func (*LLM) Name() string { return "llm" }

// Stats returns the counters so far.
func (s *LLM) Stats() LLMStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Score implements Scorer.
func (s *LLM) Score(ctx context.Context, question string, texts []string) ([]float64, error) {
	base, err := s.fill.Score(ctx, question, texts)
	if err != nil {
		return nil, fmt.Errorf("llm scorer: fill-in %s: %w", s.fill.Name(), err)
	}
	order := rankOf(base)
	sent := order[:min(len(order), s.maxPaths)]
	list := make([]string, len(sent))
	for i, j := range sent {
		list[i] = texts[j]
	}
	picked, err := s.choose(ctx, question, list, true)
	if err != nil {
		return nil, err
	}
	n := float64(len(texts))
	out := make([]float64, len(texts))
	chosen := make(map[int]bool, len(picked))
	for r, i := range picked {
		j := sent[i]
		chosen[j] = true
		out[j] = 2 - float64(r)/n
	}
	rank := 0
	for _, j := range order {
		if !chosen[j] {
			out[j] = 1 - float64(rank)/n
			rank++
		}
	}
	if len(picked) < len(sent) {
		s.mu.Lock()
		s.stats.FilledIn++
		s.mu.Unlock()
	}
	return out, nil
}

// choose asks the model which of the numbered paths are useful. An
// unparsable answer counts as no pick; a failed call is an error unless it
// failed for a reason other than the context ending, in which case it too
// counts as no pick, so retrieval survives a flaky model.
func (s *LLM) choose(ctx context.Context, question string, paths []string, ranked bool) ([]int, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	prompt, err := prompts.Render(promptSelect, map[string]any{"Question": question, "Paths": paths, "Ranked": ranked})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.stats.Calls++
	s.mu.Unlock()
	answer, err := llms.GenerateFromSinglePrompt(ctx, s.model, prompt, llms.WithTemperature(0))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("llm scorer: %w", err)
		}
		s.mu.Lock()
		s.stats.Unparsable++
		s.mu.Unlock()
		return nil, nil
	}
	picked, invalid, err := ParseSelection(answer, len(paths))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Invalid += invalid
	if err != nil {
		s.stats.Unparsable++
		return nil, nil
	}
	return picked, nil
}

// rankOf returns indices ordered by score, best first, ties by index.
func rankOf(scores []float64) []int {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	return order
}
