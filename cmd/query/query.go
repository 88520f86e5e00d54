package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tmc/langchaingo/llms"

	"docgraph/embedstore"
	"docgraph/llm"
	"docgraph/pipeline"
	"docgraph/retrieve"
	"docgraph/splitter"
)

// streams are the command's input and output, injectable for tests.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// retrievalFlags are the retrieval and answering knobs query and eval share.
type retrievalFlags struct {
	Config           retrieve.Config
	LLM              string
	MaxContextTokens int
	ResponseType     string
}

func (f *retrievalFlags) add(fs *pflag.FlagSet) {
	d := retrieve.DefaultConfig()
	f.Config = d
	fs.IntVar(&f.Config.TopK, "top-k", d.TopK, "passages kept after reranking")
	fs.IntVar(&f.Config.Candidates, "candidates", d.Candidates, "hits each chunk path contributes before fusion")
	fs.IntVar(&f.Config.MaxEntities, "max-entities", d.MaxEntities, "entities kept from discovery")
	fs.IntVar(&f.Config.MaxRelations, "max-relations", d.MaxRelations, "relationships kept from expansion")
	fs.IntVar(&f.Config.FactTopK, "fact-top-k", d.FactTopK, "relation (fact) vector search results")
	fs.Float64Var(&f.Config.FactThreshold, "fact-threshold", d.FactThreshold, "facts below this similarity are dropped...")
	fs.IntVar(&f.Config.MinFacts, "min-facts", d.MinFacts, "...but this many best facts are always kept")
	fs.Float64Var(&f.Config.Damping, "damping", d.Damping, "Personalized PageRank: probability of following an edge")
	fs.IntVar(&f.Config.Graph.MaxEntityChunks, "max-entity-chunks", d.Graph.MaxEntityChunks, "entities in more chunks than this are left out of the graph ranking (0: keep all)")
	fs.Float64Var(&f.Config.Weights.Paths, "path-weight", d.Weights.Paths, "mix: weight of the reasoning-path signal (0: off)")
	fs.StringVar(&f.Config.PathSpec, "path-signal", retrieve.DefaultPathSpec, "mix: path modules behind the path signal (see --paths)")
	fs.BoolVar(&f.Config.Cypher, "cypher", false, "also ask the LLM for a read-only Cypher query (Neo4j stores only)")
	fs.IntVar(&f.Config.CypherLimit, "cypher-limit", d.CypherLimit, "rows kept from the Cypher query")
	fs.StringVar(&f.LLM, "llm", "", "language model as provider:model (openai:gpt-4o-mini, ollama:qwen2.5, anthropic:...); empty: no answers, offline keywords")
	fs.IntVar(&f.MaxContextTokens, "max-context-tokens", retrieve.DefaultBudget().MaxTokens, "largest prompt sent to the LLM, in tokens (cl100k)")
	fs.StringVar(&f.ResponseType, "response-type", "", `answer shape, e.g. "a short answer" (default: a few paragraphs)`)
}

// model opens the configured LLM, or returns nil without one.
func (f *retrievalFlags) model() (*llm.Client, error) {
	if strings.TrimSpace(f.LLM) == "" {
		return nil, nil
	}
	return llm.New(f.LLM)
}

// openModels builds the embedder s names (a provider's caches beside
// s.Store) and the chat model the flags name (nil without --llm); done
// releases both.
func (f *retrievalFlags) openModels(ctx context.Context, s pipeline.Settings) (emb embedstore.Embedder, model llms.Model, done func(), err error) {
	emb, err = pipeline.OpenEmbedder(ctx, s)
	if err != nil {
		return nil, nil, nil, err
	}
	client, err := f.model()
	if err != nil {
		pipeline.CloseEmbedder(emb)
		return nil, nil, nil, err
	}
	done = func() { pipeline.CloseEmbedder(emb) }
	if client != nil {
		model = client
		done = func() { client.Close(); pipeline.CloseEmbedder(emb) }
	}
	return emb, model, done, nil
}

func (f *retrievalFlags) budget() retrieve.Budget {
	b := retrieve.DefaultBudget()
	b.MaxTokens = f.MaxContextTokens
	return b
}

// queryOptions is everything one query needs.
type queryOptions struct {
	Settings    pipeline.Settings
	Config      string
	Question    string
	Mode        string
	JSON        bool
	ContextOnly bool
	CPUProfile  string
	Retrieval   retrievalFlags
	Paths       pathFlags // --mode path (paths.go)
}

