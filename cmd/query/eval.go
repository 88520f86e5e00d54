package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
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
	dir, cleanup, err := workDir(opts.StoreDir, "docgraph-eval-")
	if err != nil {
		return err
	}
	defer cleanup()
	// The model caches (--llm-cache) live beside the eval stores.
	emb, model, done, err := opts.Retrieval.config().OpenModels(ctx, pipeline.Settings{Embedder: opts.Embedder, Store: "sqlite://" + filepath.Join(dir, "eval.db")})
	if err != nil {
		return err
	}
	defer done()
	cfg := opts.Retrieval.Config
	cfg.TopK = max(cfg.TopK, slices.Max(eval.Ks))

	var reports []*eval.Report
	for _, dsDir := range opts.Datasets {
		ds, err := eval.Load(dsDir)
		if err != nil {
			return err
		}
		if opts.Questions > 0 && opts.Questions < len(ds.Questions) {
			ds.Questions = ds.Questions[:opts.Questions]
		}
		st, idx, err := evalStore(ctx, ds, filepath.Join(dir, ds.Name+".db"), emb, opts.Concurrency, io)
		if err != nil {
			return err
		}
		reps, err := evalDataset(ctx, ds, idx, st, emb, model, cfg, modes, opts, io)
		st.Close()
		if err != nil {
			return err
		}
		reports = append(reports, reps...)
	}
	if opts.MetaQA.Dir != "" {
		reps, err := evalMetaQAAnswers(ctx, opts, emb, model, cfg, modes, io)
		if err != nil {
			return err
		}
		reports = append(reports, reps...)
	}
	if opts.JSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	return eval.WriteTable(io.Out, reports)
}

// evalStore opens the dataset's store at path, ingesting the corpus unless
// the store already holds exactly its documents.
func evalStore(ctx context.Context, ds *eval.Dataset, path string, e embedstore.Embedder, concurrency int, io streams) (store.Store, *eval.Index, error) {
	settings := pipeline.Settings{Store: "sqlite://" + path, Concurrency: concurrency}
	st, err := pipeline.OpenStore(ctx, settings, e, pipeline.NewMerger(e))
	if err != nil {
		return nil, nil, err
	}
	_, idx := eval.Documents(ds)
	if stats, err := st.Stats(ctx); err == nil && stats.ByStatus[store.StatusDone] == idx.Documents() {
		fmt.Fprintf(io.Err, "%s: reusing %s (%d documents)\n", ds.Name, path, idx.Documents())
		return st, idx, nil
	}
	p, err := pipeline.Offline(settings, e, st)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	start := time.Now()
	next := 0
	idx, err = eval.Ingest(ctx, ds, p, st, concurrency, func(done, total int) {
		if pct := done * 10 / total; pct >= next {
			next = pct + 1
			fmt.Fprintf(io.Err, "%s: ingested %d/%d passages\n", ds.Name, done, total)
		}
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	fmt.Fprintf(io.Err, "%s: ingested %d passages into %d documents in %s\n", ds.Name, len(ds.Passages), idx.Documents(), time.Since(start).Round(time.Second))
	return st, idx, nil
}

func evalDataset(ctx context.Context, ds *eval.Dataset, idx *eval.Index, st store.Store, emb embedstore.Embedder, model llms.Model,
	cfg retrieve.Config, modes []string, opts *evalOptions, io streams) ([]*eval.Report, error) {
	var reports []*eval.Report
	add := func(r *eval.Report) {
		reports = append(reports, r)
		fmt.Fprintf(io.Err, "%s %s: R@2 %.1f R@5 %.1f p50 %s\n", r.Dataset, r.Method, r.Recall[2], r.Recall[5], r.P50.Round(100*time.Microsecond))
	}
	if slices.Contains(opts.Baselines, "bm25") {
		k := slices.Max(eval.Ks)
		rep, err := eval.Evaluate(ctx, ds, idx, "bm25", func(ctx context.Context, q string) ([]string, error) {
			hits, err := st.SearchChunksText(ctx, q, k)
			return docIDs(hits), err
		}, nil)
		if err != nil {
			return nil, err
		}
		rep.Note = "SQLite FTS5 BM25 over the question's words, this store"
		add(rep)
		if script := eval.FindBM25Tool(ds.Dir); script != "" {
			if _, err := exec.LookPath("python3"); err == nil {
				if rep, err := eval.RunBM25Tool(ctx, script, ds); err == nil {
					add(rep)
				} else {
					fmt.Fprintln(io.Err, "warning:", err)
				}
			}
		}
	}
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		return nil, err
	}
	for _, mode := range modes {
		r := retrieve.New(st, emb, retrieve.WithConfig(cfg), retrieve.WithModel(model))
		if mode == retrieve.ModeLogic {
			rep, err := evalAnswerMethod(ctx, ds, idx, r, model, mode, opts, tok)
			if err != nil {
				return nil, err
			}
			add(rep)
			continue
		}
		// Warm the caches (vectors, the passage graph around the first
		// question, the path graph) before timing.
		if _, err := r.Retrieve(ctx, ds.Questions[0].Question, mode); err != nil {
			return nil, err
		}
		// Evaluate answers right after retrieving: the answer reuses the
		// retrieval it was timed on.
		var last *retrieve.Result
		retrieveFn := func(ctx context.Context, q string) ([]string, error) {
			res, err := r.Retrieve(ctx, q, mode)
			if err != nil {
				return nil, err
			}
			last = res
			ids := make([]string, len(res.Passages))
			for i, p := range res.Passages {
				ids[i] = p.DocID
			}
			return ids, nil
		}
		var answerFn eval.AnswerFunc
		if model != nil {
			answerFn = func(ctx context.Context, q string) (string, error) {
				res := last
				if res == nil || res.Question != strings.TrimSpace(q) {
					var err error
					if res, err = r.Retrieve(ctx, q, mode); err != nil {
						return "", err
					}
				}
				c, err := retrieve.Assemble(res, tok, opts.Retrieval.budget(), shortAnswer)
				if err != nil {
					return "", err
				}
				a, err := retrieve.Answer(ctx, model, c, nil)
				if errors.Is(err, retrieve.ErrNoAnswer) {
					return "", nil // an empty or cut-off answer scores as wrong
				}
				if err != nil {
					return "", err
				}
				return a.Text, nil
			}
		}
		rep, err := eval.Evaluate(ctx, ds, idx, mode, retrieveFn, answerFn)
		if err != nil {
			return nil, err
		}
		add(rep)
		if opts.Answer.Integrate != "" && mode == retrieve.ModeMix {
			rep, err := evalAnswerMethod(ctx, ds, idx, r, model, mode+"+"+opts.Answer.Integrate, opts, tok)
			if err != nil {
				return nil, err
			}
			add(rep)
		}
	}
	return reports, nil
}

// shortAnswer makes the model's answer comparable with the gold answers.
const shortAnswer = "only the answer itself: a name, date, number or yes/no, with no sentence around it"

func docIDs(hits []store.ChunkHit) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.DocID
	}
	return ids
}

// workDir is the folder eval stores go in: dir when given (kept and reused),
// else a temporary folder that done removes.
func workDir(dir, prefix string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}
