package paths

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/prompts"
)

// FI is GraphRAG-FI's two-stage path filter. The coarse stage keeps the
// paths whose refinement score, rescaled to [0, 1] over the retrieved set,
// is at least Threshold (at most MaxCoarse of them, best first); the fine
// stage asks a language model which of those help answer the question
// (prompts/templates/paths_select.tmpl, read strictly). The model's picks
// are the high-priority paths; the coarse paths it left out are kept as
// additional paths, which the answer prompt lists after them.
type FI struct {
	threshold float64
	maxCoarse int
	llm       *LLM
}

// NewFI returns a GraphRAG-FI filter; threshold <= 0 means 0.5 and
// maxCoarse <= 0 means 40 (the paper keeps the top 40 to 50).
func NewFI(model llms.Model, threshold float64, maxCoarse int) *FI {
	if threshold <= 0 {
		threshold = 0.5
	}
	if maxCoarse <= 0 {
		maxCoarse = 40
	}
	return &FI{threshold: threshold, maxCoarse: maxCoarse, llm: &LLM{model: model}}
}

// Stats returns the fine filter's model counters.
func (f *FI) Stats() LLMStats { return f.llm.Stats() }

// Filter splits paths (best first, with scores) into high-priority and
// additional paths. When the model's answer is unusable, nothing is high
// priority and every coarse path is additional; note says so.
func (f *FI) Filter(ctx context.Context, question string, paths []Path) (high, additional []Path, note string, err error) {
	coarse := f.coarse(paths)
	texts := make([]string, len(coarse))
	for i, p := range coarse {
		texts[i] = p.Text
	}
	before := f.llm.Stats()
	picked, err := f.llm.choose(ctx, question, texts, false)
	if err != nil {
		return nil, nil, "", fmt.Errorf("graphrag-fi fine filter: %w", err)
	}
	if after := f.llm.Stats(); after.Unparsable > before.Unparsable {
		note = "fine filter: the model's answer was not a list of path numbers; all coarse paths are additional"
	}
	chosen := map[int]bool{}
	for _, i := range picked {
		chosen[i] = true
	}
	// High-priority paths keep the retrieval order, not the model's.
	for i, p := range coarse {
		if chosen[i] {
			high = append(high, p)
		} else {
			additional = append(additional, p)
		}
	}
	return high, additional, note, nil
}

// coarse keeps the paths scoring at least the threshold after min-max
// rescaling, best first, at most maxCoarse.
func (f *FI) coarse(paths []Path) []Path {
	if len(paths) == 0 {
		return nil
	}
	lo, hi := paths[0].Score, paths[0].Score
	for _, p := range paths {
		lo, hi = min(lo, p.Score), max(hi, p.Score)
	}
	var out []Path
	for _, p := range paths {
		norm := 1.0
		if hi > lo {
			norm = (p.Score - lo) / (hi - lo)
		}
		if norm >= f.threshold {
			out = append(out, p)
			if len(out) == f.maxCoarse {
				break
			}
		}
	}
	return out
}

// AnswerPrompt renders the request to answer a question from reasoning
// paths (prompts/templates/paths_answer.tmpl). With additional paths, as
// GraphRAG-FI produces, the priority paths are listed first under their own
// header and the additional ones after; otherwise the paths are one list.
func AnswerPrompt(question string, priority, additional []Path) (string, error) {
	texts := func(ps []Path) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = p.Text
		}
		return out
	}
	return prompts.Render(promptAnswer, map[string]any{
		"Question": question, "Priority": texts(priority), "Additional": texts(additional),
	})
}
