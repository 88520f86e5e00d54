package main

import (
	"context"
	"log"
	"net"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/server"
)

// serverFlags are what `query serve` and `query mcp` share: the store,
// retrieval and path flags of `query`, and how the server runs.
type serverFlags struct {
	Settings pipeline.Settings
	Config   string
	Retrieve retrievalFlags
	Paths    pathFlags
	Token    string
	Timeout  time.Duration
	Shutdown time.Duration
	// Refresh is how often the store's graph version is checked for
	// another process's writes (0: only when a query notices).
	Refresh time.Duration
	// embedderSet is true when --embedder was given (flag, env or config);
	// otherwise the store's own embedder is used.
	embedderSet bool
	// conn bounds each connection; zero fields take the defaults.
	conn server.ConnTimeouts
}

func (f *serverFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.Config, "config", "docgraph.yaml", "optional YAML config file")
	f.Settings.AddStoreFlags(fs)
	f.Retrieve.add(fs)
	f.Paths.add(fs)
	fs.StringVar(&f.Token, "token", "", "bearer token clients must send (Authorization: Bearer ...); required off loopback; prefer DOCGRAPH_TOKEN")
	fs.DurationVar(&f.Timeout, "request-timeout", 60*time.Second, "longest a request may take, answer included")
	fs.DurationVar(&f.Shutdown, "shutdown-timeout", 10*time.Second, "on SIGTERM, how long requests in flight may take to finish")
	fs.DurationVar(&f.Refresh, "refresh", 250*time.Millisecond, "how often to look for another process's writes to the store (0: when a query runs)")
}

// apply fills unset flags from the environment and config file, then
// checks what a server needs.
func (f *serverFlags) apply(cmd *cobra.Command) error {
	if err := pipeline.ApplyConfig(cmd.Flags(), f.Config, cmd.Flags().Changed("config")); err != nil {
		return err
	}
	if f.Timeout <= 0 {
		return cli.Usagef("--request-timeout %s: must be positive", f.Timeout)
	}
	if f.Shutdown < 0 {
		return cli.Usagef("--shutdown-timeout %s: must not be negative", f.Shutdown)
	}
	if f.Token != "" && len(f.Token) < 16 {
		return cli.Usagef("--token: use at least 16 characters (e.g. openssl rand -hex 32)")
	}
	e := cmd.Flags().Lookup("embedder")
	f.embedderSet = e.Changed || e.Value.String() != e.DefValue
	return nil
}

// start opens the engine the flags name, loads the store and follows
// other processes' writes to it until stop.
func (f *serverFlags) start(ctx context.Context, logger *log.Logger) (e *server.Engine, stop func(), err error) {
	cfg, err := f.config()
	if err != nil {
		return nil, nil, err
	}
	return server.StartEngine(ctx, f.Settings, cfg, f.embedderSet, f.Refresh, logger)
}

// config is the flags as the query server's configuration.
func (f *serverFlags) config() (server.Config, error) {
	c := f.Retrieve.config()
	var err error
	c.Paths, err = f.Paths.config()
	return c, err
}

// checkAddr refuses to listen beyond loopback without a token.
func checkAddr(flag, addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cli.Usagef("%s %q: %v (want HOST:PORT, e.g. 127.0.0.1:8080)", flag, addr, err)
	}
	if token == "" && !server.IsLoopback(host) {
		return cli.Usagef("%s %s is reachable from other machines: give a bearer token (--token or DOCGRAPH_TOKEN), or bind 127.0.0.1", flag, addr)
	}
	return nil
}

type serveOptions struct {
	serverFlags
	Addr          string
	MaxConcurrent int
	AccessLog     bool
}

func newServeCmd(io streams) *cobra.Command {
	opts := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:8080]",
		Short: "Answer queries over HTTP from one warm process (read-only)",
		Long: `serve keeps the store, the embedder, the retriever and its caches warm in
one process and answers concurrently over HTTP (JSON; OpenAPI document at
/v1/openapi.json):

  POST /v1/query          what query takes: {"question": "...", "mode": "mix",
                          "top_k": 5, ...}; returns what query --json prints;
                          with --llm and "stream": true, server-sent events
  GET  /                  a web page: ask, read passages, explore the graph
  GET  /v1/documents      ?offset=&limit=&status=&path_prefix=
  GET  /v1/documents/{id} a document (id, or path with / as %2F) and its text
  GET  /v1/entities       ?name=  exact name, then full-text matches
  GET  /v1/entities/{id}  description, passages, relations
  GET  /v1/graph          ?entity=ID&hops=1|2&limit=N  nodes and edges
  GET  /v1/chunks/{id}    a passage with its document and entities
  GET  /v1/subgraph       ?chunk=ID&entity=ID&limit=N  the graph around passages
  GET  /v1/stats, /healthz

It never writes to the store. It follows writes another process makes
(ingest --watch): new documents are answered within a second of their
commit. Loopback only unless a bearer token is set (--token or
DOCGRAPH_TOKEN). SIGTERM finishes requests in flight, then exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := opts.apply(cmd)
			if err == nil {
				err = checkAddr("--addr", opts.Addr, opts.Token)
			}
			if err == nil {
				err = runServe(cmd.Context(), opts, io, nil)
			}
			return err
		},
	}
	fs := cmd.Flags()
	opts.add(fs)
	fs.StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.IntVar(&opts.MaxConcurrent, "max-concurrent", defaultMaxConcurrent(), "requests worked on at once; more wait their turn")
	fs.BoolVar(&opts.AccessLog, "access-log", true, "log one line per request to stderr (method, path, status, time)")
	return cmd
}

// defaultMaxConcurrent is --max-concurrent unless set, for serve and mcp:
// twice the CPUs, at least 4 (a request mostly waits on the store or a
// model, so more than one per CPU keeps them busy).
func defaultMaxConcurrent() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// runServe serves until ctx ends, then shuts down gracefully. ready, when
// not nil, hears the address once the server listens.
func runServe(ctx context.Context, opts *serveOptions, io streams, ready func(addr string)) error {
	logger := log.New(io.Err, "query serve: ", log.LstdFlags)
	e, stop, err := opts.start(ctx, logger)
	if err != nil {
		return err
	}
	defer stop()

	h := server.NewHandler(e, server.HandlerConfig{Token: opts.Token, Timeout: opts.Timeout, MaxConcurrent: opts.MaxConcurrent,
		AccessLog: opts.AccessLog, Logf: logger.Printf})
	// The write deadline runs from the end of the request's headers: it
	// leaves room for the slowest body allowed, then the request's own time
	// limit, a streamed answer included.
	so := opts.serveOptions(opts.Addr, "", 0, logger, ready)
	so.WriteTimeout = so.Timeouts().Read + opts.Timeout + 10*time.Second
	return server.ListenAndServe(ctx, h, so)
}

// serveOptions are how the server runs on addr (its URL path given by
// path); writeTimeout 0 means none (long-lived MCP streams).
func (f *serverFlags) serveOptions(addr, path string, writeTimeout time.Duration, logger *log.Logger, ready func(string)) server.ServeOptions {
	return server.ServeOptions{Addr: addr, Path: path, Guarded: f.Token != "", Conn: f.conn, WriteTimeout: writeTimeout,
		Shutdown: f.Shutdown, Logger: logger, Ready: ready}
}
