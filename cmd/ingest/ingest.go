package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph"
	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// streams are the command's input and output, injectable for tests.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	TTY bool // Err is a terminal: draw a progress bar
	// OutTTY says Out is a terminal: stored text printed to it is escaped
	// (cli.TerminalText) unless --raw asks for it as stored.
	OutTTY bool
	// Width is the terminal's width in columns, asked at every redraw (nil
	// or 0: 80).
	Width func() int
}

// ingestOptions is everything one ingest run needs.
type ingestOptions struct {
	Settings pipeline.Settings
	Config   string
	Paths    []string
	Prune    bool
	JSON     bool
	// Watch keeps applying changes after the first sync (see watch.go).
	Watch           bool
	Debounce        time.Duration
	ShutdownTimeout time.Duration
	// KGTriples are subject|relation|object files to import (see kg.go).
	KGTriples []string
	// DryRun prints what a run would extract and send, writing nothing.
	DryRun bool
	// embedderSet is true when --embedder was given (flag, env or config);
	// otherwise an existing store's own embedder is used.
	embedderSet bool
}

// errSomeFailed makes the exit status 2 when some documents failed but the
// run completed; the summary has said which.
var errSomeFailed = errors.New("some documents failed")

// exitCode is 0 when every file was ingested, 2 when some failed, 128+N
// when signal N stopped the run (130 for Ctrl-C), 1 otherwise.
func exitCode(err error) int {
	if errors.Is(err, errSomeFailed) {
		return 2
	}
	return cli.ExitCode(err)
}

// execute is the whole command line, main without the process around it.
func execute(ctx context.Context, io streams, args []string) error {
	return cli.Run(ctx, newRootCmd(io), args, io.Err)
}

func newRootCmd(io streams) *cobra.Command {
	opts := &ingestOptions{}
	cmd := &cobra.Command{
		Use:     "ingest [flags] PATH...",
		Version: docgraph.VersionString(),
		Short:   "Build or update the knowledge graph from files and folders (txt, md, pdf, html, docx, pptx, odt, odp, epub, rst, tex, gzipped)",
		Long: `ingest loads txt, md, pdf, html, docx, pptx, odt, odp, epub, rst and tex
files, plain or gzipped (folders recursively), splits them into
token-bounded chunks, extracts entities and relations, embeds them and stores
the graph. Unchanged files are skipped; changed files replace their old version.

Every flag can also be set as DOCGRAPH_<FLAG> (e.g. DOCGRAPH_CHUNK_TOKENS=512)
or as a key in docgraph.yaml (e.g. chunk-tokens: 512).

Exit status: 0 when every file was ingested, 2 when some files failed (the
others were still ingested), 130 (143 for SIGTERM) when a signal stopped the
run early, 1 when the run itself failed or the command line was wrong,
including when the store's index files could not be written after the
documents (a full disk: the documents are stored, searches scan until a
later run writes the files).`,
		Args: pathsOrKG,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				return err
			}
			opts.Paths = args
			f := cmd.Flags().Lookup("embedder")
			opts.embedderSet = f.Changed || f.Value.String() != f.DefValue
			return runIngest(cmd.Context(), opts, io)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	opts.Settings.AddIngestFlags(fs)
	opts.Settings.AddLLMFlags(fs)
	fs.BoolVar(&opts.Prune, "prune", false, "delete stored documents whose files are gone")
	fs.BoolVar(&opts.JSON, "json", false, "print a machine-readable summary")
	fs.BoolVar(&opts.DryRun, "dry-run", false, "print the documents, chunks and prompt tokens a run would send per model (after LLM cache hits), writing nothing")
	addWatchFlags(fs, opts)
	addKGFlags(fs, opts)
	cmd.AddCommand(newStatusCmd(io), newDeleteCmd(io), newShowCmd(io), newExportCmd(io))
	cmd.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	return cmd
}

