package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/server"
)

// The answer-side methods: GraphRAG-FI's logits-based integration
// (--integrate logits, path and mix modes) and HuixiangDou2's logic-form
// retrieval with its pre-check (--mode logic). Both need a model; without
// --llm they refuse with a message rather than run without one.

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
	for _, name := range []string{"tau-g", "tau-l"} {
		if f.fs.Lookup(name).Changed && f.Integrate == "" {
			return fmt.Errorf("--%s is a threshold of --integrate logits; give --integrate logits too", name)
		}
	}
	return server.CheckAnswerMethods(modes, integrated, f.Integrate, f.options(), strings.TrimSpace(llmSpec) != "")
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
