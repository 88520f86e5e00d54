package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
)

// addKGFlags registers --kg-triples.
func addKGFlags(fs *pflag.FlagSet, opts *ingestOptions) {
	fs.StringArrayVar(&opts.KGTriples, "kg-triples", nil,
		"import a file of subject|relation|object lines as entities and typed relations, without extraction (repeatable; PATH arguments become optional)")
}

// pathsOrKG accepts no PATH when --kg-triples names something to import.
func pathsOrKG(cmd *cobra.Command, args []string) error {
	if len(args) == 0 && !cmd.Flags().Changed("kg-triples") {
		return cli.Usagef("no PATH given: name the files and folders to ingest (or a --kg-triples FILE to import)")
	}
	return nil
}

// importKG imports every --kg-triples file, one document each, logging a
// line per file to io.Err (the result list as JSON to io.Out with --json
// when there is nothing else to ingest). done says whether the run is over:
// when nothing else is to be ingested, or when an import failed (the PATH
// arguments then wait for a run whose imports succeed).
func importKG(ctx context.Context, opts *ingestOptions, io streams, p *pipeline.Pipeline) (done bool, err error) {
	results, failed, err := p.ImportTriplesFiles(ctx, opts.KGTriples, func(r pipeline.FileResult) {
		fmt.Fprintln(io.Err, r.ImportLine())
		for _, w := range r.Warnings {
			fmt.Fprintf(io.Err, "warning: %s\n", pipeline.WarningLine(r.Path, w))
		}
	})
	if err != nil {
		return true, err
	}
	if len(opts.Paths) > 0 {
		if failed > 0 {
			fmt.Fprintln(io.Err, "kg import failed: the PATH arguments were not ingested")
			return true, cli.Shown(errSomeFailed)
		}
		return false, nil
	}
	if opts.JSON {
		if err := writeJSON(io.Out, pipeline.TidyResults(results)); err != nil {
			return true, err
		}
	} else if st, err := p.Store.Stats(ctx); err == nil {
		fmt.Fprintf(io.Out, "store: %d documents, %d chunks, %d entities, %d relations\n", st.Documents, st.Chunks, st.Entities, st.Relations)
	}
	if failed > 0 {
		return true, cli.Shown(errSomeFailed)
	}
	return true, nil
}
