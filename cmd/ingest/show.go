package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// showOptions is everything `ingest show` needs.
type showOptions struct {
	Settings pipeline.Settings
	Config   string
	JSON     bool
	TextOnly bool
	Target   string
}

func newShowCmd(io streams) *cobra.Command {
	opts := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show PATH|DOC_ID",
		Short: "Print what the store holds for one document: its text, chunks and warnings",
		Long: `show prints a stored document: its metadata and warnings, its chunks with
their token counts and byte ranges, and its text rebuilt from the chunks by
their offsets (the whitespace the splitter trimmed between two chunks comes
back as spaces and newlines of the same length, so offsets stay exact).
It reads the store only; the file itself is not opened.`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config"))
			if err == nil {
				opts.Target = args[0]
				err = runShow(cmd.Context(), opts, io)
			}
			return err // cli.Run reports it, escaped
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print the document, its chunks and its text as JSON")
	fs.BoolVar(&opts.TextOnly, "text", false, "print only the rebuilt text")
	return cmd
}

// shownDocument is what `ingest show --json` prints.
type shownDocument struct {
	ID          string       `json:"id"`
	Path        string       `json:"path"`
	Title       string       `json:"title"`
	Format      string       `json:"format"`
	Status      string       `json:"status"`
	Error       string       `json:"error,omitempty"`
	Size        int64        `json:"size"`
	ModTime     time.Time    `json:"mod_time"`
	UpdatedAt   time.Time    `json:"updated_at"`
	Fingerprint string       `json:"fingerprint"`
	Warnings    []string     `json:"warnings"`
	Chunks      []shownChunk `json:"chunks"`
	Text        string       `json:"text"`
}

type shownChunk struct {
	ID     string `json:"id"`
	Index  int    `json:"index"`
	Tokens int    `json:"tokens"`
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Text   string `json:"text"`
}

func runShow(ctx context.Context, opts *showOptions, io streams) error {
	st, err := pipeline.OpenExistingStore(ctx, opts.Settings, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := findDocument(ctx, st, opts.Target)
	if err != nil {
		return err
	}
	chunks, err := st.DocumentChunks(ctx, d.ID)
	if err != nil {
		return err
	}
	out := shownDocument{
		ID: d.ID, Path: d.Path, Title: d.Title, Format: d.Format, Status: string(d.Status), Error: d.Error,
		Size: d.Size, ModTime: d.ModTime, UpdatedAt: d.UpdatedAt, Fingerprint: d.Fingerprint,
		Warnings: documentWarnings(d), Chunks: []shownChunk{}, Text: rebuildText(chunks),
	}
	for _, c := range chunks {
		out.Chunks = append(out.Chunks, shownChunk{ID: c.ID, Index: c.Index, Tokens: c.Tokens, Start: c.Start, End: c.End, Text: c.Text})
	}
	w := io.Out
	switch {
	case opts.JSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case opts.TextOnly:
		fmt.Fprint(w, out.Text)
		if !strings.HasSuffix(out.Text, "\n") {
			fmt.Fprintln(w)
		}
		return nil
	}
	fmt.Fprintf(w, "document:  %s\n", cli.Escape(out.Path))
	fmt.Fprintf(w, "id:        %s\n", out.ID)
	fmt.Fprintf(w, "title:     %s\n", cli.Escape(out.Title))
	fmt.Fprintf(w, "format:    %s, %d bytes\n", out.Format, out.Size)
	status := out.Status
	if out.Error != "" {
		status += ": " + cli.OneLine(out.Error, maxErrorBytes)
	}
	fmt.Fprintf(w, "status:    %s\n", status)
	tokens := 0
	for _, c := range out.Chunks {
		tokens += c.Tokens
	}
	fmt.Fprintf(w, "chunks:    %d (%d tokens)\n", len(out.Chunks), tokens)
	fmt.Fprintf(w, "warnings:  %d\n", len(out.Warnings))
	for _, warn := range out.Warnings {
		fmt.Fprintf(w, "  %s\n", cli.OneLine(warn, 0))
	}
	if len(out.Chunks) > 0 {
		fmt.Fprintln(w, "\n  chunk  tokens  bytes")
		for _, c := range out.Chunks {
			fmt.Fprintf(w, "  %5d  %6d  %d-%d  %s\n", c.Index, c.Tokens, c.Start, c.End, cli.OneLine(head(c.Text, 200), 60))
		}
		fmt.Fprintln(w, "\n--- text ---")
		fmt.Fprint(w, out.Text)
		if !strings.HasSuffix(out.Text, "\n") {
			fmt.Fprintln(w)
		}
	}
	return nil
}

// findDocument resolves a document id, or else a file path (made absolute,
// as ingest stores paths).
func findDocument(ctx context.Context, st store.Reader, target string) (*store.Document, error) {
	if d, err := st.Document(ctx, target); err == nil {
		return d, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	abs, err := filepath.Abs(target)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	d, err := st.DocumentByPath(ctx, abs)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("nothing stored for %s (neither a document id nor an ingested path; `ingest status` lists them)", target)
	}
	return d, err
}

// rebuildText puts a document's text back together from its chunks, which
// are exact byte ranges of it that overlap or leave gaps. A gap is
// whitespace the splitter trimmed; it comes back as the same number of
// bytes, newlines when it is two or more (a paragraph break is the usual
// cause), a space otherwise, so every chunk's offsets still point at it.
func rebuildText(chunks []store.Chunk) string {
	var sb strings.Builder
	end := 0
	for _, c := range chunks {
		if c.End <= end {
			continue
		}
		if gap := c.Start - end; gap > 0 {
			if gap == 1 {
				sb.WriteByte(' ')
			} else {
				sb.WriteString(strings.Repeat("\n", gap))
			}
		}
		from := max(end, c.Start) - c.Start
		if from > len(c.Text) {
			from = len(c.Text)
		}
		sb.WriteString(c.Text[from:])
		end = c.End
	}
	return sb.String()
}

// documentWarnings is what ingest recorded as warnings for a document.
func documentWarnings(d *store.Document) []string {
	if d.Warnings == nil {
		return []string{}
	}
	return d.Warnings
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
