package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`

// mcpPost sends one JSON-RPC message to the streamable endpoint, in the
// session id names ("" for a new one), and returns the status, the
// session id the server gives, and the body.
func mcpPost(t *testing.T, url, id, msg string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

func liveSessions(srv *mcp.Server) int {
	n := 0
	for range srv.Sessions() {
		n++
	}
	return n
}

// TestMCPHTTPSessionsBounded: 5,000 initialize calls leave at most the
// session limit alive; the least recently used go first, and the newest
// still answer.
func TestMCPHTTPSessionsBounded(t *testing.T) {
	srv := NewMCPServer(testEngine(t), 30*time.Second, 0)
	const max = 50
	hs := httptest.NewServer(NewMCPHTTPHandler(srv, "", MCPSessionLimits{Max: max, Idle: time.Hour}))
	t.Cleanup(hs.Close)
	url := hs.URL + "/mcp"
	var ids []string
	for i := range 5000 {
		status, id, body := mcpPost(t, url, "", mcpInitialize)
		if status != 200 || id == "" {
			t.Fatalf("initialize %d: %d %q %.200s", i, status, id, body)
		}
		ids = append(ids, id)
		switch i {
		case 10:
			if status, _, body := mcpPost(t, url, ids[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); status != 200 {
				t.Fatalf("tools/list: %d %.200s", status, body)
			}
		case max + 5:
			// Six sessions went, the least recently used: 1 to 6, not 0,
			// which was used after 10 was made.
			for id, want := range map[int]int{0: 200, 1: 404, 6: 404, 7: 200} {
				if status, _, body := mcpPost(t, url, ids[id], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); status != want {
					t.Fatalf("after %d sessions, session %d: %d %.200s, want %d", i+1, id, status, body, want)
				}
			}
		}
	}
	if n := liveSessions(srv); n > max {
		t.Errorf("%d sessions alive after 5000 initialize calls, limit %d", n, max)
	}
	for _, c := range []struct {
		id     string
		status int
	}{{ids[1], 404}, {ids[len(ids)-max-1], 404}, {ids[len(ids)-1], 200}, {ids[len(ids)-max+5], 200}} {
		if status, _, body := mcpPost(t, url, c.id, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); status != c.status {
			t.Errorf("session %s: %d %.200s, want %d", c.id, status, body, c.status)
		}
	}
}

// TestMCPHTTPSessionsBusyRefused: when every session has a request in
// flight none is closed under its client: a new one is refused, clearly.
func TestMCPHTTPSessionsBusyRefused(t *testing.T) {
	srv := NewMCPServer(testEngine(t), 30*time.Second, 0)
	lim := newMCPSessionLimiter(srv, MCPSessionLimits{Max: 2, Idle: time.Hour})
	hs := httptest.NewServer(lim.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)))
	t.Cleanup(hs.Close)
	var ids []string
	for range 2 {
		_, id, _ := mcpPost(t, hs.URL, "", mcpInitialize)
		ids = append(ids, id)
	}
	// A standalone event stream per session: a request that stays open
	// until the test ends (before the server closes, which waits for it).
	ctx, cancel := context.WithCancel(context.Background())
	var streams sync.WaitGroup
	t.Cleanup(func() { cancel(); streams.Wait() })
	for _, id := range ids {
		req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		streams.Go(func() {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	for deadline := time.Now().Add(30 * time.Second); lim.busy() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions busy", lim.busy())
		}
	}
	status, _, body := mcpPost(t, hs.URL, "", mcpInitialize)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "sessions") {
		t.Errorf("a third session while two are busy: %d %s", status, body)
	}
	if n := liveSessions(srv); n != 2 {
		t.Errorf("%d sessions alive", n)
	}
}

// TestMCPHTTPSessionsExpire: an idle session is closed after the idle time.
func TestMCPHTTPSessionsExpire(t *testing.T) {
	srv := NewMCPServer(testEngine(t), 30*time.Second, 0)
	hs := httptest.NewServer(NewMCPHTTPHandler(srv, "", MCPSessionLimits{Max: 10, Idle: 200 * time.Millisecond}))
	t.Cleanup(hs.Close)
	_, id, _ := mcpPost(t, hs.URL+"/mcp", "", mcpInitialize)
	for deadline := time.Now().Add(30 * time.Second); liveSessions(srv) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions alive after the idle time", liveSessions(srv))
		}
	}
	if status, _, _ := mcpPost(t, hs.URL+"/mcp", id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); status != 404 {
		t.Errorf("an expired session: %d", status)
	}
	r, err := http.Get(hs.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("MCP over HTTP without nosniff: %v", r.Header)
	}
}
