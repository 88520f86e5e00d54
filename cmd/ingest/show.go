package main

import (
	"context"
	"encoding/json"

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
	// Raw prints the text as stored even on a terminal, where its control
	// characters are otherwise escaped.
	Raw    bool
	Target string
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
It reads the store only; the file itself is not opened.

On a terminal, control characters in the text (escape sequences that
would clear the screen or retitle the window, bidirectional overrides) are
shown escaped, as \x1b or \u202e; lines and tabs are kept. --raw, or an
output that is no terminal (a pipe, a file), gets the text as stored;
--json escapes it as JSON does.`,
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
	fs.BoolVar(&opts.Raw, "raw", false, "print the text as stored, control characters included, even on a terminal")
	return cmd
}

// shownDocument is what `ingest show --json` prints.
type shownDocument = pipeline.StoredDocument

func runShow(ctx context.Context, opts *showOptions, io streams) error {
	doc, err := pipeline.ShowDocument(ctx, opts.Settings, opts.Target)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	out, flush := cli.TerminalText(io.Out, io.OutTTY && !opts.Raw)
	if opts.TextOnly {
		doc.WriteBody(out)
	} else {
		doc.WriteText(out)
	}
	return flush()
}
