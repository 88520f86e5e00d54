package eval

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/retrieve"
)

// The answer-side methods measured with a model: logic-form retrieval with
// its pre-check (falling back to mix), and mix with GraphRAG-FI's
// integration. Each is a RetrieveFunc that does everything before the
// answer (so its latency includes the decomposition and the pre-check, or
// mix retrieval) and an AnswerFunc that answers what it retrieved.

// MethodStats counts what an answer-side method did over a run.
type MethodStats struct {
	mu sync.Mutex
	// logic form
	ByLogic, ByMix                         int
	PlanUnusable, FoundNothing, PrecheckNo int
	// integration
	Integrated, NoLogProbs, NothingKept int
}

// Note sums the stats up for a report, "" when there is nothing to say.
func (s *MethodStats) Note() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	if n := s.ByLogic + s.ByMix; n > 0 {
		parts = append(parts, fmt.Sprintf("logic form answered %d of %d; mix %d (pre-check no %d, plan unusable %d, steps found nothing %d)",
			s.ByLogic, n, s.ByMix, s.PrecheckNo, s.PlanUnusable, s.FoundNothing))
	}
	if s.NoLogProbs > 0 {
		parts = append(parts, fmt.Sprintf("the model returned no token log-probabilities for %d of %d questions: GraphRAG's answer stood", s.NoLogProbs, s.Integrated))
	}
	if s.NothingKept > 0 {
		parts = append(parts, fmt.Sprintf("no candidate met the thresholds for %d questions: GraphRAG's answer stood", s.NothingKept))
	}
	return strings.Join(parts, "; ")
}

// docIDsOf are the documents of a result's passages, best first.
func docIDsOf(res *retrieve.Result) []string {
	ids := make([]string, len(res.Passages))
	for i, p := range res.Passages {
		ids[i] = p.DocID
	}
	return ids
}

// LogicMethod measures --mode logic: HuixiangDou2's logic-form retrieval,
// the pre-check and, when it says no, mix.
func LogicMethod(r *retrieve.Retriever, model llms.Model, setup retrieve.AnswerSetup) (RetrieveFunc, AnswerFunc, *MethodStats) {
	stats := &MethodStats{}
	var last *retrieve.LogicOutcome
	retrieveFn := func(ctx context.Context, q string) ([]string, error) {
		out, err := r.PrepareLogic(ctx, q, setup)
		if err != nil {
			return nil, err
		}
		last = out
		stats.mu.Lock()
		defer stats.mu.Unlock()
		switch {
		case out.AnsweredBy == retrieve.ModeLogic:
			stats.ByLogic++
		case out.Logic.Logic.Error != "":
			stats.ByMix++
			stats.PlanUnusable++
		case out.Precheck == nil:
			stats.ByMix++
			stats.FoundNothing++
		default:
			stats.ByMix++
			stats.PrecheckNo++
		}
		return docIDsOf(out.Result), nil
	}
	answerFn := func(ctx context.Context, q string) (string, error) {
		if last == nil || last.Logic.Question != strings.TrimSpace(q) {
			if _, err := retrieveFn(ctx, q); err != nil {
				return "", err
			}
		}
		a, err := retrieve.Answer(ctx, model, last.Context, nil)
		if err != nil {
			return "", err
		}
		return a.Text, nil
	}
	return retrieveFn, answerFn, stats
}

// IntegratedMethod measures --mode mix --integrate logits: mix retrieval,
// then GraphRAG-FI's integration of the answer from its context (as a
// list) with the model's own.
func IntegratedMethod(r *retrieve.Retriever, model llms.Model, setup retrieve.AnswerSetup, o retrieve.IntegrateOptions) (RetrieveFunc, AnswerFunc, *MethodStats) {
	stats := &MethodStats{}
	var last *retrieve.Result
	retrieveFn := func(ctx context.Context, q string) ([]string, error) {
		res, err := r.Retrieve(ctx, q, retrieve.ModeMix)
		if err != nil {
			return nil, err
		}
		last = res
		return docIDsOf(res), nil
	}
	answerFn := func(ctx context.Context, q string) (string, error) {
		if last == nil || last.Question != strings.TrimSpace(q) {
			if _, err := retrieveFn(ctx, q); err != nil {
				return "", err
			}
		}
		c, err := retrieve.Assemble(last, setup.Tokens, setup.Budget, retrieve.ListAnswer)
		if err != nil {
			return "", err
		}
		msgs, err := c.Messages()
		if err != nil {
			return "", err
		}
		in, err := retrieve.Integrate(ctx, model, msgs, q, o)
		if err != nil {
			return "", err
		}
		stats.mu.Lock()
		stats.Integrated++
		switch {
		case in.NoLogProbs:
			stats.NoLogProbs++
		case in.Fallback != "":
			stats.NothingKept++
		}
		stats.mu.Unlock()
		return in.Answer, nil
	}
	return retrieveFn, answerFn, stats
}

// MetaQADatasets turns MetaQA questions into answer-only datasets, one per
// hop count ("metaqa-2hop"), the topic's brackets removed from the
// question. They have no gold passages: Evaluate reports no recall for
// them, only answers.
func MetaQADatasets(qs map[int][]MetaQAQuestion, hops []int) []*Dataset {
	var out []*Dataset
	for _, h := range hops {
		ds := &Dataset{Name: fmt.Sprintf("metaqa-%dhop", h)}
		for i, q := range qs[h] {
			text := strings.NewReplacer("[", "", "]", "").Replace(q.Question)
			ds.Questions = append(ds.Questions, Question{ID: fmt.Sprintf("%d-hop/%d", h, i+1), Question: text, Answers: q.Answers})
		}
		out = append(out, ds)
	}
	return out
}
