package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/server/web"
	"github.com/docgraph/docgraph/store"
)

//go:embed openapi.json
var openAPIDoc []byte

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
	// conn bounds each connection; zero fields take defaultConnTimeouts.
	conn connTimeouts
}

// connTimeouts bound how long one connection may hold the server without
// sending: its request headers, its whole request (body included), and an
// idle keep-alive between requests.
type connTimeouts struct {
	ReadHeader, Read, Idle time.Duration
}

// defaultConnTimeouts: 30 s reads a 64 KiB query body at 2 KiB/s, far
// slower than any real client; a client slower still is cut off with a 408.
var defaultConnTimeouts = connTimeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Idle: 2 * time.Minute}

// timeouts are the connection timeouts in force.
func (f *serverFlags) timeouts() connTimeouts {
	t := f.conn
	t.ReadHeader = cmp.Or(t.ReadHeader, defaultConnTimeouts.ReadHeader)
	t.Read = cmp.Or(t.Read, defaultConnTimeouts.Read)
	t.Idle = cmp.Or(t.Idle, defaultConnTimeouts.Idle)
	return t
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
func (f *serverFlags) start(ctx context.Context, logger *log.Logger) (e *engine, stop func(), err error) {
	t := time.Now()
	if e, err = openEngine(ctx, f.Settings, f.Retrieve, &f.Paths, f.embedderSet); err != nil {
		return nil, nil, err
	}
	if err := e.warm(ctx); err != nil {
		e.close()
		return nil, nil, fmt.Errorf("load the store: %w", err)
	}
	logger.Printf("store %s loaded in %s", store.Redact(f.Settings.Store), time.Since(t).Round(time.Millisecond))
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.follow(fctx, f.Refresh, logger.Printf)
	}()
	return e, func() { cancel(); <-done; e.close() }, nil
}

// checkAddr refuses to listen beyond loopback without a token.
func checkAddr(flag, addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return cli.Usagef("%s %q: %v (want HOST:PORT, e.g. 127.0.0.1:8080)", flag, addr, err)
	}
	if token == "" && !isLoopback(host) {
		return cli.Usagef("%s %s is reachable from other machines: give a bearer token (--token or DOCGRAPH_TOKEN), or bind 127.0.0.1", flag, addr)
	}
	return nil
}

// isLoopback says whether host names only this machine: a loopback
// address, or a name that resolves to loopback addresses alone.
func isLoopback(host string) bool {
	if host == "" {
		return false // every interface
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(context.Background(), host)
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return false
		}
	}
	return true
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
  GET  /v1/documents      ?offset=&limit=&status=&path_prefix=
  GET  /v1/entities       ?name=  exact name, then full-text matches
  GET  /v1/entities/{id}  description, passages, relations
  GET  /v1/graph          ?entity=ID&hops=1|2&limit=N  nodes and edges
  GET  /v1/chunks/{id}    a passage with its document and entities
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
	fs.IntVar(&opts.MaxConcurrent, "max-concurrent", max(4, 2*runtime.GOMAXPROCS(0)), "requests worked on at once; more wait their turn")
	fs.BoolVar(&opts.AccessLog, "access-log", true, "log one line per request to stderr (method, path, status, time)")
	return cmd
}

// runServe serves until ctx ends, then shuts down gracefully. ready, when
// not nil, hears the address once the server listens.
func runServe(ctx context.Context, opts *serveOptions, io streams, ready func(addr string)) error {
	logger := log.New(io.Err, "query serve: ", log.LstdFlags)
	e, stop, err := opts.start(ctx, logger)
	if err != nil {
		return err
	}
	defer stop()

	h := newAPI(e, apiConfig{Token: opts.Token, Timeout: opts.Timeout, MaxConcurrent: opts.MaxConcurrent,
		AccessLog: opts.AccessLog, Logf: logger.Printf})
	// The write deadline runs from the end of the request's headers: it
	// leaves room for the slowest body allowed, then the request's own time
	// limit, a streamed answer included.
	return opts.listenAndServe(ctx, opts.Addr, "", h, opts.timeouts().Read+opts.Timeout+10*time.Second, logger, ready)
}

