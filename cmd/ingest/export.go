package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
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

// exportFunc writes the graph in one format.
type exportFunc func(context.Context, io.Writer, graphbuild.ExportSource, graphbuild.ExportOptions) (graphbuild.ExportCounts, error)

func runExport(ctx context.Context, opts *exportOptions, io streams) error {
	write := map[string]exportFunc{
		"jsonl":   graphbuild.WriteJSONL,
		"graphml": graphbuild.WriteGraphML,
	}[strings.ToLower(opts.Format)]
	if write == nil {
		return cli.Usagef("--format %q: want jsonl or graphml", opts.Format)
	}
	st, err := pipeline.OpenExistingStore(ctx, opts.Settings, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer st.Close()
	src, ok := st.(graphbuild.ExportSource)
	if !ok {
		return fmt.Errorf("store %s cannot be scanned whole, so it cannot be exported", store.Redact(storeURL(opts.Settings)))
	}
	xopts := graphbuild.ExportOptions{Mentions: !opts.NoMentions}

	if opts.Output == "" || opts.Output == "-" {
		n, err := write(ctx, io.Out, src, xopts)
		if err != nil {
			return err
		}
		return reportExport(io.Err, false, "standard output", n)
	}
	// Write beside the target and rename, so a failed export never leaves a
	// truncated file where a good one was.
	tmp, err := os.CreateTemp(filepath.Dir(opts.Output), "."+filepath.Base(opts.Output)+".*")
	if err != nil {
		return fmt.Errorf("export to %s: %w", opts.Output, err)
	}
	defer os.Remove(tmp.Name())
	n, err := write(ctx, tmp, src, xopts)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), opts.Output)
	}
	if err != nil {
		return fmt.Errorf("export to %s: %w", opts.Output, err)
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
