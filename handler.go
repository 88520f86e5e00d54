package docgraph

import (
	"net/http"
	"runtime"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/server"
)

// HandlerOption configures Handler.
type HandlerOption func(*server.HandlerConfig)

// WithToken makes every route but /healthz (and /mcp) ask for
// "Authorization: Bearer TOKEN". Without a token the handler answers only
// requests addressed to localhost, so that a web page cannot reach it
// through DNS rebinding; give one before serving beyond loopback.
func WithToken(token string) HandlerOption {
	return func(c *server.HandlerConfig) { c.Token = token }
}

// WithRequestTimeout bounds each request, answer included (default one
// minute).
func WithRequestTimeout(d time.Duration) HandlerOption {
	return func(c *server.HandlerConfig) { c.Timeout = d }
}

// WithMaxConcurrent sets how many requests are worked on at once; more
// wait their turn (default twice the CPUs, at least 4). The tool calls of
// /mcp have as many slots of their own; one more is refused at once with a
// JSON-RPC error.
func WithMaxConcurrent(n int) HandlerOption {
	return func(c *server.HandlerConfig) { c.MaxConcurrent = n }
}

// WithAccessLog logs one line per request (method, path, status, time)
// through logf, and the handler's own troubles (a panic, a store that
// cannot be reached) either way.
func WithAccessLog(logf func(format string, args ...any)) HandlerOption {
	return func(c *server.HandlerConfig) { c.AccessLog, c.Logf = logf != nil, logf }
}

// Handler is the HTTP API over the graph, the one `query serve` offers
// (POST /v1/query, GET /v1/documents, /v1/entities, /v1/graph,
// /v1/chunks/{id}, /v1/stats, /healthz; OpenAPI at /v1/openapi.json), with
// the Model Context Protocol's streamable HTTP transport at /mcp (the
// tools of `query mcp`), for a program to mount in its own server. Its
// queries use the graph's retrieval settings and, with WithLLM, answer.
// Every Handler shares one warm engine; it only reads the store, so the
// graph may ingest meanwhile.
func (g *Graph) Handler(opts ...HandlerOption) http.Handler {
	cfg := server.HandlerConfig{Timeout: time.Minute, MaxConcurrent: max(4, 2*runtime.GOMAXPROCS(0))}
	for _, o := range opts {
		o(&cfg)
	}
	e, err := g.engine()
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "docgraph: "+err.Error(), http.StatusInternalServerError)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewMCPHTTPHandler(server.NewMCPServer(e, cfg.Timeout, max(cfg.MaxConcurrent, 1)), cfg.Token, server.DefaultMCPSessions))
	mux.Handle("/", server.NewHandler(e, cfg))
	return mux
}

// engine is the query engine the handlers share, made on first use.
func (g *Graph) engine() (*server.Engine, error) {
	g.engOnce.Do(func() {
		cfg := server.DefaultConfig()
		cfg.Retrieval = g.ret.Config()
		var chat llms.Model
		if g.models.Chat != nil {
			chat = g.models.Chat // not a typed nil in the interface
		}
		g.eng, g.engErr = server.NewEngine(g.st, g.models.Embedder, chat, g.settings.Store, cfg)
	})
	return g.eng, g.engErr
}
