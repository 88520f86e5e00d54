package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
)

// exportOptions is everything `ingest export` needs.
type exportOptions struct {
	Settings   pipeline.Settings
	Config     string
	Format     string
	Output     string
	NoMentions bool
	JSON       bool
}

func newExportCmd(io streams) *cobra.Command {
	opts := &exportOptions{}
	cmd := &cobra.Command{
		Use:   "export [--format jsonl|graphml] [-o FILE]",
		Short: "Write the stored graph for other tools: JSON Lines or GraphML (Gephi, yEd, NetworkX)",
		Long: `export writes the graph the store holds, from either store, in id order:

  jsonl    one JSON object a line, each with a "kind": every entity (id, name,
           type, description, mentions), then every relation (id, source_id,
           target_id, type, keywords, description, weight), then every
           MENTIONED_IN edge (entity_id, chunk_id, doc_id, doc_path)
  graphml  entities as nodes and relations as RELATES edges, plus chunks as
           nodes and MENTIONED_IN edges; directed when the graph holds typed
           (KG-imported) relations, undirected otherwise

--no-mentions leaves chunks and MENTIONED_IN edges out. The output goes to
standard output unless -o names a file (written whole or not at all).`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config"))
			if err == nil {
				err = runExport(cmd.Context(), opts, io)
			}
			return err // cli.Run reports it, escaped
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	fs.StringVar(&opts.Format, "format", "jsonl", "jsonl or graphml")
	fs.StringVarP(&opts.Output, "output", "o", "", "file to write (default: standard output)")
	fs.BoolVar(&opts.NoMentions, "no-mentions", false, "leave out chunks and MENTIONED_IN edges")
	fs.BoolVar(&opts.JSON, "json", false, "with -o: print what was written as JSON")
	return cmd
}

func runExport(ctx context.Context, opts *exportOptions, io streams) error {
	if pipeline.ExportFormats[strings.ToLower(opts.Format)] == nil {
		return cli.Usagef("--format %q: want jsonl or graphml", opts.Format)
	}
	xopts := graphbuild.ExportOptions{Mentions: !opts.NoMentions}
	if opts.Output == "" || opts.Output == "-" {
		n, err := pipeline.Export(ctx, opts.Settings, opts.Format, io.Out, "", xopts)
		if err != nil {
			return err
		}
		return reportExport(io.Err, false, "standard output", n)
	}
	n, err := pipeline.Export(ctx, opts.Settings, opts.Format, nil, opts.Output, xopts)
	if err != nil {
		return err
	}
	return reportExport(io.Out, opts.JSON, opts.Output, n)
}

func reportExport(w io.Writer, asJSON bool, where string, n graphbuild.ExportCounts) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Output string `json:"output"`
			graphbuild.ExportCounts
		}{where, n})
	}
	_, err := fmt.Fprintf(w, "exported %d entities, %d relations, %d mentions to %s\n", n.Entities, n.Relations, n.Mentions, cli.Escape(where))
	return err
}
