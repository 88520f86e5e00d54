package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
)

// deleteOptions is everything `ingest delete` needs.
type deleteOptions struct {
	Settings pipeline.Settings
	Config   string
	JSON     bool
	Targets  []string
	// embedderSet is true when --embedder was given (flag, env or config).
	embedderSet bool
}

// errNothingDeleted makes the exit status 1 when a target matched no document.
var errNothingDeleted = errors.New("nothing stored for some targets")

func newDeleteCmd(io streams) *cobra.Command {
	opts := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete PATH|DOC_ID...",
		Short: "Remove documents from the graph by file path, folder or document id",
		Long: `delete removes documents with their chunks and mention edges. Entities and
relations no other document mentions go too; the rest lose exactly this
document's share of their descriptions and weights. A folder removes every
document under it. The files themselves are not touched, so a later ingest of
them adds them back.`,
		Args: cli.Args(cobra.MinimumNArgs(1), "no PATH or DOC_ID given: name the files, folders or document ids to delete"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pipeline.ApplyConfig(cmd.Flags(), opts.Config, cmd.Flags().Changed("config")); err != nil {
				return err
			}
			opts.Targets = args
			f := cmd.Flags().Lookup("embedder")
			opts.embedderSet = f.Changed || f.Value.String() != f.DefValue
			return runDelete(cmd.Context(), opts, io)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Config, "config", "docgraph.yaml", "optional YAML config file")
	opts.Settings.AddStoreFlags(fs)
	// Deleting re-merges what the document shared, so it needs the merger the
	// ingest used: the same LLM summariser and description budget.
	opts.Settings.AddLLMFlags(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print what was deleted as JSON")
	return cmd
}

func runDelete(ctx context.Context, opts *deleteOptions, io streams) error {
	// Deletes recompute the embeddings of the entities and relations they
	// touch, so they use the embedder the store holds unless told otherwise.
	deleted, missing, err := pipeline.Delete(ctx, opts.Settings, opts.embedderSet, opts.Targets...)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := writeJSON(io.Out, deleted); err != nil {
			return err
		}
	} else {
		for _, r := range deleted {
			fmt.Fprintf(io.Out, "deleted %s (doc %s): %d chunks, %d entities and %d relations removed\n",
				cli.Escape(r.Path), pipeline.ShortID(r.DocID), r.Chunks, r.Entities, r.Relations)
		}
	}
	if len(missing) > 0 {
		for i, m := range missing {
			missing[i] = cli.Escape(m)
		}
		fmt.Fprintf(io.Err, "ingest delete: nothing stored for %s\n", strings.Join(missing, ", "))
		return cli.Shown(errNothingDeleted)
	}
	return nil
}
