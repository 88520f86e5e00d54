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
	// MaxConcurrent bounds the requests worked on at once (serve's flag):
	// over stdio every request counts, over HTTP every tool call.
	MaxConcurrent int
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
bearer token is set (--token or DOCGRAPH_TOKEN).

At most --max-concurrent requests are worked on at once (over HTTP, tool
calls); one more is answered at once with a JSON-RPC error (code -32000,
server busy) rather than queued, so a client that sends thousands at once
cannot grow the server without bound.`,
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
	fs := cmd.Flags()
	opts.add(fs)
	fs.StringVar(&opts.HTTP, "http", "", "serve the streamable HTTP transport on this address (path /mcp) instead of stdio")
	fs.IntVar(&opts.MaxConcurrent, "max-concurrent", defaultMaxConcurrent(), "requests worked on at once; more are refused at once with a JSON-RPC error")
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
	srv := server.NewMCPServer(e, opts.Timeout, opts.MaxConcurrent)
	if opts.HTTP == "" {
		logger.Printf("serving %s over stdio", store.Redact(opts.Settings.Store))
		err := srv.Run(ctx, server.NewStdioTransport(io.In, io.Out, logger, opts.MaxConcurrent))
		if ctx.Err() != nil {
			return nil // a signal, not a failure
		}
		return err
	}
	h := server.NewMCPHTTPHandler(srv, opts.Token, server.DefaultMCPSessions)
	return server.ListenAndServe(ctx, h, opts.serveOptions(opts.HTTP, "/mcp", 0, logger, ready))
}
