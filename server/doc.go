// Package server is docgraph's query service as a library: the warm
// Engine that the long-running commands (query serve, query mcp) hold
// between requests, the HTTP API over it (NewHandler), the Model Context
// Protocol server (NewMCPServer, served over HTTP by NewMCPHTTPHandler or
// over stdio by NewStdioTransport), and the JSON they answer with
// (Response and the browsing types).
//
// A program opens an Engine over an existing store and mounts the handler
// (StartEngine also loads the store first and follows other writers):
//
//	e, err := server.OpenEngine(ctx, pipeline.Settings{Store: "sqlite://g.db"}, server.DefaultConfig(), false)
//	if err != nil { ... }
//	defer e.Close()
//	http.Handle("/", server.NewHandler(e, server.HandlerConfig{Timeout: time.Minute}))
//
// The root package docgraph offers the same through (*Graph).Handler.
// It sits below the root, which exposes it, and imports pipeline,
// retrieve and store but never docgraph itself, so that the root can
// offer the service without an import cycle. The engine only reads the
// store: writes belong to ingest (or docgraph.Graph.Ingest).
package server
