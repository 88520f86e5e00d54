package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// statusOptions is everything `ingest status` needs.
type statusOptions struct {
	Settings pipeline.Settings
	Config   string
	JSON     bool
	Space    bool
}

func newStatusCmd(io streams) *cobra.Command {
	opts := &statusOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what the store holds: documents by state, failures with reasons, store and embedder",
		Long: `status reports the documents in the store by lifecycle state (pending,
processing, done, failed), lists failed documents with their reasons and
unfinished ones (resumed by the next ingest), and names the store and the
embedder whose vectors it holds. With --space it also says where the store's
bytes go: every table, index and full-text index in the database file, its
free pages, and each file of the store.`,
		Args: cli.Args(cobra.NoArgs, "status takes no arguments (the store is chosen with --store)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				return err
			}
			return runStatus(cmd.Context(), opts, io)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	fs.BoolVar(&opts.Space, "space", false, "also say where the store's bytes go: every table, index and file (reads the whole database file)")
	return cmd
}

// statusReport is what `ingest status --json` prints.
type statusReport = pipeline.StatusReport

func runStatus(ctx context.Context, opts *statusOptions, io streams) error {
	rep, err := pipeline.Status(ctx, opts.Settings, opts.Space)
	if errors.Is(err, pipeline.ErrNoSpaceReport) {
		return fmt.Errorf("--space: %w", err)
	} else if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(io.Out, rep)
	}
	w := io.Out
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
			fmt.Fprintf(w, "  %s: %s\n", cli.Escape(d.Path), cli.OneLine(d.Error, maxErrorBytes))
		}
	}
	if len(rep.Warned) > 0 {
		fmt.Fprintf(w, "warnings (`ingest show PATH` lists them all):\n")
		for _, d := range rep.Warned {
			more := ""
			if n := len(d.Warnings); n > 1 {
				more = fmt.Sprintf(" (and %d more)", n-1)
			}
			fmt.Fprintf(w, "  %s: %s%s\n", cli.Escape(d.Path), cli.OneLine(d.Warnings[0], 160), more)
		}
	}
	if len(rep.Unfinished) > 0 {
		fmt.Fprintf(w, "unfinished (resumed by the next ingest):\n")
		for _, d := range rep.Unfinished {
			fmt.Fprintf(w, "  %s: %s\n", cli.Escape(d.Path), d.Status)
		}
	}
	if len(rep.Space) > 0 {
		printSpace(w, rep.Space)
	}
	return nil
}

// printSpace lists where the store's bytes go: the parts of the database
// file, largest first, then every file.
func printSpace(w io.Writer, space []store.Space) {
	fmt.Fprintf(w, "space:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, sp := range space {
		what := sp.Kind + " in " + sp.File
		if sp.Kind == "file" {
			what = "file"
		}
		fmt.Fprintf(tw, "  %10s\t%s\t%s\n", sizeText(sp.Bytes), cli.Escape(sp.Name), what)
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
