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
	var results []pipeline.FileResult
	failed := 0
	for _, path := range opts.KGTriples {
		r := p.ImportTriples(ctx, path)
		results = append(results, r)
		line := fmt.Sprintf("kg %s %s (%d chunks, %d entity mentions, %d relation mentions", r.Outcome, cli.Escape(r.Path), r.Chunks, r.Entities, r.Relations)
		if r.Rejected > 0 {
			line += fmt.Sprintf(", %d malformed lines skipped", r.Rejected)
		}
		line += ", " + r.Duration.Round(1e6).String() + ")"
		if r.Error != "" {
			line = "kg failed: " + cli.OneLine(r.Error, maxErrorBytes)
			failed++
		}
		fmt.Fprintln(io.Err, line)
		for _, w := range r.Warnings {
			fmt.Fprintf(io.Err, "warning: %s\n", warningLine(r.Path, w))
		}
		if err := ctx.Err(); err != nil {
			return true, err
		}
	}
	if len(opts.Paths) > 0 {
		if failed > 0 {
			fmt.Fprintln(io.Err, "kg import failed: the PATH arguments were not ingested")
			return true, cli.Shown(errSomeFailed)
		}
		return false, nil
	}
	if opts.JSON {
		if err := writeJSON(io.Out, tidyResults(results)); err != nil {
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
