package main

import (
	"context"
	"log"

	"github.com/spf13/cobra"

	"github.com/docgraph/docgraph/server"
	"github.com/docgraph/docgraph/store"
)

type mcpOptions struct {
	serverFlags
	HTTP string
}

func newMCPCmd(io streams) *cobra.Command {
	opts := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp [--http 127.0.0.1:8090]",
		Short: "Serve the knowledge graph to AI assistants over the Model Context Protocol (read-only)",
		Long: `mcp is docgraph as a Model Context Protocol server: by default over stdio
(the assistant starts "query mcp --store ..." itself), with --http ADDR over
the streamable HTTP transport at http://ADDR/mcp. Tools:

  search          passages that answer a question (with document paths),
                  the entities and relations around them
  get_entity      an entity's description, passages and relations
  neighbours      the entities and relations within 1 or 2 hops
  get_chunk       one passage in full, by id or by document and index
  list_documents  the indexed documents, a page at a time

It never writes to the store and follows another process's writes (ingest
--watch). Over HTTP the same rules as serve hold: loopback only unless a
bearer token is set (--token or DOCGRAPH_TOKEN).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := opts.apply(cmd)
			if err == nil && opts.HTTP != "" {
				err = checkAddr("--http", opts.HTTP, opts.Token)
			}
			if err == nil {
				err = runMCP(cmd.Context(), opts, io, nil)
			}
			return err
		},
	}
	opts.add(cmd.Flags())
	cmd.Flags().StringVar(&opts.HTTP, "http", "", "serve the streamable HTTP transport on this address (path /mcp) instead of stdio")
	return cmd
}

// runMCP serves MCP over stdio (io.In and io.Out) or, with --http, over
// HTTP until ctx ends. ready, when not nil, hears the HTTP address.
func runMCP(ctx context.Context, opts *mcpOptions, io streams, ready func(addr string)) error {
	logger := log.New(io.Err, "query mcp: ", log.LstdFlags)
	e, stop, err := opts.start(ctx, logger)
	if err != nil {
		return err
	}
	defer stop()
	srv := server.NewMCPServer(e, opts.Timeout)
	if opts.HTTP == "" {
		logger.Printf("serving %s over stdio", store.Redact(opts.Settings.Store))
		err := srv.Run(ctx, server.NewStdioTransport(io.In, io.Out, logger))
		if ctx.Err() != nil {
			return nil // a signal, not a failure
		}
		return err
	}
	h := server.NewMCPHTTPHandler(srv, opts.Token, server.DefaultMCPSessions)
	return server.ListenAndServe(ctx, h, opts.serveOptions(opts.HTTP, "/mcp", 0, logger, ready))
}
