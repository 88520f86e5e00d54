package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
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
	rep.WriteText(io.Out)
	return nil
}
