package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
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
type shownDocument = pipeline.StoredDocument

func runShow(ctx context.Context, opts *showOptions, io streams) error {
	out, err := pipeline.ShowDocument(ctx, opts.Settings, opts.Target)
	if err != nil {
		return err
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
