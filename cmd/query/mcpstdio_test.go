package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/server"
)

// stdioPeer drives runMCP over pipes the way an assistant drives
// `query mcp`: one JSON-RPC message a line each way.
type stdioPeer struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startStdioMCP(t *testing.T, db string) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	f := testFlags(t, db)
	p := &stdioPeer{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	go func() {
		err := runMCP(context.Background(), &mcpOptions{serverFlags: *f}, streams{In: inR, Out: outW, Err: &syncWriter{w: &bytes.Buffer{}}}, nil)
		// The server gone, a waiting reader hears EOF rather than hanging.
		outW.CloseWithError(io.EOF)
		p.done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-p.done:
		case <-time.After(time.Minute):
			t.Error("query mcp did not end when stdin closed")
		}
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("writing %.80q: %v (the server is gone)", line, err)
	}
}

// stdioReply is a JSON-RPC response as it came over the wire.
type stdioReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

func (p *stdioPeer) reply() stdioReply {
	p.t.Helper()
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.t.Fatalf("no reply (%v): the server ended", err)
	}
	r := stdioReply{raw: strings.TrimSpace(line)}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		p.t.Fatalf("reply %q: %v", line, err)
	}
	return r
}

// TestMCPStdioMalformedLines: every malformed line gets a JSON-RPC error
// reply and the session goes on (go-sdk v1.8.0 ended the process on the
// first one, with no reply).
func TestMCPStdioMalformedLines(t *testing.T) {
	p := startStdioMCP(t, corpusStore(t))
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if r := p.reply(); string(r.ID) != "1" || r.Error != nil || len(r.Result) == 0 {
		t.Fatalf("initialize: %s", r.raw)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, c := range []struct {
		name, line string
		code       int
		id         string
	}{
		{"not JSON", `hello`, -32700, "null"},
		{"empty object", `{}`, -32600, "null"},
		{"number", `42`, -32600, "null"},
		{"string", `"ping"`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"version 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
		{"no version", `{"id":"x","method":"ping"}`, -32600, `"x"`},
		{"method not a string", `{"jsonrpc":"2.0","id":8,"method":5}`, -32600, "8"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"no method, no id", `{"jsonrpc":"2.0"}`, -32600, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":9,"method":"ping"`, -32700, "null"},
		{"trailing data", `{"jsonrpc":"2.0","id":10,"method":"ping"} {}`, -32700, "null"},
		{"nesting 10001 deep", deep, -32700, "null"},
		{"nesting in params", `{"jsonrpc":"2.0","id":11,"method":"ping","params":{"a":` + deep + `}}`, -32700, "null"},
		{"over the line limit", `{"jsonrpc":"2.0","id":12,"method":"ping","params":{"a":"` + strings.Repeat("x", server.MaxMCPLine) + `"}}`, -32700, "null"},
		{"NUL", "\x00", -32700, "null"},
		{"jsonrpc twice", `{"jsonrpc":"2.0","jsonrpc":"1.0","id":13,"method":"ping"}`, -32600, "13"},
		{"no-break space before", "\u00a0" + `{"jsonrpc":"2.0","id":14,"method":"ping"}`, -32700, "null"},
	} {
		p.send(c.line)
		r := p.reply()
		t.Logf("%s: %.60q -> %s", c.name, c.line, r.raw)
		if r.JSONRPC != "2.0" || r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id || r.Result != nil {
			t.Errorf("%s: reply %s, want error %d with id %s", c.name, r.raw, c.code, c.id)
		}
	}

	// Blank lines are no messages, and a response to nothing the server
	// asked is dropped: nothing comes back for them. Brackets in strings
	// are no nesting.
	p.send("")
	p.send(" \r")
	p.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
	p.send(`{"jsonrpc":"2.0","id":20,"method":"ping","params":{"_meta":{"note":"` + strings.Repeat(`[{\"`, 100) + `"}}}`)
	if r := p.reply(); string(r.ID) != "20" || r.Error != nil {
		t.Errorf("ping after the malformed lines: %s", r.raw)
	}
	p.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"search","arguments":{"question":"Who designed the Go programming language?","top_k":2}}}`)
	r := p.reply()
	if string(r.ID) != "21" || r.Error != nil || !strings.Contains(string(r.Result), "go-language.md") {
		t.Errorf("search after the malformed lines: %.300s", r.raw)
	}
}