// listenAndServe serves h on addr (its URL path given by path) until ctx
// ends; writeTimeout 0 means none (long-lived MCP streams).
func (f *serverFlags) listenAndServe(ctx context.Context, addr, path string, h http.Handler, writeTimeout time.Duration, logger *log.Logger, ready func(string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	t := f.timeouts()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          logger,
	}
	auth := "no token (loopback only)"
	if f.Token != "" {
		auth = "bearer token required"
	}
	logger.Printf("listening on http://%s%s (%s)", ln.Addr(), path, auth)
	if ready != nil {
		ready(ln.Addr().String())
	}
	return serveUntil(ctx, srv, ln, f.Shutdown, logger)
}

// serveUntil runs srv on ln until ctx ends, then lets requests in flight
// finish for up to grace.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration, logger *log.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Printf("shutting down: finishing requests in flight (up to %s)", grace)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Printf("stopped")
	return nil
}

// apiConfig is how the API handler behaves.
type apiConfig struct {
	Token         string
	Timeout       time.Duration
	MaxConcurrent int
	AccessLog     bool
	Logf          func(string, ...any)
}

// api is the HTTP API over an engine.
type api struct {
	e     *engine
	cfg   apiConfig
	sem   chan struct{}
	guard tokenGuard
	start time.Time
	count atomic.Int64
}

// maxBody bounds a request body; a query is a question and a few options.
const maxBody = 64 << 10

// route is one served path: its methods and handler. Every route is in
// the OpenAPI document, and the test checks the two agree.
type route struct {
	pattern string // http.ServeMux pattern, without method
	methods []string
	open    bool // served without a token (health checks)
	limited bool // counts against MaxConcurrent
	handle  func(*api, http.ResponseWriter, *http.Request) error
}

var routes = []route{
	{pattern: "/healthz", methods: []string{http.MethodGet, http.MethodHead}, open: true, handle: (*api).health},
	{pattern: "/v1/openapi.json", methods: []string{http.MethodGet}, handle: (*api).openapi},
	{pattern: "/v1/query", methods: []string{http.MethodPost}, limited: true, handle: (*api).query},
	{pattern: "/v1/documents", methods: []string{http.MethodGet}, limited: true, handle: (*api).documents},
	{pattern: "/v1/entities", methods: []string{http.MethodGet}, limited: true, handle: (*api).findEntities},
	{pattern: "/v1/entities/{id}", methods: []string{http.MethodGet}, limited: true, handle: (*api).entity},
	{pattern: "/v1/graph", methods: []string{http.MethodGet}, limited: true, handle: (*api).graph},
	{pattern: "/v1/chunks/{id}", methods: []string{http.MethodGet}, limited: true, handle: (*api).chunk},
	{pattern: "/v1/stats", methods: []string{http.MethodGet}, limited: true, handle: (*api).stats},
}

// newAPI returns the API's handler: every route behind recovery, access
// logging, the host and cross-origin checks, the token, the concurrency
// limit and the request timeout.
func newAPI(e *engine, cfg apiConfig) http.Handler {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 1
	}
	a := &api{e: e, cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrent), start: time.Now()}
	a.guard = newTokenGuard(cfg.Token)
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.Handle(rt.pattern, a.wrap(rt))
	}
	// The web page holds no data, so it loads without the token; what it
	// shows comes from the routes above, which ask for it.
	wh := web.Handler()
	page := a.wrap(route{pattern: "/", methods: []string{http.MethodGet, http.MethodHead}, open: true,
		handle: func(_ *api, w http.ResponseWriter, r *http.Request) error { wh.ServeHTTP(w, r); return nil }})
	mux.Handle("/{$}", page)
	mux.Handle("/assets/", page)
	mux.Handle("/", a.wrap(route{handle: func(a *api, w http.ResponseWriter, r *http.Request) error {
		return notFound("no route %s (the API is described at /v1/openapi.json)", r.URL.Path)
	}, methods: nil}))
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusForbidden, Code: codeForbiddenHost, Message: "cross-origin request refused"})
	}))
	return nosniff(a.recover(a.logRequests(a.checkHost(cop.Handler(mux)))))
}

