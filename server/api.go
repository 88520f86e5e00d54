package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	"github.com/docgraph/docgraph/internal/termtext"
	"github.com/docgraph/docgraph/server/web"
	"github.com/docgraph/docgraph/store"
)

//go:embed openapi.json
var openAPIDoc []byte

// HandlerConfig is how the API handler behaves.
type HandlerConfig struct {
	// Token is the bearer token every route but /healthz asks for; without
	// one, only requests addressed to localhost are answered.
	Token string
	// Timeout bounds each request, answer included.
	Timeout time.Duration
	// MaxConcurrent is how many requests are worked on at once (at least 1).
	MaxConcurrent int
	// AccessLog logs a line per request through Logf.
	AccessLog bool
	// Logf hears the access log and the handler's troubles (nil: silent).
	Logf func(string, ...any)
}

// api is the HTTP API over an engine.
type api struct {
	e     *Engine
	cfg   HandlerConfig
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
	{pattern: "/v1/documents/{id}", methods: []string{http.MethodGet}, limited: true, handle: (*api).documentText},
	{pattern: "/v1/subgraph", methods: []string{http.MethodGet}, limited: true, handle: (*api).subgraph},
	{pattern: "/v1/stats", methods: []string{http.MethodGet}, limited: true, handle: (*api).stats},
}

// Operations lists the served routes as "METHOD /path" (the OpenAPI
// document's operations), sorted.
func Operations() []string {
	var ops []string
	for _, rt := range routes {
		for _, m := range rt.methods {
			ops = append(ops, m+" "+rt.pattern)
		}
	}
	slices.Sort(ops)
	return ops
}

// NewHandler returns the API's handler: every route behind recovery, access
// logging, the host and cross-origin checks, the token, the concurrency
// limit and the request timeout.
func NewHandler(e *Engine, cfg HandlerConfig) http.Handler {
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
		writeError(w, &APIError{Status: http.StatusForbidden, Code: CodeForbiddenHost, Message: "cross-origin request refused"})
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
			writeError(w, &APIError{Status: http.StatusMethodNotAllowed, Code: CodeMethod,
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
				writeError(w, &APIError{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: "the server is busy; try again"})
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
func readBody(w http.ResponseWriter, r *http.Request) *APIError {
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
		return &APIError{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge, Message: fmt.Sprintf("request body over %d bytes", maxBody)}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &APIError{Status: http.StatusRequestTimeout, Code: CodeTimeout, Message: "the request body did not arrive within the server's read time limit"}
	}
	return badRequest(CodeInvalidJSON, "the request body ended early: %d bytes read", len(b))
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
	writeError(w, &APIError{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "missing or wrong bearer token"})
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
				writeError(w, &APIError{Status: http.StatusForbidden, Code: CodeForbiddenHost, Message: "host " + strconv.Quote(r.Host) + " refused: without a token the server answers only for localhost"})
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
			a.cfg.Logf("%s %s %d %s", termtext.Escape(r.Method), termtext.Escape(r.URL.EscapedPath()), sw.status, time.Since(t).Round(10*time.Microsecond))
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
				a.cfg.Logf("panic serving %s %s: %s\n%s", termtext.Escape(r.Method), termtext.Escape(r.URL.EscapedPath()), termtext.Escape(fmt.Sprint(v)), buf)
				writeError(w, &APIError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error"})
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

func writeError(w http.ResponseWriter, e *APIError) {
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
		a.cfg.Logf("healthz: store unreachable: %s", termtext.Escape(err.Error()))
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
func decodeQuery(r *http.Request, w http.ResponseWriter) (*Request, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	var q Request
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
		return nil, &APIError{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge, Message: fmt.Sprintf("request body over %d bytes", maxBody)}
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return nil, badRequest(CodeUnknownField, "%s (the fields are described at /v1/openapi.json)", strings.TrimPrefix(err.Error(), "json: "))
	case errors.As(err, &typeErr):
		return nil, badRequest(CodeInvalidJSON, "field %s: want %s, got a JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.Is(err, io.EOF):
		return nil, badRequest(CodeInvalidJSON, "empty body: send a JSON object with a question")
	}
	return nil, badRequest(CodeInvalidJSON, "malformed JSON: %v", err)
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
	reply, err := a.e.Query(r.Context(), q, nil)
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

// TokenEvent is one piece of a streamed answer.
type TokenEvent struct {
	Text string `json:"text"`
}

// Write makes sse the answer's stream: each piece one token event.
func (s *sse) Write(p []byte) (int, error) {
	if err := s.event("token", TokenEvent{Text: string(p)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// stream answers as server-sent events: token events while the model
// writes (with an LLM), then sources (the numbered passages the answer
// cites), then result (what the JSON response would have been).
func (a *api) stream(w http.ResponseWriter, r *http.Request, q *Request) error {
	s := &sse{w: w}
	reply, err := a.e.Query(r.Context(), q, s)
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
		return 0, badRequest(CodeInvalidParam, "%s %q is not an integer", name, v)
	}
	if n == 0 {
		return 0, badRequest(CodeOutOfRange, "%s must not be 0", name)
	}
	return n, nil
}

func (a *api) documents(w http.ResponseWriter, r *http.Request) error {
	q := docQuery{Status: r.URL.Query().Get("status"), PathPrefix: r.URL.Query().Get("path_prefix")}
	var err error
	if v := r.URL.Query().Get("offset"); v != "" {
		if q.Offset, err = strconv.Atoi(v); err != nil {
			return badRequest(CodeInvalidParam, "offset %q is not an integer from 0 to %d", v, math.MaxInt)
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
		return badRequest(CodeMissingParam, "entity is required: /v1/graph?entity=ID")
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
		*StatsJSON
		UptimeSeconds int64 `json:"uptime_seconds"`
		Requests      int64 `json:"requests"`
		InFlight      int   `json:"in_flight"`
	}{s, int64(time.Since(a.start).Seconds()), a.count.Load(), len(a.sem)})
	return nil
}
