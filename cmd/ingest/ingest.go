package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"docgraph/pipeline"
)

// streams are the command's input and output, injectable for tests.
type streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	TTY bool // Err is a terminal: draw a progress bar
}

// ingestOptions is everything one ingest run needs.
type ingestOptions struct {
	Settings pipeline.Settings
	Config   string
	Paths    []string
	Prune    bool
	JSON     bool
	// CPUProfile writes a pprof CPU profile of the run.
	CPUProfile string
	// Watch keeps applying changes after the first sync (see watch.go).
	Watch           bool
	Debounce        time.Duration
	ShutdownTimeout time.Duration
	// KGTriples are subject|relation|object files to import (see kg.go).
	KGTriples []string
}

// errSomeFailed makes the exit status 2 when some documents failed but the run completed.
var errSomeFailed = errors.New("some documents failed")

func exitCode(err error) int {
	if errors.Is(err, errSomeFailed) {
		return 2
	}
	return 1
}

func newRootCmd(io streams) *cobra.Command {
	opts := &ingestOptions{}
	cmd := &cobra.Command{
		Use:   "ingest [flags] PATH...",
		Short: "Build or update the knowledge graph from files and folders (txt, md, pdf)",
		Long: `ingest loads txt, md and pdf files (folders recursively), splits them into
token-bounded chunks, extracts entities and relations, embeds them and stores
the graph. Unchanged files are skipped; changed files replace their old version.

Every flag can also be set as DOCGRAPH_<FLAG> (e.g. DOCGRAPH_CHUNK_TOKENS=512)
or as a key in docgraph.yaml (e.g. chunk-tokens: 512).

Exit status: 0 when every file was ingested, 2 when some files failed (the
others were still ingested), 1 when the run itself failed.`,
		Args:          pathsOrKG,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				fmt.Fprintln(io.Err, "ingest:", err)
				return err
			}
			opts.Paths = args
			err := runIngest(cmd.Context(), opts, io)
			if err != nil && !errors.Is(err, errSomeFailed) {
				fmt.Fprintln(io.Err, "ingest:", err)
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	opts.Settings.AddIngestFlags(fs)
	opts.Settings.AddLLMFlags(fs)
	fs.BoolVar(&opts.Prune, "prune", false, "delete stored documents whose files are gone")
	fs.BoolVar(&opts.JSON, "json", false, "print a machine-readable summary")
	fs.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile to this file")
	_ = fs.MarkHidden("cpuprofile")
	addWatchFlags(fs, opts)
	addKGFlags(fs, opts)
	cmd.AddCommand(newStatusCmd(io), newDeleteCmd(io))
	return cmd
}

func runIngest(ctx context.Context, opts *ingestOptions, io streams) error {
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
	models, err := pipeline.NewModels(ctx, opts.Settings)
	if err != nil {
		return err
	}
	defer models.Close()
	st, err := pipeline.OpenStore(ctx, opts.Settings, models.Embedder, models.Merger())
	if err != nil {
		return err
	}
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
	sd := newShutdown(ctx, opts.ShutdownTimeout)
	defer sd.close()
	if opts.Watch {
		return runWatch(ctx, sd, opts, io, p)
	}
	prog := newProgress(io.Err, io.TTY && !opts.JSON)
	p.Progress = prog
	sum, err := p.Ingest(sd.work, opts.Paths, pipeline.Options{Prune: opts.Prune, Stop: ctx.Done()})
	err = sd.settle(err, io.Err)
	prog.finish()
	if w, ok := st.(interface{ Warm(context.Context) error }); ok && err == nil && sum.Added+sum.Updated+sum.Deleted+sum.Renamed > 0 {
		// Build the vector caches now so the first query is fast; a failure
		// here costs only speed.
		_ = w.Warm(ctx)
	}
	if sum != nil {
		sum.LLM = models.Stats()
		if opts.JSON {
			enc := json.NewEncoder(io.Out)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(sum); jerr != nil {
				return jerr
			}
		} else {
			printSummary(io.Out, sum)
		}
	}
	if err != nil {
		return err
	}
	if sum.Failed > 0 {
		return errSomeFailed
	}
	return nil
}

func printSummary(w io.Writer, s *pipeline.Summary) {
	fmt.Fprintf(w, "documents: %d added, %d updated, %d unchanged, %d renamed, %d duplicate, %d deleted, %d failed (%s)\n",
		s.Added, s.Updated, s.Unchanged, s.Renamed, s.Duplicate, s.Deleted, s.Failed, s.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "written: %d chunks, %d entity mentions, %d relation mentions\n", s.ChunksWritten, s.EntityMentions, s.RelationMentions)
	if wr := s.Writes; wr != nil && wr.Documents+wr.Failed > 0 {
		fmt.Fprintf(w, "writes: %d documents in %d transactions, %d transaction retries (deadlocks, busy store, lost connection), %d groups redone one document at a time\n",
			wr.Documents, wr.Transactions, wr.Retries, wr.Fallbacks)
	}
	if t := s.Totals; t != nil {
		fmt.Fprintf(w, "store: %d documents, %d chunks, %d entities, %d relations, %d mentions (embedder %s/%d)\n",
			t.Documents, t.Chunks, t.Entities, t.Relations, t.Mentions, t.Embedder.Name, t.Embedder.Dimension)
	}
	if m := s.LLM; m != nil {
		fmt.Fprintf(w, "llm %s: %d calls, %d cache hits, %d retries, %d failures, %d prompt + %d completion tokens",
			m.Model, m.Calls, m.CacheHits, m.Retries, m.Failures, m.PromptTokens, m.CompletionTokens)
		if m.EmbedCalls+m.EmbedCacheHits > 0 {
			fmt.Fprintf(w, "; embeddings: %d calls, %d cache hits", m.EmbedCalls, m.EmbedCacheHits)
		}
		if m.RejectedRecords+m.JudgeInvalid > 0 {
			fmt.Fprintf(w, "; %d malformed records, %d unparseable judge answers", m.RejectedRecords, m.JudgeInvalid)
		}
		fmt.Fprintln(w)
	}
	for _, f := range s.Failures {
		fmt.Fprintf(w, "failed: %s\n", f.Error)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(w, "stopped: %d files not started; they are picked up by the next run\n", s.Skipped)
	}
}

// progress draws a bar on a terminal and plain log lines otherwise.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   bool
	total int
	done  int
	start time.Time
}

func newProgress(w io.Writer, bar bool) *progress {
	return &progress{w: w, bar: bar, start: time.Now()}
}

func (p *progress) Start(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total = total
}

func (p *progress) File(r pipeline.FileResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if !p.bar {
		line := fmt.Sprintf("%s %s (%d chunks, %s)", r.Outcome, r.Path, r.Chunks, r.Duration.Round(time.Millisecond))
		if r.Error != "" {
			line = fmt.Sprintf("%s %s", r.Outcome, r.Error)
		}
		for _, warn := range r.Warnings {
			line += "; warning: " + warn
		}
		fmt.Fprintln(p.w, line)
		return
	}
	if r.Outcome == pipeline.Failed {
		fmt.Fprintf(p.w, "\r\033[Kfailed: %s\n", r.Error)
	}
	const width = 30
	filled := 0
	if p.total > 0 {
		filled = width * p.done / p.total
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d %s %s", strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		p.done, p.total, time.Since(p.start).Round(time.Second), filepath.Base(r.Path))
}

func (p *progress) finish() {
	if p.bar && p.done > 0 {
		fmt.Fprintln(p.w)
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
