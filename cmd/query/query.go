package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph"
	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/server"
)

// streams are the command's input and output, injectable for tests.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// OutTTY says Out is a terminal: answers and stored text printed to
	// it are escaped (cli.TerminalText) unless --raw asks for them as they are.
	OutTTY bool
}

// retrievalFlags are the retrieval and answering knobs query and eval share.
type retrievalFlags struct {
	Config           retrieve.Config
	LLM              string
	MaxContextTokens int
	ResponseType     string
	// Client are the limits, timeout, retries and cache of model calls,
	// the same flags as ingest's.
	Client pipeline.LLMSettings
	// Log hears about model calls being retried (nil: silent).
	Log io.Writer
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
	f.Client.AddClientFlags(fs)
}

// config is the flags as the query server's configuration (path mode's
// left at its defaults).
func (f *retrievalFlags) config() server.Config {
	c := server.DefaultConfig()
	c.Retrieval, c.LLM, c.MaxContextTokens, c.ResponseType, c.Client = f.Config, f.LLM, f.MaxContextTokens, f.ResponseType, f.Client
	if f.Log != nil {
		c.Logger = slog.New(llm.LineHandler(f.Log, "llm"))
	}
	return c
}

func (f *retrievalFlags) budget() retrieve.Budget { return f.config().Budget() }

// queryOptions is everything one query needs.
type queryOptions struct {
	Settings    pipeline.Settings
	Config      string
	Question    string
	Mode        string
	JSON        bool
	ContextOnly bool
	// Raw prints answers and stored text as they are even on a terminal,
	// where their control characters are otherwise escaped.
	Raw bool
	// Deadline bounds the whole query: keywords, retrieval, the answer
	// and every retry (0: none).
	Deadline time.Duration
	// timeout is the deprecated --timeout, an older name for --deadline.
	timeout   time.Duration
	Retrieval retrievalFlags
	Paths     pathFlags   // --mode path (paths.go)
	Answer    answerFlags // --mode logic, --integrate (integrate.go)
	// embedderSet is true when --embedder was given (flag, env or config);
	// otherwise the store's own embedder is used.
	embedderSet bool
}

// defaultDeadline bounds a query unless --deadline says otherwise: a model
// server that never answers must not keep a query waiting for the retries'
// whole budget (7 keyword attempts, then 7 answer attempts, of 2 minutes).
const defaultDeadline = 60 * time.Second

