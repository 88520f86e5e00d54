package pipeline

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/docgraph/docgraph/internal/termtext"
	"github.com/docgraph/docgraph/store"
)

// The text renderings of a run's results, as `ingest` prints them: every
// path, reason and warning escaped and cut to one bounded line, so that a
// file name cannot forge a line and a warning quoting a PDF content stream
// cannot flood a log.

// Output limits: a failure's reason and a warning are one line each, cut
// to these many bytes, and a summary lists MaxWarningLines warnings.
const (
	MaxErrorBytes   = 600
	MaxWarningBytes = 300
	MaxWarningLines = 20
)

// WriteText prints the summary for people: one line of counts per part
// of the run, then failures, warnings (at most MaxWarningLines) and what
// was left for the next run.
func (s *Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "documents: %d added, %d updated, %d unchanged, %d renamed, %d duplicate, %d deleted, %d failed, %d in progress elsewhere (%s)\n",
		s.Added, s.Updated, s.Unchanged, s.Renamed, s.Duplicate, s.Deleted, s.Failed, s.Claimed, s.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "written: %d chunks, %d entity mentions, %d relation mentions; names resolved to another name of their document: %d\n",
		s.ChunksWritten, s.EntityMentions, s.RelationMentions, s.EntitiesMerged)
	if wr := s.Writes; wr != nil && wr.Documents+wr.Failed > 0 {
		fmt.Fprintf(w, "writes: %s in %s, %s (deadlocks, busy store, lost connection), %s redone one document at a time\n",
			Counted(wr.Documents, "document"), Counted(wr.Transactions, "transaction"),
			Counted(wr.Retries, "transaction retry"), Counted(wr.Fallbacks, "group"))
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
		fmt.Fprintf(w, "failed: %s\n", termtext.OneLine(f.Error, MaxErrorBytes))
	}
	if s.UnusableAnswers > 0 {
		fmt.Fprintf(w, "unusable answers: %d (no record in the extraction format; check --llm)\n", s.UnusableAnswers)
	}
	if m := s.LLM; m != nil && m.UnusableSummaries > 0 {
		fmt.Fprintf(w, "unusable summaries: %d (descriptions kept cut to --description-tokens instead), the first: %s\n",
			m.UnusableSummaries, termtext.OneLine(m.UnusableSummary, MaxWarningBytes))
	}
	if s.Warnings > 0 {
		fmt.Fprintf(w, "warnings: %d in %d files\n", s.Warnings, len(s.Warned))
		shown := 0
		for _, r := range s.Warned {
			for _, warn := range r.Warnings {
				if shown++; shown <= MaxWarningLines {
					fmt.Fprintf(w, "warning: %s\n", WarningLine(r.Path, warn))
				}
			}
		}
		if shown > MaxWarningLines {
			fmt.Fprintf(w, "warning: ... %d more (--json lists them all)\n", shown-MaxWarningLines)
		}
	}
	if s.Unsupported > 0 {
		fmt.Fprintf(w, "not ingested, as of no supported type: %s (--json lists them)\n", unsupportedCounts(s.UnsupportedFiles))
	}
	if s.Skipped > 0 {
		fmt.Fprintf(w, "stopped: %d files not started; they are picked up by the next run\n", s.Skipped)
	}
	if s.IndexError != "" {
		fmt.Fprintf(w, "warning: index files not written (searches scan every vector until a run writes them): %s\n", termtext.OneLine(s.IndexError, MaxErrorBytes))
	}
}

// Tidy is s with each failure and warning cut to one line (for JSON that
// a log keeps).
func (s *Summary) Tidy() *Summary {
	out := *s
	out.Failures = TidyResults(s.Failures)
	out.Warned = TidyResults(s.Warned)
	out.ClaimedFiles = TidyResults(s.ClaimedFiles)
	out.IndexError = termtext.OneLine(s.IndexError, MaxErrorBytes)
	return &out
}

// TidyResults is each of rs tidied (FileResult.Tidy).
func TidyResults(rs []FileResult) []FileResult {
	out := make([]FileResult, len(rs))
	for i, r := range rs {
		out[i] = r.Tidy()
	}
	return out
}

// Tidy is r with its error and warnings cut to one line each.
func (r FileResult) Tidy() FileResult {
	r.Error = termtext.OneLine(r.Error, MaxErrorBytes)
	if len(r.Warnings) > 0 {
		ws := make([]string, len(r.Warnings))
		for i, w := range r.Warnings {
			ws[i] = termtext.OneLine(w, MaxWarningBytes)
		}
		r.Warnings = ws
	}
	return r
}

// WarningLine is one warning of the file at path, as one bounded line.
func WarningLine(path, warning string) string {
	return termtext.OneLine(path+": "+warning, MaxWarningBytes)
}