func newRootCmd(io streams) *cobra.Command {
	opts := &queryOptions{}
	cmd := &cobra.Command{
		Use:   `query [flags] "question"`,
		Short: "Answer a question from the knowledge graph, citing its sources",
		Long: `query searches the knowledge graph built by ingest. Modes:

  mix     (default) multi-path: full-text, vector, entity mentions, 2-hop
          relations and Personalized PageRank from the question's entities,
          fused and reranked, with entities, relationships and facts
  local   LightRAG low level: keywords -> entities -> relations and chunks
  global  LightRAG high level: keywords -> relations -> entities and chunks
  hybrid  local and global merged
  naive   full-text and vector chunk search only
  path    reasoning paths (Entity -[relation]-> Entity) by LEGO-GraphRAG
          modules chosen with --paths, e.g. se=ppr,pf=beam:bm25,pr=emb

With --llm the answer streams to the terminal, citing passages as [n], and
a sources list follows; without one the ranked passages are printed.
--context-only prints the context the LLM would get; --json prints answer,
sources, passages, entities, relations and per-stage timings.

Every flag can also be set as DOCGRAPH_<FLAG> or in docgraph.yaml.`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				fmt.Fprintln(io.Err, "query:", err)
				return err
			}
			opts.Question = args[0]
			if err := runQuery(cmd.Context(), opts, io); err != nil {
				fmt.Fprintln(io.Err, "query:", err)
				return err
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	fs.StringVar(&opts.Mode, "mode", retrieve.ModeMix, "retrieval mode: "+strings.Join(retrieve.Modes(), ", "))
	fs.BoolVar(&opts.JSON, "json", false, "print answer, sources, passages, graph context and stage timings as JSON")
	fs.BoolVar(&opts.ContextOnly, "context-only", false, "print only the assembled context")
	fs.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile to this file")
	_ = fs.MarkHidden("cpuprofile")
	opts.Retrieval.add(fs)
	opts.Paths.add(fs)
	cmd.AddCommand(newEvalCmd(io), newServeCmd(io), newMCPCmd(io))
	return cmd
}

// output is the --json document.
type output struct {
	*retrieve.Result
	Answer        string            `json:"answer,omitempty"`
	Sources       []retrieve.Source `json:"sources,omitempty"`
	ContextTokens int               `json:"context_tokens"`
}

func runQuery(ctx context.Context, opts *queryOptions, io streams) error {
	if opts.CPUProfile != "" {
		f, err := os.Create(opts.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if opts.Mode == modePath {
		return runPathQuery(ctx, opts, io)
	}
	if strings.TrimSpace(opts.Question) == "" {
		return fmt.Errorf("empty question")
	}
	if !validMode(opts.Mode) {
		return fmt.Errorf("unknown mode %q (available: %s)", opts.Mode, strings.Join(retrieve.Modes(), ", "))
	}
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		return err
	}
	emb, model, done, err := opts.Retrieval.openModels(ctx, opts.Settings)
	if err != nil {
		return err
	}
	defer done()
	st, err := pipeline.OpenStore(ctx, opts.Settings, emb, nil)
	if err != nil {
		return err
	}
	defer st.Close()

	start := time.Now()
	r := retrieve.New(st, emb, retrieve.WithConfig(opts.Retrieval.Config), retrieve.WithModel(model))
	res, err := r.Retrieve(ctx, opts.Question, opts.Mode)
	if err != nil {
		return err
	}
	t := time.Now()
	c, err := retrieve.Assemble(res, tok, opts.Retrieval.budget(), opts.Retrieval.ResponseType)
	if err != nil {
		return err
	}
	res.Timings["context"] = time.Since(t)

	switch {
	case opts.ContextOnly:
		fmt.Fprint(io.Out, c.String())
		return nil
	case opts.JSON:
		out := output{Result: res, ContextTokens: c.Tokens}
		if model != nil {
			t := time.Now()
			a, err := retrieve.Answer(ctx, model, c, nil)
			if err != nil {
				return err
			}
			res.Timings["answer"] = time.Since(t)
			out.Answer, out.Sources = a.Text, a.Sources
		}
		res.Timings["total"] = time.Since(start)
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(res.Passages) == 0 {
		fmt.Fprintln(io.Out, "no passages found (has anything been ingested into this store?)")
		return nil
	}
	if model == nil {
		for i, p := range res.Passages {
			fmt.Fprintf(io.Out, "[%d] %.4f  %s  (chunk %d)\n", i+1, p.Score, displayPath(p.DocPath), p.Index)
			fmt.Fprintf(io.Out, "    %s\n\n", snippet(p.Text, 320))
		}
		return nil
	}
	a, err := retrieve.Answer(ctx, model, c, io.Out)
	if err != nil {
		return err
	}
	if !strings.HasSuffix(a.Text, "\n") {
		fmt.Fprintln(io.Out)
	}
	fmt.Fprintln(io.Out, "\nSources:")
	for _, s := range a.Cited() {
		fmt.Fprintf(io.Out, "[%d] %s (chunk %d)\n", s.N, displayPath(s.DocPath), s.Index)
	}
	return nil
}

func validMode(m string) bool {
	return slices.Contains(retrieve.Modes(), m)
}

// displayPath shows paths under the working directory relative to it.
func displayPath(p string) string {
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	}
	return p
}

func snippet(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && text[cut]&0xC0 == 0x80 {
		cut--
	}
	return text[:cut] + "…"
}