// nosniff stops browsers from reading a response as another type than it
// says (a JSON error quoting a request as HTML, say).
func nosniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

// wrap applies a route's method check, token, limit and timeout.
func (a *api) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.methods != nil && !slices.Contains(rt.methods, r.Method) {
			w.Header().Set("Allow", strings.Join(rt.methods, ", "))
			writeError(w, &apiError{Status: http.StatusMethodNotAllowed, Code: codeMethod,
				Message: fmt.Sprintf("%s takes %s, not %s", rt.pattern, strings.Join(rt.methods, ", "), r.Method)})
			return
		}
		if !rt.open && !a.guard.allow(w, r) {
			return
		}
		// The body is read whole before a slot is taken: a client sending
		// it slowly then holds its own connection (until the server's read
		// timeout), never a slot a query is waiting for.
		if err := readBody(w, r); err != nil {
			writeError(w, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), a.cfg.Timeout)
		defer cancel()
		r = r.WithContext(ctx)
		if rt.limited {
			select {
			case a.sem <- struct{}{}:
				defer func() { <-a.sem }()
			case <-ctx.Done():
				writeError(w, &apiError{Status: http.StatusServiceUnavailable, Code: codeUnavailable, Message: "the server is busy; try again"})
				return
			}
		}
		if err := rt.handle(a, w, r); err != nil {
			if r.Context().Err() != nil && !errors.Is(r.Context().Err(), context.DeadlineExceeded) {
				return // the client went away
			}
			writeError(w, asAPIError(err))
		}
	})
}

// readBody reads r's body, at most maxBody bytes, into memory, and gives
// the request that copy to read.
func readBody(w http.ResponseWriter, r *http.Request) *apiError {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	var netErr net.Error
	switch {
	case err == nil:
		r.Body = io.NopCloser(bytes.NewReader(b))
		return nil
	case errors.As(err, &tooBig):
		return &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeBodyTooLarge, Message: fmt.Sprintf("request body over %d bytes", maxBody)}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &apiError{Status: http.StatusRequestTimeout, Code: codeTimeout, Message: "the request body did not arrive within the server's read time limit"}
	}
	return badRequest(codeInvalidJSON, "the request body ended early: %d bytes read", len(b))
}

// tokenGuard checks a request's bearer token against the sha256 of the
// server's, compared in constant time whatever its length; the token is
// never logged or echoed. With no token every request passes.
type tokenGuard struct {
	open bool
	sum  [32]byte
}

func newTokenGuard(token string) tokenGuard {
	return tokenGuard{open: token == "", sum: sha256.Sum256([]byte(token))}
}