func runIngest(ctx context.Context, opts *ingestOptions, io streams) error {
	if opts.DryRun {
		return runDryRun(ctx, opts, io)
	}
	// Retries are printed above the bar, as they happen.
	prog := pipeline.NewProgressWriter(io.Err, io.TTY && !opts.JSON, io.Width)
	prog.Prefix = "ingest: "
	retries := llm.WithLogger(slog.New(llm.LineHandler(prog, "ingest: llm")))
	models, st, err := openForIngest(ctx, opts, io, retries)
	if err != nil {
		return err
	}
	defer models.Close()
	defer st.Close()
	p, err := pipeline.New(opts.Settings, models, st)
	if err != nil {
		return err
	}
	if len(opts.KGTriples) > 0 {
		if done, err := importKG(ctx, opts, io, p); done || err != nil {
			return err
		}
	}
	prog.WatchWaits(models.Waits, waitTick)
	defer prog.Stop()
	// A signal cancels the model calls in flight at once instead of
	// letting the documents finish.
	sd := newShutdown(ctx, opts.ShutdownTimeout, models.Busy)
	defer sd.close()
	p.Progress = prog
	if opts.Watch {
		return runWatch(ctx, sd, opts, io, p, prog)
	}
	sum, err := p.Ingest(sd.work, opts.Paths, pipeline.Options{Prune: opts.Prune, Stop: ctx.Done()})
	err = sd.settle(err, io.Err)
	prog.Finish()
	ierr := p.Conclude(ctx, sum, models, err)
	if sum != nil {
		if opts.JSON {
			if jerr := writeJSON(io.Out, sum.Tidy()); jerr != nil {
				return jerr
			}
		} else {
			sum.WriteText(io.Out)
		}
	}
	if store.DiskFull(err) {
		return fmt.Errorf("store %s: %w", store.Redact(pipeline.StoreURL(opts.Settings)), err)
	}
	if ue, ok := errors.AsType[*ner.UnusableAnswersError](err); ok {
		return unusableAnswersError(ue)
	}
	if se, ok := errors.AsType[*llm.StallError](err); ok {
		return stallError(se)
	}
	if err != nil {
		return err
	}
	if in := cli.Interruption(ctx); in != nil {
		return in // the summary says what was left for the next run
	}
	if ierr != nil {
		return indexFilesError(pipeline.StoreURL(opts.Settings), ierr)
	}
	if sum.Failed > 0 {
		return cli.Shown(errSomeFailed)
	}
	return nil
}

// indexFilesError is the one message of a run whose documents are stored
// but whose index files could not be written after them: exit status 1, as
// for a run stopped by a full disk, since the run is not complete.
func indexFilesError(url string, err error) error {
	why := "index files not written"
	if store.DiskFull(err) {
		why += ", disk full"
	}
	return fmt.Errorf("store %s: %s; the documents are stored, and searches scan every vector until a run writes the index files: %w",
		store.Redact(url), why, err)
}

// unusableAnswersError is the one message of a run stopped because the
// model's first answers were not in the extraction format.
func unusableAnswersError(ue *ner.UnusableAnswersError) error {
	return fmt.Errorf("stopped: the model's answers are not in the extraction format: the first %d answers of %s had no record, e.g. \"%s\"; "+
		"check --llm (the model name, and that the endpoint serves a chat model that follows instructions); no more chunks were sent, and the documents are retried on the next run",
		ue.Count, cli.Escape(ue.Model), cli.Escape(ue.Answer))
}

// stallError is the one message of a run stopped because its model
// answered nothing for the stall window.
func stallError(se *llm.StallError) error {
	return fmt.Errorf("stopped: %s; no more chunks were sent, and the documents in flight were rolled back and are retried on the next run; "+
		"check that the endpoint is up and serves the model --llm names, or raise --llm-stall", cli.OneLine(se.Error(), pipeline.MaxErrorBytes))
}

// waitTick is how often the progress looks at the model calls in flight:
// a wait shows within waitShown plus this.
const waitTick = time.Second

// writeJSON writes v indented, as every --json output of ingest is.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// openForIngest builds the models and opens the store, saying so when
// the store's own embedder is used (pipeline.OpenForWrite).
func openForIngest(ctx context.Context, opts *ingestOptions, io streams, extra ...llm.Option) (*pipeline.Models, store.Store, error) {
	models, st, held, err := pipeline.OpenForWrite(ctx, &opts.Settings, opts.embedderSet, extra...)
	if held != nil {
		fmt.Fprintf(io.Err, "ingest: note: the store holds vectors of embedder %s (dimension %d); using --embedder %s (give --embedder to choose)\n",
			held.Name, held.Dimension, held.Spec())
	}
	return models, st, err
}

// runDryRun opens what exists (store, LLM cache) and prints what an
// ingest of opts.Paths would build and send; it creates and writes nothing.
func runDryRun(ctx context.Context, opts *ingestOptions, io streams) error {
	sum, err := pipeline.PlanIngest(ctx, opts.Settings, opts.embedderSet, opts.Paths)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(io.Out, sum)
	}
	sum.WriteText(io.Out)
	return nil
}
