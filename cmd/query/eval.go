package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
)

// evalOptions is everything one evaluation run needs.
type evalOptions struct {
	Config      string
	Datasets    []string
	Modes       string
	Baselines   []string
	StoreDir    string
	Questions   int
	Concurrency int
	Embedder    string
	JSON        bool
	Retrieval   retrievalFlags
	MetaQA      metaqaFlags // --metaqa (paths.go)
	Paths       pathFlags
	Answer      answerFlags // --mode logic, --integrate (integrate.go)
}

func newEvalCmd(io streams) *cobra.Command {
	opts := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval --dataset DIR [--mode M] [--baseline bm25]",
		Short: "Measure retrieval (Recall@2/@5, latency) and answers (EM/F1) on a benchmark",
		Long: `eval ingests a benchmark corpus (DIR/corpus.jsonl, each passage one
document titled by its title) into a fresh SQLite store, runs every question
of DIR/questions.jsonl in the chosen modes and prints Recall@2 and Recall@5
(HippoRAG's definition: the share of a question's gold passages in the top
k), p50/p95 retrieval latency and, with --llm, exact match and F1 of the answers.

--mode takes a comma-separated list or "all". --baseline bm25 adds plain
full-text search on the same store and, when python3 and the shared
tools/bm25_baseline.py are there, that script's numbers measured in the same run.
--store-dir keeps the ingested stores there and reuses them on the next run.`,
		Args: cli.Args(cobra.NoArgs, "eval takes no arguments: name the benchmark with --dataset DIR or --metaqa DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				return err
			}
			opts.Retrieval.Log = io.Err
			return runEval(cmd.Context(), opts, io)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	fs.StringSliceVar(&opts.Datasets, "dataset", nil, "benchmark directory with corpus.jsonl and questions.jsonl (repeatable)")
	fs.StringVar(&opts.Modes, "mode", retrieve.ModeMix, `modes to measure, comma-separated, or "all"`)
	fs.StringSliceVar(&opts.Baselines, "baseline", nil, "baselines to measure beside: bm25")
	fs.StringVar(&opts.StoreDir, "store-dir", "", "keep the ingested stores in this folder and reuse them (default: a temporary folder)")
	fs.IntVar(&opts.Questions, "questions", 0, "evaluate only the first N questions (0: all)")
	fs.IntVar(&opts.Concurrency, "concurrency", 4, "passages ingested at once")
	fs.StringVar(&opts.Embedder, "embedder", "hash", "embedder: hash[:DIM] (offline)")
	fs.BoolVar(&opts.JSON, "json", false, "print the reports as JSON")
	opts.Retrieval.add(fs)
	opts.MetaQA.add(fs)
	opts.Paths.add(fs)
	opts.Answer.add(fs)
	return cmd
}

func runEval(ctx context.Context, opts *evalOptions, io streams) error {
	if opts.MetaQA.Dir != "" && !metaqaAnswers(opts) {
		return runMetaQA(ctx, opts, io)
	}
	if len(opts.Datasets) == 0 && opts.MetaQA.Dir == "" {
		return cli.Usagef("no benchmark given: --dataset DIR (or --metaqa DIR)")
	}
	modes := strings.Split(opts.Modes, ",")
	if opts.Modes == "all" {
		modes = []string{retrieve.ModeNaive, retrieve.ModeLocal, retrieve.ModeGlobal, retrieve.ModeHybrid, retrieve.ModeMix}
	}
	for i, m := range modes {
		modes[i] = strings.TrimSpace(m)
		if !validMode(modes[i]) {
			return cli.Usagef("--mode %q: unknown mode for eval --dataset (available: %s, all; path retrieval is measured with --metaqa)", modes[i], strings.Join(retrieve.Modes(), ", "))
		}
	}
	for _, b := range opts.Baselines {
		if b != "bm25" {
			return cli.Usagef("--baseline %q: unknown baseline (available: bm25)", b)
		}
	}
	if err := opts.Answer.checkEval(modes, opts); err != nil {
		return err
	}
	b := eval.Bench{Datasets: opts.Datasets, Questions: opts.Questions, Concurrency: opts.Concurrency, StoreDir: opts.StoreDir,
		MetaQA: opts.MetaQA.Dir, Hops: opts.MetaQA.Hops, Methods: eval.Methods{Retrieval: opts.Retrieval.Config, Budget: opts.Retrieval.budget(),
			Modes: modes, BM25: slices.Contains(opts.Baselines, "bm25"), Integrate: opts.Answer.Integrate, IntegrateOptions: opts.Answer.options(), Log: io.Err}}
	reports, err := b.Run(ctx, opts.openModels)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	return eval.WriteTable(io.Out, reports)
}

// openModels opens the models the flags name, their caches in the store
// storeURL names: beside the eval stores, not in ./.docgraph.
func (o *evalOptions) openModels(ctx context.Context, storeURL string) (embedstore.Embedder, llms.Model, func(), error) {
	return o.Retrieval.config().OpenModels(ctx, pipeline.Settings{Embedder: o.Embedder, Store: storeURL})
}