// claimedLine says who holds a document this run left alone.
func claimedLine(r FileResult) string {
	return "in progress elsewhere, by " + termtext.Escape(r.ClaimedBy)
}

// ChangeLine is the one log line watch mode writes for a change seen at
// at: when, what, which document, how long, and how much of the graph it
// touched.
func (r FileResult) ChangeLine(at time.Time) string {
	doc := ""
	if r.DocID != "" {
		doc = " (doc " + ShortID(r.DocID) + ")"
	}
	head := fmt.Sprintf("%s %-9s %s%s %s", at.Format("15:04:05"), r.Outcome, termtext.Escape(r.Path), doc, r.Duration.Round(time.Millisecond))
	switch r.Outcome {
	case Added, Updated:
		return fmt.Sprintf("%s: %d chunks, %d entity mentions, %d relation mentions", head, r.Chunks, r.Entities, r.Relations)
	case Deleted:
		return fmt.Sprintf("%s: %d chunks, %d entities and %d relations removed", head, r.Chunks, r.Entities, r.Relations)
	case Renamed:
		return head + ": graph kept"
	case Failed, Unsupported:
		return head + ": " + termtext.OneLine(r.Error, MaxErrorBytes)
	case Claimed:
		return head + ": " + claimedLine(r)
	}
	for _, w := range r.Warnings {
		head += "; " + termtext.OneLine(w, MaxWarningBytes)
	}
	return head
}

// ImportLine is the line `ingest --kg-triples` logs for an import's
// result: what it wrote, or why it failed.
func (r FileResult) ImportLine() string {
	if r.Error != "" {
		return "kg failed: " + termtext.OneLine(r.Error, MaxErrorBytes)
	}
	line := fmt.Sprintf("kg %s %s (%d chunks, %d entity mentions, %d relation mentions", r.Outcome, termtext.Escape(r.Path), r.Chunks, r.Entities, r.Relations)
	if r.Rejected > 0 {
		line += fmt.Sprintf(", %d malformed lines skipped", r.Rejected)
	}
	return line + ", " + r.Duration.Round(time.Millisecond).String() + ")"
}

// ShortID is a document id cut to the 12 characters a person compares.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// unsupportedCounts groups passed-over files by reason, most common first:
// "12 no file extension, 3 unsupported file type .go".
func unsupportedCounts(rs []FileResult) string {
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

// Counted is n with its noun, plural unless n is 1 ("1 transaction",
// "3 transaction retries").
func Counted[N int | int64](n N, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteText prints the plan for people: what a run would build and send
// to each model.
func (sum *DryRunSummary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "dry run: %d documents to build in %d chunks; %d unchanged, %d failed, %d unsupported files\n",
		sum.Documents, sum.Chunks, sum.Unchanged, sum.Failed, sum.Unsupported)
	if len(sum.Models) == 0 {
		fmt.Fprintln(w, "no model calls would be made (offline extraction; give --llm to estimate a model's)")
	}
	for _, m := range sum.Models {
		fmt.Fprintf(w, "llm %s: %d chunks, %d extraction calls with %d prompt tokens to send; %d cache hits (%d prompt tokens not sent)\n",
			m.Model, m.Chunks, m.Calls, m.PromptTokens, m.CacheHits, m.CachedPromptTokens)
		if m.Gleaning > 0 {
			fmt.Fprintf(w, "llm %s: gleaning not estimated: up to %s more per chunk, each resending the conversation, as the answers decide\n", m.Model, Counted(m.Gleaning, "round"))
		}
	}
	fmt.Fprintln(w, "nothing was written")
}

// WriteText prints the report for people: the store, its embedder, the
// documents by state, the failed, warned and unfinished ones, and where
// the bytes go when the report says.
func (rep *StatusReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "store:     %s\n", rep.Store)
	emb := "none yet (empty store)"
	if rep.Embedder.Name != "" {
		emb = fmt.Sprintf("%s, dimension %d", rep.Embedder.Name, rep.Embedder.Dimension)
	}
	fmt.Fprintf(w, "embedder:  %s\n", emb)
	fmt.Fprintf(w, "documents: %d (%d done, %d failed, %d processing, %d pending, %d duplicate)\n", rep.Documents,
		rep.ByStatus["done"], rep.ByStatus["failed"], rep.ByStatus["processing"], rep.ByStatus["pending"], rep.ByStatus["duplicate"])
	fmt.Fprintf(w, "graph:     %d chunks, %d entities, %d relations, %d mentions\n", rep.Chunks, rep.Entities, rep.Relations, rep.Mentions)
	if len(rep.Failed) > 0 {
		fmt.Fprintf(w, "failed:\n")
		for _, d := range rep.Failed {
			fmt.Fprintf(w, "  %s: %s\n", termtext.Escape(d.Path), termtext.OneLine(d.Error, MaxErrorBytes))
		}
	}
	if len(rep.Warned) > 0 {
		fmt.Fprintf(w, "warnings (`ingest show PATH` lists them all):\n")
		for _, d := range rep.Warned {
			more := ""
			if n := len(d.Warnings); n > 1 {
				more = fmt.Sprintf(" (and %d more)", n-1)
			}
			fmt.Fprintf(w, "  %s: %s%s\n", termtext.Escape(d.Path), termtext.OneLine(d.Warnings[0], 160), more)
		}
	}
	if len(rep.Unfinished) > 0 {
		fmt.Fprintf(w, "unfinished (resumed by the next ingest):\n")
		for _, d := range rep.Unfinished {
			fmt.Fprintf(w, "  %s: %s\n", termtext.Escape(d.Path), d.Status)
		}
	}
	if len(rep.Space) > 0 {
		writeSpace(w, rep.Space)
	}
}

