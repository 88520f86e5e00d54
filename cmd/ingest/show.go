package main

import (
	"context"
	"encoding/json"

	"github.com/spf13/cobra"

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
	switch {
	case opts.JSON:
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case opts.TextOnly:
		out.WriteBody(io.Out)
	default:
		out.WriteText(io.Out)
	}
	return nil
}
