package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/server"
)

// modePath is `query --mode path`: LEGO-GraphRAG reasoning paths.
const modePath = server.ModePath

// pathFlags are path retrieval's knobs, shared by `query --mode path` and
// `query eval --metaqa`. Flags another part of the command already
// defines (--top-k, --damping) are read from there, with path retrieval's
// own default when the user did not set them.
type pathFlags struct {
	fs *pflag.FlagSet
	server.PathConfig
	Restart float64
	Seeds   []string
}

func (f *pathFlags) add(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringArrayVar(&f.Specs, "paths", nil, `path modules, e.g. "se=ppr,pf=beam:bm25,pr=emb" or "lego:9" (default `+paths.RecommendedSpec+`; repeatable in eval); in path mode --top-k counts paths (default 64) and --damping defaults to 0.8`)
	fs.IntVar(&f.MaxEnt, "max-ent", 1000, "path mode: entities subgraph extraction keeps")
	fs.IntVar(&f.MaxHop, "max-hop", 3, "path mode: longest path, in relations")
	fs.IntVar(&f.BeamWidth, "beam-width", 8, "path mode: beam search width")
	fs.IntVar(&f.MaxBeam, "max-beam", 0, "path mode: most paths dynamic pruning keeps per step (default 16x the width)")
	fs.Float64Var(&f.Restart, "restart", 0, "path mode: PPR/RWR restart probability, 1-damping (default 0.2: damping 0.8 as LEGO-GraphRAG)")
	fs.Float64Var(&f.PushEps, "push-eps", 5e-6, "path mode: approximate PPR's residual threshold per unit of degree")
	fs.BoolVar(&f.Triple, "triple-scoring", false, "path mode: beam search scores only each step's new triple")
	fs.BoolVar(&f.Dynamic, "dynamic-pruning", false, "path mode: beam search keeps candidates above the step's mean score")
	fs.IntVar(&f.PerTarget, "per-target", 8, "path mode: shortest paths kept per target entity")
	fs.IntVar(&f.MaxPaths, "max-paths", 10000, "path mode: candidate paths per seed entity")
	fs.IntVar(&f.PerEnd, "per-end", 1, "path mode: refined paths kept per end entity (0: all)")
	fs.StringArrayVar(&f.Seeds, "seed", nil, "path mode: start from this entity (repeatable; default: entities named in the question)")
	fs.StringVar(&f.Filter, "filter", "", `path mode: "fi" filters paths with GraphRAG-FI (needs --llm)`)
	fs.Float64Var(&f.FIThreshold, "fi-threshold", 0.5, "path mode: GraphRAG-FI coarse filter, share of the score range a path must reach")
	fs.IntVar(&f.FICoarse, "fi-coarse", 40, "path mode: most paths the coarse filter passes to the LLM")
	if fs.Lookup("top-k") == nil {
		fs.IntVar(&f.TopK, "top-k", server.DefaultPathTopK, "paths kept by refinement")
	}
	if fs.Lookup("damping") == nil {
		fs.Float64Var(&f.Damping, "damping", server.DefaultPathDamping, "PPR/RWR: probability of following an edge")
	}
}

// topK is --top-k when set, else 64 (a shared --top-k counts passages).
func (f *pathFlags) topK() int {
	if fl := f.fs.Lookup("top-k"); fl != nil && fl.Changed {
		n, _ := strconv.Atoi(fl.Value.String())
		return n
	}
	return server.DefaultPathTopK
}

// damping is 1-restart with --restart, --damping when set, else 0.8.
func (f *pathFlags) damping() (float64, error) {
	restart, damp := f.fs.Lookup("restart"), f.fs.Lookup("damping")
	switch {
	case restart.Changed && damp != nil && damp.Changed:
		return 0, errors.New("--restart and --damping are the same knob (restart = 1 - damping); give one")
	case restart.Changed:
		if !(f.Restart > 0 && f.Restart <= 1) {
			return 0, fmt.Errorf("--restart %v outside (0, 1]", f.Restart)
		}
		return 1 - f.Restart, nil
	case damp != nil && damp.Changed:
		return strconv.ParseFloat(damp.Value.String(), 64)
	}
	return server.DefaultPathDamping, nil
}

func (f *pathFlags) specs() ([]paths.Spec, error) {
	return server.PathConfig{Specs: f.Specs}.ParsedSpecs()
}

// config is the flags as the query server's path configuration, --top-k
// and --damping (or --restart) resolved.
func (f *pathFlags) config() (server.PathConfig, error) {
	d, err := f.damping()
	if err != nil {
		return server.PathConfig{}, err
	}
	c := f.PathConfig
	c.TopK, c.Damping = f.topK(), d
	return c, nil
}

// options turns the flags into retriever options.
func (f *pathFlags) options(emb embedstore.Embedder, model llms.Model) ([]paths.Option, error) {
	c, err := f.config()
	if err != nil {
		return nil, err
	}
	return c.Options(emb, model)
}

// metaqaFlags are `query eval --metaqa`'s own flags.
type metaqaFlags struct {
	Dir  string
	Hops []int
}

func (m *metaqaFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&m.Dir, "metaqa", "", "evaluate path retrieval on a MetaQA directory (kb.txt, {1,2,3}-hop/qa_dev.txt) instead of --dataset")
	fs.IntSliceVar(&m.Hops, "hops", []int{1, 2, 3}, "MetaQA: hop counts to evaluate")
}

// runMetaQA imports the MetaQA KB into a store (reused from --store-dir
// when it already holds it), evaluates every --paths spec on the first
// --questions questions of each hop count, and with --baseline igraph
// compares PPR with igraph's on the same questions.
func runMetaQA(ctx context.Context, opts *evalOptions, io streams) error {
	m := opts.MetaQA
	for _, b := range opts.Baselines {
		if b != "igraph" {
			return fmt.Errorf("unknown baseline %q for --metaqa (available: igraph)", b)
		}
	}
	specs, err := opts.Paths.specs()
	if err != nil {
		return err
	}
	d, err := opts.Paths.damping()
	if err != nil {
		return err
	}
	run := eval.MetaQARun{Dir: m.Dir, StoreDir: opts.StoreDir, Hops: m.Hops, Specs: specs, TopK: opts.Paths.topK(),
		Igraph: len(opts.Baselines) > 0, Damping: d, PushEps: opts.Paths.PushEps, Log: io.Err}
	res, err := eval.MeasureMetaQA(ctx, run, opts.Questions, opts.openModels, opts.Paths.options)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	limit := opts.Questions
	if limit <= 0 {
		limit = eval.DefaultMetaQAQuestions
	}
	return res.WriteText(io.Out, limit, opts.Paths.topK())
}
