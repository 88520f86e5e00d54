package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
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
run early, 1 when the run itself failed or the command line was wrong.`,
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
	prog := newProgress(io, io.TTY && !opts.JSON)
	retries := llm.WithLogger(slog.New(cli.LogHandler(prog, "ingest: llm")))
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
	prog.watchWaits(models.Waits, waitTick)
	defer prog.stop()
	// A signal cancels the model calls in flight at once instead of
	// letting the documents finish.
	sd := newShutdown(ctx, opts.ShutdownTimeout, models.Busy)
	defer sd.close()
	if opts.Watch {
		return runWatch(ctx, sd, opts, io, p, prog)
	}
	p.Progress = prog
	sum, err := p.Ingest(sd.work, opts.Paths, pipeline.Options{Prune: opts.Prune, Stop: ctx.Done()})
	err = sd.settle(err, io.Err)
	prog.finish()
	if w, ok := st.(interface{ SaveSidecars(context.Context) error }); ok && err == nil && sum.Added+sum.Updated+sum.Deleted+sum.Renamed > 0 {
		// Build the vector caches now so the first query is fast (streamed
		// from the rows: ingest searches nothing, so it holds no matrix); a
		// failure here costs only speed.
		_ = w.SaveSidecars(ctx)
	}
	if sum != nil {
		sum.LLM = models.Stats()
		if sum.LLM != nil && sum.LLM.UnusableAnswers > int64(sum.UnusableAnswers) {
			// The documents' counts leave out those rolled back when the run
			// stopped; the model's count has every answer of the run.
			sum.UnusableAnswers = int(sum.LLM.UnusableAnswers)
		}
		if opts.JSON {
			if jerr := writeJSON(io.Out, tidySummary(sum)); jerr != nil {
				return jerr
			}
		} else {
			printSummary(io.Out, sum)
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
	if sum.Failed > 0 {
		return cli.Shown(errSomeFailed)
	}
	return nil
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
		"check that the endpoint is up and serves the model --llm names, or raise --llm-stall", cli.OneLine(se.Error(), maxErrorBytes))
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

// Output limits: a failure's reason and a warning are one line each, cut
// to these many bytes (a warning quoting a PDF content stream must not
// flood the log), and the text summary lists this many warnings.
const (
	maxErrorBytes   = 600
	maxWarningBytes = 300
	maxWarningLines = 20
)

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

func printSummary(w io.Writer, s *pipeline.Summary) {
	fmt.Fprintf(w, "documents: %d added, %d updated, %d unchanged, %d renamed, %d duplicate, %d deleted, %d failed, %d in progress elsewhere (%s)\n",
		s.Added, s.Updated, s.Unchanged, s.Renamed, s.Duplicate, s.Deleted, s.Failed, s.Claimed, s.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "written: %d chunks, %d entity mentions, %d relation mentions; names resolved to another name of their document: %d\n",
		s.ChunksWritten, s.EntityMentions, s.RelationMentions, s.EntitiesMerged)
	if wr := s.Writes; wr != nil && wr.Documents+wr.Failed > 0 {
		fmt.Fprintf(w, "writes: %s in %s, %s (deadlocks, busy store, lost connection), %s redone one document at a time\n",
			counted(wr.Documents, "document"), counted(wr.Transactions, "transaction"),
			counted(wr.Retries, "transaction retry"), counted(wr.Fallbacks, "group"))
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
		fmt.Fprintf(w, "failed: %s\n", cli.OneLine(f.Error, maxErrorBytes))
	}
	if s.UnusableAnswers > 0 {
		fmt.Fprintf(w, "unusable answers: %d (no record in the extraction format; check --llm)\n", s.UnusableAnswers)
	}
	if m := s.LLM; m != nil && m.UnusableSummaries > 0 {
		fmt.Fprintf(w, "unusable summaries: %d (descriptions kept cut to --description-tokens instead), the first: %s\n",
			m.UnusableSummaries, cli.OneLine(m.UnusableSummary, maxWarningBytes))
	}
	if s.Warnings > 0 {
		fmt.Fprintf(w, "warnings: %d in %d files\n", s.Warnings, len(s.Warned))
		shown := 0
		for _, r := range s.Warned {
			for _, warn := range r.Warnings {
				if shown++; shown <= maxWarningLines {
					fmt.Fprintf(w, "warning: %s\n", warningLine(r.Path, warn))
				}
			}
		}
		if shown > maxWarningLines {
			fmt.Fprintf(w, "warning: ... %d more (--json lists them all)\n", shown-maxWarningLines)
		}
	}
	if s.Unsupported > 0 {
		fmt.Fprintf(w, "not ingested, as of no supported type: %s (--json lists them)\n", unsupportedCounts(s.UnsupportedFiles))
	}
	if s.Skipped > 0 {
		fmt.Fprintf(w, "stopped: %d files not started; they are picked up by the next run\n", s.Skipped)
	}
}

// claimedLine says who holds a document this run left alone.
func claimedLine(r pipeline.FileResult) string {
	return "in progress elsewhere, by " + cli.Escape(r.ClaimedBy)
}

// warningLine is one warning of one file, as one bounded line.
func warningLine(path, warning string) string {
	return cli.OneLine(path+": "+warning, maxWarningBytes)
}

// unsupportedCounts groups passed-over files by reason, most common first:
// "12 no file extension, 3 unsupported file type .go".
func unsupportedCounts(rs []pipeline.FileResult) string {
	counts := map[string]int{}
	for _, r := range rs {
		counts[r.Error]++
	}
	reasons := make([]string, 0, len(counts))
	for r := range counts {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if counts[reasons[i]] != counts[reasons[j]] {
			return counts[reasons[i]] > counts[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", counts[r], r)
	}
	return strings.Join(parts, ", ")
}

// tidySummary is s for --json with each failure and warning cut to one line.
func tidySummary(s *pipeline.Summary) *pipeline.Summary {
	out := *s
	out.Failures = tidyResults(s.Failures)
	out.Warned = tidyResults(s.Warned)
	out.ClaimedFiles = tidyResults(s.ClaimedFiles)
	return &out
}

func tidyResults(rs []pipeline.FileResult) []pipeline.FileResult {
	out := make([]pipeline.FileResult, len(rs))
	for i, r := range rs {
		out[i] = tidyResult(r)
	}
	return out
}

// tidyResult cuts r's error and warnings to one line each.
func tidyResult(r pipeline.FileResult) pipeline.FileResult {
	r.Error = cli.OneLine(r.Error, maxErrorBytes)
	if len(r.Warnings) > 0 {
		ws := make([]string, len(r.Warnings))
		for i, w := range r.Warnings {
			ws[i] = cli.OneLine(w, maxWarningBytes)
		}
		r.Warnings = ws
	}
	return r
}

// counted is n with its noun, plural unless n is 1 ("1 transaction",
// "3 transaction retries").
func counted[N int | int64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
	fmt.Fprintf(io.Out, "dry run: %d documents to build in %d chunks; %d unchanged, %d failed, %d unsupported files\n",
		sum.Documents, sum.Chunks, sum.Unchanged, sum.Failed, sum.Unsupported)
	if len(sum.Models) == 0 {
		fmt.Fprintln(io.Out, "no model calls would be made (offline extraction; give --llm to estimate a model's)")
	}
	for _, m := range sum.Models {
		fmt.Fprintf(io.Out, "llm %s: %d chunks, %d extraction calls with %d prompt tokens to send; %d cache hits (%d prompt tokens not sent)\n",
			m.Model, m.Chunks, m.Calls, m.PromptTokens, m.CacheHits, m.CachedPromptTokens)
		if m.Gleaning > 0 {
			fmt.Fprintf(io.Out, "llm %s: gleaning not estimated: up to %s more per chunk, each resending the conversation, as the answers decide\n", m.Model, counted(m.Gleaning, "round"))
		}
	}
	fmt.Fprintln(io.Out, "nothing was written")
	return nil
}
