package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/server"
)

// The answer-side methods: GraphRAG-FI's logits-based integration
// (--integrate logits, path and mix modes) and HuixiangDou2's logic-form
// retrieval with its pre-check (--mode logic). Both need a model; without
// --llm they refuse with a message rather than run without one.

const integrateLogits = "logits"

// answerFlags are the answer-side flags query and eval share.
type answerFlags struct {
	fs         *pflag.FlagSet
	Integrate  string
	TauG, TauL float64
}

func (f *answerFlags) add(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.Integrate, "integrate", "", `"logits": GraphRAG-FI integration, the retrieved answer and the model's own weighed by token log-probabilities (mix and path modes; needs --llm)`)
	fs.Float64Var(&f.TauG, "tau-g", retrieve.DefaultTauG, "--integrate logits: keep answers from the retrieved context at or above this confidence (0..1)")
	fs.Float64Var(&f.TauL, "tau-l", retrieve.DefaultTauL, "--integrate logits: keep the model's own answers at or above this confidence (0..1)")
}

func (f *answerFlags) options() retrieve.IntegrateOptions {
	return retrieve.IntegrateOptions{TauG: f.TauG, TauL: f.TauL}
}

// check validates the flags for the modes a run uses, --integrate applying
// to those in integrated: --integrate names a known method and modes it
// works with, the thresholds are probabilities and come with it, and what
// needs a model has one.
func (f *answerFlags) check(modes, integrated []string, llmSpec string) error {
	noLLM := strings.TrimSpace(llmSpec) == ""
	for _, name := range []string{"tau-g", "tau-l"} {
		fl := f.fs.Lookup(name)
		v := f.TauG
		if name == "tau-l" {
			v = f.TauL
		}
		if fl.Changed && f.Integrate == "" {
			return fmt.Errorf("--%s is a threshold of --integrate logits; give --integrate logits too", name)
		}
		if v < 0 || v > 1 {
			return fmt.Errorf("--%s %v: a confidence is between 0 and 1", name, v)
		}
	}
	switch f.Integrate {
	case "":
	case integrateLogits:
		for _, m := range integrated {
			if m != retrieve.ModeMix && m != modePath {
				return fmt.Errorf("--integrate logits works with --mode mix or path, not %s", m)
			}
		}
		if noLLM {
			return errors.New("--integrate logits needs --llm: it weighs the model's answers by their token log-probabilities, and offline there is no model to ask")
		}
	default:
		return fmt.Errorf("--integrate %q: unknown method (available: logits)", f.Integrate)
	}
	for _, m := range modes {
		if m == retrieve.ModeLogic && noLLM {
			return errors.New("--mode logic needs --llm: the model decomposes the question into steps and checks their result (offline, use --mode mix)")
		}
	}
	return nil
}

// runAnswerModes runs --mode logic and --integrate logits for mix; it
// reports whether it handled the query (path mode integrates in
// runPathQuery).
func runAnswerModes(ctx context.Context, opts *queryOptions, io streams) (bool, error) {
	a := &opts.Answer
	if err := a.check([]string{opts.Mode}, []string{opts.Mode}, opts.Retrieval.LLM); err != nil {
		return true, err
	}
	if a.Integrate != "" && a.fs.Lookup("response-type").Changed {
		return true, errors.New("--response-type and --integrate logits do not go together: integration needs the answer as a list")
	}
	switch {
	case opts.Mode == retrieve.ModeLogic:
		return true, runLogicQuery(ctx, opts, io)
	case a.Integrate != "" && opts.Mode == retrieve.ModeMix:
		return true, runMixIntegrated(ctx, opts, io)
	}
	return false, nil
}