// allow says whether r may pass, answering 401 when it may not.
func (g tokenGuard) allow(w http.ResponseWriter, r *http.Request) bool {
	if g.open || g.valid(r) {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="docgraph"`)
	writeError(w, &apiError{Status: http.StatusUnauthorized, Code: codeUnauthorized, Message: "missing or wrong bearer token"})
	return false
}

// valid says whether r carries the server's token. The scheme is
// case-insensitive (RFC 7235: "bearer" is "Bearer").
func (g tokenGuard) valid(r *http.Request) bool {
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
	return subtle.ConstantTimeCompare(sum[:], g.sum[:]) == 1
}

// checkHost refuses, when no token guards the server, requests naming a
// host other than this machine: a web page cannot then reach the API
// through DNS rebinding.
func (a *api) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Token == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			host = strings.Trim(host, "[]")
			if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
				writeError(w, &apiError{Status: http.StatusForbidden, Code: codeForbiddenHost, Message: "host " + strconv.Quote(r.Host) + " refused: without a token the server answers only for localhost"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter records the status for the access log and passes flushes on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs method, path (never the query string or headers),
// status and duration. The path is logged as the client sent it,
// percent-encoded (a space is %20, so the line splits into its fields),
// and what a client sends is escaped like a file name: a newline or an
// ESC in it cannot start a forged line or drive the operator's terminal.
func (a *api) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		t := time.Now()
		next.ServeHTTP(sw, r)
		a.count.Add(1)
		if a.cfg.AccessLog {
			a.cfg.Logf("%s %s %d %s", cli.Escape(r.Method), cli.Escape(r.URL.EscapedPath()), sw.status, time.Since(t).Round(10*time.Microsecond))
		}
	})
}

// recover turns a panic into a 500 and a log line; the server goes on.
func (a *api) recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				buf := make([]byte, 4096)
				buf = buf[:runtime.Stack(buf, false)]
				a.cfg.Logf("panic serving %s %s: %s\n%s", cli.Escape(r.Method), cli.Escape(r.URL.EscapedPath()), cli.Escape(fmt.Sprint(v)), buf)
				writeError(w, &apiError{Status: http.StatusInternalServerError, Code: codeInternal, Message: "internal error"})
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func writeHTTPJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeHTTPJSON(w, e.Status, e)
}

// healthJSON is what /healthz says: to anyone the status alone, with the
// token also the uptime and why the store is unreachable (its error names
// the store's location, which is not for anyone).
type healthJSON struct {
	Status        string `json:"status"`
	UptimeSeconds *int64 `json:"uptime_seconds,omitempty"`
	Error         string `json:"error,omitempty"`
}

func (a *api) health(w http.ResponseWriter, r *http.Request) error {
	h, status := healthJSON{Status: "ok"}, http.StatusOK
	var err error
	if gs, ok := a.e.st.(store.GraphScanner); ok {
		_, err = gs.GraphVersion(r.Context())
	}
	if err != nil {
		h.Status, status = "unavailable", http.StatusServiceUnavailable
		a.cfg.Logf("healthz: store unreachable: %s", cli.Escape(err.Error()))
	}
	if !a.guard.open && a.guard.valid(r) {
		up := int64(time.Since(a.start).Seconds())
		h.UptimeSeconds = &up
		if err != nil {
			h.Error = "store unreachable: " + err.Error()
		}
	}
	writeHTTPJSON(w, status, h)
	return nil
}

func (a *api) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, err := w.Write(openAPIDoc)
	return err
}

// decodeQuery reads a query request body: JSON, one object, known fields.
// The content type is not checked (curl -d sends a form type); browsers'
// cross-origin posts are refused by the cross-origin protection.
func decodeQuery(r *http.Request, w http.ResponseWriter) (*queryRequest, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	var q queryRequest
	err := dec.Decode(&q)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value in the body")
	}
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return &q, nil
	case errors.As(err, &tooBig):
		return nil, &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeBodyTooLarge, Message: fmt.Sprintf("request body over %d bytes", maxBody)}
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return nil, badRequest(codeUnknownField, "%s (the fields are described at /v1/openapi.json)", strings.TrimPrefix(err.Error(), "json: "))
	case errors.As(err, &typeErr):
		return nil, badRequest(codeInvalidJSON, "field %s: want %s, got a JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.Is(err, io.EOF):
		return nil, badRequest(codeInvalidJSON, "empty body: send a JSON object with a question")
	}
	return nil, badRequest(codeInvalidJSON, "malformed JSON: %v", err)
}

// jsonKind names what JSON a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

func (a *api) query(w http.ResponseWriter, r *http.Request) error {
	q, err := decodeQuery(r, w)
	if err != nil {
		return err
	}
	if err := q.validate(); err != nil {
		return err
	}
	if q.Stream {
		return a.stream(w, r, q)
	}
	reply, err := a.e.query(r.Context(), q, nil)
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, reply.JSON)
	return nil
}

// sse writes server-sent events; headers go out with the first event, so
// a failure before it is still an ordinary JSON error.
type sse struct {
	w       http.ResponseWriter
	started bool
}

func (s *sse) event(name string, v any) error {
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return err
	}
	http.NewResponseController(s.w).Flush()
	return nil
}

// tokenEvent is one piece of a streamed answer.
type tokenEvent struct {
	Text string `json:"text"`
}

// Write makes sse the answer's stream: each piece one token event.
func (s *sse) Write(p []byte) (int, error) {
	if err := s.event("token", tokenEvent{Text: string(p)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// stream answers as server-sent events: token events while the model
// writes (with an LLM), then sources (the numbered passages the answer
// cites), then result (what the JSON response would have been).
func (a *api) stream(w http.ResponseWriter, r *http.Request, q *queryRequest) error {
	s := &sse{w: w}
	reply, err := a.e.query(r.Context(), q, s)
	if err != nil {
		if !s.started {
			return err
		}
		_ = s.event("error", asAPIError(err))
		return nil
	}
	if reply.Sources != nil {
		if err := s.event("sources", map[string]any{"sources": reply.Sources}); err != nil {
			return nil // the client went away
		}
	}
	_ = s.event("result", reply.JSON)
	return nil
}

// intParam reads an optional integer query parameter.
func intParam(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest(codeInvalidParam, "%s %q is not an integer", name, v)
	}
	if n == 0 {
		return 0, badRequest(codeOutOfRange, "%s must not be 0", name)
	}
	return n, nil
}

func (a *api) documents(w http.ResponseWriter, r *http.Request) error {
	q := docQuery{Status: r.URL.Query().Get("status"), PathPrefix: r.URL.Query().Get("path_prefix")}
	var err error
	if v := r.URL.Query().Get("offset"); v != "" {
		if q.Offset, err = strconv.Atoi(v); err != nil {
			return badRequest(codeInvalidParam, "offset %q is not an integer from 0 to %d", v, math.MaxInt)
		}
	}
	if q.Limit, err = intParam(r, "limit"); err != nil {
		return err
	}
	page, err := a.e.documents(r.Context(), q)
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, page)
	return nil
}

func (a *api) findEntities(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit")
	if err != nil {
		return err
	}
	ents, err := a.e.findEntities(r.Context(), r.URL.Query().Get("name"), limit)
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, map[string]any{"entities": ents})
	return nil
}

func (a *api) entity(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit")
	if err != nil {
		return err
	}
	d, err := a.e.entityDetail(r.Context(), r.PathValue("id"), limit)
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, d)
	return nil
}

func (a *api) graph(w http.ResponseWriter, r *http.Request) error {
	hops, err := intParam(r, "hops")
	if err != nil {
		return err
	}
	limit, err := intParam(r, "limit")
	if err != nil {
		return err
	}
	id := r.URL.Query().Get("entity")
	if id == "" {
		return badRequest(codeMissingParam, "entity is required: /v1/graph?entity=ID")
	}
	g, err := a.e.neighbourhood(r.Context(), id, hops, limit)
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, g)
	return nil
}

func (a *api) chunk(w http.ResponseWriter, r *http.Request) error {
	c, err := a.e.chunk(r.Context(), r.PathValue("id"), "", 0)
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, c)
	return nil
}

func (a *api) stats(w http.ResponseWriter, r *http.Request) error {
	s, err := a.e.stats(r.Context())
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, struct {
		*statsJSON
		UptimeSeconds int64 `json:"uptime_seconds"`
		Requests      int64 `json:"requests"`
		InFlight      int   `json:"in_flight"`
	}{s, int64(time.Since(a.start).Seconds()), a.count.Load(), len(a.sem)})
	return nil
}
