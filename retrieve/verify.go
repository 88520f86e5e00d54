package retrieve

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/prompts"
)

// HuixiangDou2's pre-check verifier (paper 001, Algorithm 3 and Table 7)
// and its multi-stage degradation (section 5.3): before answering from the
// logic-form context, the model is asked whether that context supports an
// answer, and its yes or no is read strictly. On a yes the logic form
// answers; on anything else, or when the plan was unusable or its steps
// found nothing, mix retrieval answers instead. Nothing has streamed by
// then, so the answer streams whichever path gives it.

// Precheck is the pre-check's verdict.
type Precheck struct {
	// Answer is the model's reply, as written.
	Answer string `json:"answer"`
	// Valid says the reply was a plain yes or no; anything else counts as no.
	Valid     bool `json:"valid"`
	Supported bool `json:"supported"`
}

// AnswerSetup is how a result becomes the context of an answer.
type AnswerSetup struct {
	Tokens       TokenCounter
	Budget       Budget
	ResponseType string
}

// LogicOutcome is logic-form retrieval with its pre-check: which path
// answers, and its context.
type LogicOutcome struct {
	// Logic is logic-form retrieval's result, with its plan and steps.
	Logic *Result `json:"logic"`
	// Precheck is nil when the model was not asked (no usable plan, or
	// the steps found nothing).
	Precheck *Precheck `json:"precheck"`
	// AnsweredBy is "logic" or "mix"; Reason says why mix answers.
	AnsweredBy string `json:"answered_by"`
	Reason     string `json:"reason,omitempty"`
	// Result is what answers (Logic, or mix's result) and Context its
	// assembled context.
	Result  *Result  `json:"-"`
	Context *Context `json:"-"`
}

// PrepareLogic runs logic-form retrieval and the pre-check, falling back
// to mix retrieval when the logic form cannot answer. Answer the outcome's
// Context with Answer.
func (r *Retriever) PrepareLogic(ctx context.Context, question string, a AnswerSetup) (*LogicOutcome, error) {
	res, err := r.Retrieve(ctx, question, ModeLogic)
	if err != nil {
		return nil, err
	}
	out := &LogicOutcome{Logic: res}
	switch {
	case res.Logic.Error != "":
		out.Reason = "the decomposition was unusable: " + res.Logic.Error
	case !res.Logic.Found():
		out.Reason = "the logic-form steps found nothing"
	default:
		c, err := Assemble(res, a.Tokens, a.Budget, a.ResponseType)
		if err != nil {
			return nil, err
		}
		pc, err := r.precheck(ctx, res, c)
		if err != nil {
			return nil, err
		}
		out.Precheck = pc
		if pc.Supported {
			out.AnsweredBy, out.Result, out.Context = ModeLogic, res, c
			return out, nil
		}
		out.Reason = "the pre-check found the logic-form context insufficient"
		if !pc.Valid {
			out.Reason = fmt.Sprintf("the pre-check answer %q is not yes or no", clip(pc.Answer, 40))
		}
	}
	mix, err := r.Retrieve(ctx, question, ModeMix)
	if err != nil {
		return nil, fmt.Errorf("fall back to mix: %w", err)
	}
	c, err := Assemble(mix, a.Tokens, a.Budget, a.ResponseType)
	if err != nil {
		return nil, err
	}
	out.AnsweredBy, out.Result, out.Context = ModeMix, mix, c
	return out, nil
}

// precheck asks whether the context supports an answer
// (prompts/templates/precheck.tmpl), read strictly as yes or no.
func (r *Retriever) precheck(ctx context.Context, res *Result, c *Context) (*Precheck, error) {
	prompt, err := prompts.RenderPrecheck(prompts.PrecheckData{Question: res.Question, Context: c.String()})
	if err != nil {
		return nil, err
	}
	reply, err := llms.GenerateFromSinglePrompt(ctx, r.model, prompt, llms.WithTemperature(0))
	if err != nil {
		return nil, fmt.Errorf("logic form: pre-check: %w", err)
	}
	yes, ok := ner.ParseJudge(reply)
	return &Precheck{Answer: reply, Valid: ok, Supported: ok && yes}, nil
}