// runLogicQuery is --mode logic: HuixiangDou2's logic-form retrieval, the
// pre-check, and the answer from the logic form or, when it cannot
// answer, from mix; the answer streams either way.
func runLogicQuery(ctx context.Context, opts *queryOptions, io streams) error {
	s, err := openSession(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	start := time.Now()
	out, err := s.Logic(ctx, opts.Question)
	if err != nil {
		return err
	}
	verdict := "answered by the logic form (pre-check: yes)"
	if out.AnsweredBy != retrieve.ModeLogic {
		verdict = "answered by mix: " + out.Reason
	}
	server.Step(ctx, "answer")
	switch {
	case opts.ContextOnly:
		fmt.Fprintf(io.Err, "query: %s\n", verdict)
		fmt.Fprint(io.Out, out.Context.String())
		return nil
	case opts.JSON:
		t := time.Now()
		a, err := retrieve.Answer(ctx, s.Model, out.Context, nil)
		if err != nil {
			return err
		}
		out.Result.Timings["answer"] = time.Since(t)
		out.Result.Timings["total"] = time.Since(start)
		doc := server.NewResponse(out.Result, out.Context)
		doc.SetAnswer(a)
		doc.Mode = retrieve.ModeLogic
		doc.Logic, doc.Precheck, doc.AnsweredBy, doc.FallbackReason = out.Logic.Logic, out.Precheck, out.AnsweredBy, out.Reason
		return doc.Write(ctx, io.Out)
	}
	fmt.Fprintf(io.Out, "logic form: %d step(s)\n", len(out.Logic.Logic.Steps))
	if e := out.Logic.Logic.Error; e != "" {
		fmt.Fprintln(io.Out, "  plan unusable:", e)
	}
	for _, l := range retrieve.LogicHistory(out.Logic) {
		fmt.Fprintln(io.Out, l)
	}
	fmt.Fprintf(io.Out, "\n%s\n\n", verdict)
	return streamAnswer(ctx, s.Model, out.Context, io.Out)
}

// streamAnswer streams the model's cited answer, then the sources it cites.
func streamAnswer(ctx context.Context, model llms.Model, c *retrieve.Context, w io.Writer) error {
	out := &lineWriter{w: w}
	a, err := retrieve.Answer(ctx, model, c, out)
	out.endLine()
	if err != nil {
		return out.cut(err)
	}
	printSources(w, a.Cited())
	return nil
}

func printSources(w io.Writer, sources []retrieve.Source) {
	if len(sources) == 0 {
		return
	}
	fmt.Fprintln(w, "\nSources:")
	for _, s := range sources {
		fmt.Fprintf(w, "[%d] %s (chunk %d)\n", s.N, displayPath(s.DocPath), s.Index)
	}
}

// runMixIntegrated is --mode mix --integrate logits: mix retrieval, then
// GraphRAG-FI's integration of the answer from its context with the
// model's own.
func runMixIntegrated(ctx context.Context, opts *queryOptions, io streams) error {
	s, err := openSession(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	start := time.Now()
	res, err := s.Retrieve(ctx, opts.Question, retrieve.ModeMix)
	if err != nil {
		return err
	}
	c, err := s.Context(res, retrieve.ListAnswer)
	if err != nil {
		return err
	}
	if opts.ContextOnly {
		fmt.Fprint(io.Out, c.String())
		return nil
	}
	msgs, err := c.Messages()
	if err != nil {
		return err
	}
	in, err := s.Integrate(ctx, msgs, opts.Question, opts.Answer.options(), res.Timings)
	if err != nil {
		return err
	}
	res.Timings["total"] = time.Since(start)
	if in.Fallback != "" {
		fmt.Fprintf(io.Err, "query: note: %s\n", in.Fallback)
	}
	sources := server.CitedSources(c.Sources, in)
	if opts.JSON {
		doc := server.NewResponse(res, c)
		doc.Answer, doc.Sources, doc.Integration = in.Answer, sources, in
		return doc.Write(ctx, io.Out)
	}
	printIntegration(io.Out, in, nil)
	var cited []retrieve.Source
	for _, s := range sources {
		if s.Cited {
			cited = append(cited, s)
		}
	}
	printSources(io.Out, cited)
	return nil
}

// printIntegration prints the final answer, one candidate a line with
// where it comes from and its confidence; from gives extra lines under a
// candidate (path mode: the chunks its paths came from).
func printIntegration(w io.Writer, in *retrieve.Integration, from func(f retrieve.Final) string) {
	if in.Fallback != "" {
		fmt.Fprintln(w, strings.TrimSpace(in.Answer))
		return
	}
	width := 0
	lines := make([]string, len(in.Final))
	for i, f := range in.Final {
		lines[i] = f.Line()
		width = max(width, len(lines[i]))
	}
	for i, f := range in.Final {
		var why string
		switch f.From {
		case "graphrag":
			why = fmt.Sprintf("retrieved, confidence %.2f", *f.ConfidenceG)
		case "llm_only":
			why = fmt.Sprintf("model alone, confidence %.2f", *f.ConfidenceL)
		default:
			why = fmt.Sprintf("retrieved %.2f and model alone %.2f", *f.ConfidenceG, *f.ConfidenceL)
		}
		fmt.Fprintf(w, "%-*s  (%s)\n", width, lines[i], why)
		if from != nil {
			if s := from(f); s != "" {
				fmt.Fprintf(w, "    from: %s\n", s)
			}
		}
	}
}

// integratePaths is --mode path --integrate logits: the paths' answer
// prompt (GraphRAG-FI's Figure 5) is the GraphRAG side of the integration.
func integratePaths(ctx context.Context, opts *queryOptions, io streams, s *server.Session, run *server.PathRun,
	passages []retrieve.Passage, sources map[string]server.PathSource) error {
	res := run.Result
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, run.Prompt)}
	in, err := s.Integrate(ctx, msgs, opts.Question, opts.Answer.options(), res.Timings)
	if err != nil {
		return err
	}
	if in.Fallback != "" {
		fmt.Fprintf(io.Err, "query: note: %s\n", in.Fallback)
	}
	chunks := server.CandidateChunks(res.Paths, in)
	if opts.JSON {
		doc := server.NewPathResponse(res, passages)
		doc.Answer, doc.Integration, doc.CandidateChunks = in.Answer, in, chunks
		return doc.Write(ctx, io.Out)
	}
	printPaths(io, res, sources, run.Priority, run.Additional)
	fmt.Fprintln(io.Out, "\nAnswer:")
	printIntegration(io.Out, in, func(f retrieve.Final) string {
		var where []string
		for _, id := range chunks[f.Text] {
			if s, ok := sources[id]; ok {
				where = append(where, fmt.Sprintf("%s chunk %d", displayPath(s.DocPath), s.Index))
			}
		}
		return strings.Join(where, "; ")
	})
	return nil
}

// checkEval validates the answer flags of an eval run: --integrate adds
// a "mix+logits" method beside mix, so mix must be among the modes.
func (f *answerFlags) checkEval(modes []string, opts *evalOptions) error {
	var integrable []string
	for _, m := range modes {
		if m == retrieve.ModeMix {
			integrable = append(integrable, m)
		}
	}
	if f.Integrate != "" && len(integrable) == 0 {
		return errors.New("--integrate logits adds mix+logits beside mix; give --mode with mix")
	}
	if err := f.check(modes, integrable, opts.Retrieval.LLM); err != nil {
		return err
	}
	if opts.MetaQA.Dir != "" && strings.TrimSpace(opts.Retrieval.LLM) == "" {
		return errors.New("--metaqa with --mode or --dataset measures answers, which needs --llm (without it, --metaqa alone measures path retrieval)")
	}
	return nil
}

// metaqaAnswers says whether --metaqa is to be answered in the modes, like
// a dataset (when --mode, --integrate or --dataset is given), rather than
// measured for path retrieval.
func metaqaAnswers(opts *evalOptions) bool {
	return len(opts.Datasets) > 0 || opts.Answer.Integrate != "" || opts.Answer.fs.Lookup("mode").Changed
}
