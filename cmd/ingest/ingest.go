package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
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
		Use:   "ingest [flags] PATH...",
		Short: "Build or update the knowledge graph from files and folders (txt, md, pdf)",
		Long: `ingest loads txt, md and pdf files (folders recursively), splits them into
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
	return cmd
}

func runIngest(ctx context.Context, opts *ingestOptions, io streams) error {
	if opts.DryRun {
		return runDryRun(ctx, opts, io)
	}
	models, st, err := openForIngest(ctx, opts, io)
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
	sd := newShutdown(ctx, opts.ShutdownTimeout)
	defer sd.close()
	if opts.Watch {
		return runWatch(ctx, sd, opts, io, p)
	}
	prog := newProgress(io, io.TTY && !opts.JSON)
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
		return fmt.Errorf("store %s: %w", store.Redact(storeURL(opts.Settings)), err)
	}
	if ue, ok := errors.AsType[*ner.UnusableAnswersError](err); ok {
		return unusableAnswersError(ue)
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

// openForIngest builds the models and opens the store. Without an
// --embedder, a store that holds another embedder's vectors (one made
// before the offline embedder's current version, or with a provider's)
// is ingested with that embedder, and a note says so.
func openForIngest(ctx context.Context, opts *ingestOptions, io streams) (*pipeline.Models, store.Store, error) {
	for attempt := 0; ; attempt++ {
		models, err := pipeline.NewModels(ctx, opts.Settings)
		if err != nil {
			return nil, nil, err
		}
		st, err := pipeline.OpenStore(ctx, opts.Settings, models.Embedder, models.Merger())
		if err == nil {
			return models, st, nil
		}
		models.Close()
		var mm *store.EmbedderMismatchError
		if opts.embedderSet || attempt > 0 || !errors.As(err, &mm) {
			return nil, nil, err
		}
		fmt.Fprintf(io.Err, "ingest: note: the store holds vectors of embedder %s (dimension %d); using --embedder %s (give --embedder to choose)\n",
			mm.Held.Name, mm.Held.Dimension, mm.Held.Spec())
		opts.Settings.Embedder = mm.Held.Spec()
	}
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
		fmt.Fprintf(w, "not ingested, as no txt, md or pdf documents: %s (--json lists them)\n", unsupportedCounts(s.UnsupportedFiles))
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

// progress draws a bar on a terminal and plain log lines otherwise: one
// newline-terminated line per file, its warnings on lines of their own.
// The bar is redrawn in place and always fits the terminal's width, so it
// never wraps and leaves no stale lines; failures and warnings (one
// bounded line each) are printed above it.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   bool
	width func() int
	total int
	done  int
	start time.Time
}

func newProgress(io streams, bar bool) *progress {
	return &progress{w: io.Err, bar: bar, width: io.Width, start: time.Now()}
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
		line := fmt.Sprintf("%s %s (%d chunks, %s)", r.Outcome, cli.Escape(r.Path), r.Chunks, r.Duration.Round(time.Millisecond))
		switch {
		case r.Error != "":
			line = fmt.Sprintf("%s %s", r.Outcome, cli.OneLine(r.Error, maxErrorBytes))
		case r.Outcome == pipeline.Claimed:
			line = fmt.Sprintf("%s %s (%s)", r.Outcome, cli.Escape(r.Path), claimedLine(r))
		}
		fmt.Fprintln(p.w, line)
		for _, warn := range r.Warnings {
			fmt.Fprintf(p.w, "warning: %s\n", warningLine(r.Path, warn))
		}
		return
	}
	cols := p.columns()
	if r.Outcome == pipeline.Failed {
		fmt.Fprintf(p.w, "\r\033[Kfailed: %s\n", cli.OneLine(r.Error, maxErrorBytes))
	}
	for _, warn := range r.Warnings {
		// A whole line of its own above the bar: it may wrap, but nothing
		// redraws over it.
		fmt.Fprintf(p.w, "\r\033[Kwarning: %s\n", warningLine(r.Path, warn))
	}
	fmt.Fprintf(p.w, "\r\033[K%s", p.barLine(cols, r.Path))
}

// columns is the terminal's width, 80 when it does not say.
func (p *progress) columns() int {
	if p.width != nil {
		if n := p.width(); n > 0 {
			return n
		}
	}
	return 80
}

// barLine is "[====    ] 12/224 3s name", at most cols-1 columns wide (a
// line that reaches the last column makes some terminals wrap early).
func (p *progress) barLine(cols int, path string) string {
	counts := fmt.Sprintf(" %d/%d %s", p.done, p.total, time.Since(p.start).Round(time.Second))
	room := cols - 1 - len(counts)
	width := min(30, room-12) // leave the name at least 10 columns
	if width < 5 {
		return cli.Fit(strings.TrimSpace(counts), cols-1, false)
	}
	filled := 0
	if p.total > 0 {
		filled = min(width, width*p.done/p.total)
	}
	line := "[" + strings.Repeat("=", filled) + strings.Repeat(" ", width-filled) + "]" + counts
	return line + " " + cli.Fit(cli.Escape(filepath.Base(path)), cols-1-len(line)-1, true)
}

func (p *progress) finish() {
	if p.bar && p.done > 0 {
		fmt.Fprintln(p.w)
	}
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
	s, storeExists := pipeline.DryRunSettings(opts.Settings)
	var st pipeline.Store
	if storeExists {
		// Opened without an embedder to check, so nothing is recorded.
		opened, err := pipeline.OpenStoreWith(ctx, s, store.Options{})
		if err != nil {
			return err
		}
		defer opened.Close()
		st = opened
		// Without --embedder, ingest adopts the store's embedder, which is
		// part of the fingerprint that decides what is unchanged.
		if stats, err := opened.Stats(ctx); err == nil && !opts.embedderSet && stats.Embedder.Name != "" {
			s.Embedder = stats.Embedder.Spec()
		}
	}
	models, err := pipeline.NewModels(ctx, s)
	if err != nil {
		return err
	}
	defer models.Close()
	p, err := pipeline.New(s, models, st)
	if err != nil {
		return err
	}
	sum, err := p.DryRun(ctx, opts.Paths)
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