// writeSpace lists where the store's bytes go: the parts of the database
// file, largest first, then every file.
func writeSpace(w io.Writer, space []store.Space) {
	fmt.Fprintf(w, "space:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, sp := range space {
		what := sp.Kind + " in " + sp.File
		if sp.Kind == "file" {
			what = "file"
		}
		fmt.Fprintf(tw, "  %10s\t%s\t%s\n", sizeText(sp.Bytes), termtext.Escape(sp.Name), what)
	}
	tw.Flush()
}

// sizeText is a byte count for people: 1.2 MB, 340 kB, 12 B.
func sizeText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// WriteText prints the document for people: its metadata and warnings,
// a table of its chunks, then its text; a document without chunks stops
// after the metadata.
func (d *StoredDocument) WriteText(w io.Writer) {
	fmt.Fprintf(w, "document:  %s\n", termtext.Escape(d.Path))
	fmt.Fprintf(w, "id:        %s\n", d.ID)
	fmt.Fprintf(w, "title:     %s\n", termtext.Escape(d.Title))
	fmt.Fprintf(w, "format:    %s, %d bytes\n", d.Format, d.Size)
	status := d.Status
	if d.Error != "" {
		status += ": " + termtext.OneLine(d.Error, MaxErrorBytes)
	}
	fmt.Fprintf(w, "status:    %s\n", status)
	tokens := 0
	for _, c := range d.Chunks {
		tokens += c.Tokens
	}
	fmt.Fprintf(w, "chunks:    %d (%d tokens)\n", len(d.Chunks), tokens)
	fmt.Fprintf(w, "warnings:  %d\n", len(d.Warnings))
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "  %s\n", termtext.OneLine(warn, 0))
	}
	if len(d.Chunks) > 0 {
		fmt.Fprintln(w, "\n  chunk  tokens  bytes")
		for _, c := range d.Chunks {
			fmt.Fprintf(w, "  %5d  %6d  %d-%d  %s\n", c.Index, c.Tokens, c.Start, c.End, termtext.OneLine(head(c.Text, 200), 60))
		}
		fmt.Fprintln(w, "\n--- text ---")
		d.WriteBody(w)
	}
}

// WriteBody prints the document's rebuilt text, ending in a newline.
func (d *StoredDocument) WriteBody(w io.Writer) {
	fmt.Fprint(w, d.Text)
	if !strings.HasSuffix(d.Text, "\n") {
		fmt.Fprintln(w)
	}
}

// head is at most the first n bytes of s, cut at a character boundary.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// WatchLog prints a watch run's news as a person or a log reads it, one
// line at a time whichever goroutine reports: each change of content to
// Out (FileResult.ChangeLine, or with JSON the tidied result as a line of
// JSON), each failure to Err after Prefix, and each sync's summary to Out
// (Summary.WriteText and then Watching, or the tidied summary as JSON)
// once Synced, when set, has run.
type WatchLog struct {
	Out, Err io.Writer
	JSON     bool
	Prefix   string
	Watching string
	Synced   func()

	mu sync.Mutex
}

// Options are the watch options that report to l.
func (l *WatchLog) Options() []WatchOption {
	enc := json.NewEncoder(l.Out)
	return []WatchOption{
		WithOnChange(func(r FileResult) {
			if r.Outcome == Unchanged {
				return // an event without a content change (a touch, a save without edits)
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.JSON {
				_ = enc.Encode(r.Tidy())
				return
			}
			fmt.Fprintln(l.Out, r.ChangeLine(time.Now()))
		}),
		WithOnError(func(err error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			fmt.Fprintln(l.Err, l.Prefix, termtext.OneLine(err.Error(), MaxErrorBytes))
		}),
		WithOnSynced(func(sum *Summary) {
			if l.Synced != nil {
				l.Synced()
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.JSON {
				_ = enc.Encode(sum.Tidy())
				return
			}
			sum.WriteText(l.Out)
			fmt.Fprintln(l.Out, l.Watching)
		}),
	}
}