func newRootCmd(io streams) *cobra.Command {
	opts := &queryOptions{}
	cmd := &cobra.Command{
		Use:     `query [flags] "question"`,
		Version: docgraph.VersionString(),
		Short:   "Answer a question from the knowledge graph, citing its sources",
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
  logic   (needs --llm) HuixiangDou2 logic form: the model splits the
          question into operator steps run on the graph, checks that their
          result can answer it, and falls back to mix when not

--cypher (Neo4j, needs --llm) also asks the model for one Cypher query.
What runs is only what passes three gates: a check that reads it as
Neo4j's lexer does and refuses anything but MATCH/WITH/UNWIND/RETURN over
the Document, Chunk and Entity labels and PART_OF, NEXT, MENTIONED_IN and
RELATES types, with a label on every new node pattern and a type on every
relationship, at most 4 KiB and 32 boolean terms (no CALL, LOAD CSV, USE,
apoc.* or other namespaced functions, properties(), keys(), labels(),
type(), n {.*} or n['key']); the server's own EXPLAIN, which must plan it
read-only with no procedure call, LOAD CSV or scan outside the schema;
then a read transaction with a LIMIT and a 15 s timeout. Give --cypher a user that may
only read (README: "A least-privilege Neo4j user for --cypher").

--integrate logits (mix and path, needs --llm) answers twice, from the
context and from the model alone, and keeps the answers whose tokens the
model was sure of (GraphRAG-FI; --tau-g, --tau-l).

With --llm the answer streams to the terminal, citing passages as [n], and
a sources list follows; without one the ranked passages are printed. On a
terminal, control characters in answers and in stored text (escape
sequences that would clear the screen or retitle the window,
bidirectional overrides) are shown escaped, as \x1b or \u202e; lines and
tabs are kept. --raw, or an output that is no terminal, gets them as they
are.
--context-only prints the context the LLM would get; --json prints answer,
sources, passages, entities, relations and per-stage timings, with the same
keys in every mode.

The store must exist (made by ingest); it is only read, so a store without
write permission or on a read-only mount works. Without --embedder the
store's own embedder is used.

Every flag can also be set as DOCGRAPH_<FLAG> or in docgraph.yaml.

Exit status: 0 with an answer or ranked passages, 1 on any failure (an
empty, malformed or cut-off answer included), 130 on Ctrl-C.`,
		Args: oneQuestion,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				return err
			}
			opts.Question = args[0]
			f := cmd.Flags().Lookup("embedder")
			opts.embedderSet = f.Changed || f.Value.String() != f.DefValue
			opts.Retrieval.Log = io.Err
			if cmd.Flags().Changed("timeout") && !cmd.Flags().Changed("deadline") {
				opts.Deadline = opts.timeout
			}
			return runQuery(cmd.Context(), opts, io)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	fs.StringVar(&opts.Mode, "mode", retrieve.ModeMix, "retrieval mode: "+strings.Join(modes(), ", "))
	fs.BoolVar(&opts.JSON, "json", false, "print answer, sources, passages, graph context and stage timings as JSON")
	fs.BoolVar(&opts.ContextOnly, "context-only", false, "print only the assembled context")
	fs.BoolVar(&opts.Raw, "raw", false, "print answers and stored text as they are, control characters included, even on a terminal")
	fs.DurationVar(&opts.Deadline, "deadline", defaultDeadline, "give up on the whole query (keywords, retrieval, answer and all retries) after this long (0: never)")
	fs.DurationVar(&opts.timeout, "timeout", 0, "older name of --deadline")
	_ = fs.MarkDeprecated("timeout", "use --deadline")
	opts.Retrieval.add(fs)
	opts.Paths.add(fs)
	opts.Answer.add(fs)
	cmd.AddCommand(newEvalCmd(io), newServeCmd(io), newMCPCmd(io))
	cmd.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	return cmd
}

// oneQuestion wants exactly one argument, the question.
func oneQuestion(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		return cli.Usagef(`no question given: query [flags] "question"`)
	}
	return cli.Usagef(`%d arguments given, want one question: quote it, as in query "Who designed Go?"`, len(args))
}

// modes are the values --mode takes.
func modes() []string { return server.Modes() }

// execute is the whole command line, main without the process around it.
func execute(ctx context.Context, io streams, args []string) error {
	return cli.Run(ctx, newRootCmd(io), args, io.Err)
}

func runQuery(ctx context.Context, opts *queryOptions, io streams) (err error) {
	if strings.TrimSpace(opts.Question) == "" {
		return cli.Usagef("empty question")
	}
	if !slices.Contains(modes(), opts.Mode) {
		return cli.Usagef("--mode %q: unknown mode (available: %s)", opts.Mode, strings.Join(modes(), ", "))
	}
	ctx, settle := server.WithDeadline(ctx, opts.Deadline, strings.TrimSpace(opts.Retrieval.LLM))
	defer func() { err = settle(err) }()
	a := &opts.Answer
	if err := a.check([]string{opts.Mode}, []string{opts.Mode}, opts.Retrieval.LLM); err != nil {
		return err
	}
	if a.Integrate != "" && a.fs.Lookup("response-type").Changed {
		return errors.New("--response-type and --integrate logits do not go together: integration needs the answer as a list")
	}
	q := server.Question{Text: opts.Question, Mode: opts.Mode, ContextOnly: opts.ContextOnly, Seeds: opts.Paths.Seeds}
	if a.Integrate != "" && opts.Mode != retrieve.ModeLogic {
		q.Integrate, q.IntegrateOptions = a.Integrate, a.options()
	}
	if opts.Mode == modePath {
		specs, err := opts.Paths.specs()
		if err != nil {
			return err
		}
		if len(specs) > 1 {
			return cli.Usagef("--paths: give one spec to a query (eval takes several)")
		}
		q.Spec = specs[0]
	}
	s, err := openSession(ctx, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.Mode == modePath {
		if q.Paths, err = opts.Paths.config(); err != nil {
			return err
		}
	}
	run, err := s.Ask(ctx, q)
	if err != nil {
		return err
	}
	plain := q.Integrate == "" && run.Logic == nil && run.Path == nil
	if plain {
		for _, w := range run.Result.Warnings {
			fmt.Fprintln(io.Err, "warning:", cli.Escape(w))
		}
	}
	out, flush := cli.TerminalText(io.Out, io.OutTTY && !opts.Raw)
	defer func() {
		if ferr := flush(); err == nil {
			err = ferr
		}
	}()
	if opts.ContextOnly {
		if run.Logic != nil {
			fmt.Fprintf(io.Err, "query: %s\n", cli.OneLine(run.Verdict(), 0)) // may quote the model
		}
		fmt.Fprint(out, run.ContextText())
		return nil
	}
	if opts.JSON || q.Integrate != "" {
		if err := run.Answer(ctx, nil); err != nil {
			return err
		}
		if in := run.Integration; in != nil && in.Fallback != "" {
			fmt.Fprintf(io.Err, "query: note: %s\n", cli.OneLine(in.Fallback, 0))
		}
		if opts.JSON {
			return run.Response().Write(ctx, io.Out) // JSON escapes what a terminal must not get raw
		}
	}
	return run.WriteText(ctx, out)
}

// openSession opens what a query reads: the embedder (the store's own
// unless --embedder was given), the chat model (nil without --llm) and the
// store, which must exist and is opened read-only.
func openSession(ctx context.Context, opts *queryOptions) (*server.Session, error) {
	return server.OpenSession(ctx, opts.Settings, opts.Retrieval.config(), opts.embedderSet)
}

func validMode(m string) bool {
	return slices.Contains(retrieve.Modes(), m)
}
