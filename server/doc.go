// Package server is docgraph's query service as a library: what the
// long-running commands (query serve, query mcp) hold between requests and
// the JSON they answer with.
//
// It sits below the root package docgraph, which exposes it, and imports
// pipeline, retrieve and store but never docgraph itself, so that the root
// can offer the service without an import cycle. This first step holds the
// query's JSON document (Response) and the query embedder that survives an
// endpoint that is down (OpenQueryEmbedder); the warm engine, the HTTP
// handler and the MCP server follow (issue 24).
package server
