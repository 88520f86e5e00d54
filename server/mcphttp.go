package server

import (
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPSessionLimits bound the sessions of MCP over HTTP. Each session keeps
// its state (about 13 KB) until it is closed, so without a bound a client
// that only initializes, in a loop, grows the server without end.
type MCPSessionLimits struct {
	Max  int           // live sessions at most
	Idle time.Duration // a session with no request for this long is closed
}

// DefaultMCPSessions: an assistant holds one session, so 256 is room for
// many clients at a few MB; 5 minutes idle, and a client whose session was
// closed gets a 404 and starts a new one, as the transport's spec asks.
var DefaultMCPSessions = MCPSessionLimits{Max: 256, Idle: 5 * time.Minute}

// mcpMaxBody bounds an MCP request body: tool calls carry a question or an
// id, far below the SDK's 4 MiB default.
const mcpMaxBody = 1 << 20

// NewMCPHTTPHandler serves srv's streamable HTTP transport at /mcp, behind
// the token (none: open), cross-origin protection and the session limits.
func NewMCPHTTPHandler(srv *mcp.Server, token string, lim MCPSessionLimits) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: lim.Idle, MaxRequestBodyBytes: mcpMaxBody})
	mux := http.NewServeMux()
	mux.Handle("/mcp", bearer(token, newMCPSessionLimiter(srv, lim).wrap(h)))
	return nosniff(http.NewCrossOriginProtection().Handler(mux))
}

// mcpSessionLimiter keeps the live sessions of a streamable handler at
// most Max: a request for a new session when all are taken closes the
// least recently used session with no request in flight, or, when every
// session is in use, is refused with a 503. The SDK closes idle sessions
// itself (SessionTimeout) but has no bound on their number.
type mcpSessionLimiter struct {
	srv     *mcp.Server
	max     int
	mu      sync.Mutex
	used    map[string]*sessionUse // sessions created through the limiter
	pending int                    // new-session requests in flight
}

type sessionUse struct {
	last     time.Time // end of the last request
	inFlight int
}

func newMCPSessionLimiter(srv *mcp.Server, lim MCPSessionLimits) *mcpSessionLimiter {
	return &mcpSessionLimiter{srv: srv, max: max(lim.Max, 1), used: map[string]*sessionUse{}}
}

// mcpSessionHeader is the streamable transport's session id header.
const mcpSessionHeader = "Mcp-Session-Id"

func (l *mcpSessionLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(mcpSessionHeader); id != "" {
			l.begin(id)
			defer l.end(id)
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r) // the SDK refuses it: no session, no new one
			return
		}
		victim, ok := l.reserve()
		if !ok {
			w.Header().Set("Retry-After", "10")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"too many MCP sessions: every one has a request in flight; try again later"}}` + "\n"))
			return
		}
		if victim != nil {
			victim.Close()
		}
		next.ServeHTTP(w, r)
		l.created(w.Header().Get(mcpSessionHeader))
	})
}

// reserve makes room for one more session: it counts the server's live
// sessions and the new ones being made, and when they reach the limit
// picks the least recently used idle session to close (victim). ok is
// false when no session can go.
func (l *mcpSessionLimiter) reserve() (victim *mcp.ServerSession, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	live := map[string]*mcp.ServerSession{}
	for ss := range l.srv.Sessions() {
		live[ss.ID()] = ss
	}
	for id := range l.used {
		if live[id] == nil {
			delete(l.used, id) // closed: idle, deleted by its client, or evicted
		}
	}
	if len(live)+l.pending >= l.max {
		var oldest string
		for id, u := range l.used {
			if u.inFlight == 0 && (oldest == "" || u.last.Before(l.used[oldest].last)) {
				oldest = id
			}
		}
		if oldest == "" {
			return nil, false
		}
		victim = live[oldest]
		delete(l.used, oldest)
	}
	l.pending++
	return victim, true
}

// created ends a new-session request; id is the session it made, if any.
func (l *mcpSessionLimiter) created(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending--
	if id != "" {
		l.used[id] = &sessionUse{last: time.Now()}
	}
}

// begin and end bracket a request in a session; ids the limiter did not
// see created (unknown or closed) are left to the SDK, which answers 404.
func (l *mcpSessionLimiter) begin(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.used[id]; u != nil {
		u.inFlight++
	}
}

func (l *mcpSessionLimiter) end(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.used[id]; u != nil {
		u.inFlight--
		u.last = time.Now()
	}
}

// busy counts the sessions with a request in flight.
func (l *mcpSessionLimiter) busy() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, u := range l.used {
		if u.inFlight > 0 {
			n++
		}
	}
	return n
}
