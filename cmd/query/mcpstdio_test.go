package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docgraph/docgraph/llm/llmtest"
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

// heldModel points the openai provider at a model server that holds
// every answer (keywords for a search) until letGo; arrived hears each
// request as it comes.
func heldModel(t *testing.T) (arrived <-chan struct{}, letGo func()) {
	t.Helper()
	in, release := make(chan struct{}, 1024), make(chan struct{})
	model := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		in <- struct{}{}
		<-release
		return llmtest.Reply{Content: `{"high_level_keywords": ["programming languages"], "low_level_keywords": ["Go"]}`}
	})
	t.Cleanup(model.Close)
	letGo = sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo) // before model.Close, which waits for its handlers
	t.Setenv("OPENAI_BASE_URL", model.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
	return in, letGo
}

// TestMCPStdioBoundsRequestsInFlight: `query mcp` over stdio works on at
// most --max-concurrent requests at once (serve's flag, with serve's
// default); the calls over that are answered at once with a JSON-RPC
// error instead of piling up. The model holds every answer, so the
// admitted calls stay in flight however fast or slow the machine is, and
// every refusal arrives while they do.
func TestMCPStdioBoundsRequestsInFlight(t *testing.T) {
	db := corpusStore(t)
	serveDefault, err := newServeCmd(streams{}).Flags().GetInt("max-concurrent")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		limit int
	}{
		{"serve's default", nil, serveDefault},
		{"--max-concurrent 2", []string{"--max-concurrent", "2"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const extra = 3
			arrived, letGo := heldModel(t)

			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			args := append([]string{"mcp", "--store", db, "--config", "", "--llm", "openai:test-model",
				"--llm-concurrency", "1024", "--llm-cache", "off"}, tc.args...)
			done := make(chan error, 1)
			var stderr bytes.Buffer
			go func() {
				err := execute(context.Background(), streams{In: inR, Out: outW, Err: &syncWriter{w: &stderr}}, args)
				// The command gone, writes to it fail and reads of it end
				// rather than hang.
				inR.Close()
				outW.CloseWithError(io.EOF)
				done <- err
			}()
			t.Cleanup(func() {
				letGo()
				inW.Close()
				outR.Close()
				select {
				case err := <-done:
					if err != nil {
						t.Errorf("query mcp: %v\n%s", err, stderr.String())
					}
				case <-time.After(time.Minute):
					t.Error("query mcp did not end when stdin closed")
				}
			})
			replies := make(chan stdioReply, 64)
			go func() {
				defer close(replies)
				sc := bufio.NewScanner(outR)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					r := stdioReply{raw: sc.Text()}
					if json.Unmarshal(sc.Bytes(), &r) == nil {
						replies <- r
					}
				}
			}()
			send := func(line string) error {
				_, err := io.WriteString(inW, line+"\n")
				return err
			}
			next := func(what string) stdioReply {
				t.Helper()
				select {
				case r, ok := <-replies:
					if !ok {
						t.Fatalf("%s: query mcp ended", what)
					}
					return r
				case <-time.After(2 * time.Minute):
					t.Fatalf("%s: no reply in 2 minutes", what)
				}
				return stdioReply{}
			}

			if err := send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`); err != nil {
				t.Fatalf("query mcp is not reading: %v", err)
			}
			if r := next("initialize"); r.Error != nil {
				t.Fatalf("initialize: %s", r.raw)
			}
			if err := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
				t.Fatalf("query mcp is not reading: %v", err)
			}
			total := tc.limit + extra
			call := func(id int) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"question":"Who designed the Go programming language? (asked %d)","top_k":2}}}`, id, id)
			}
			go func() {
				for id := 1; id <= total; id++ {
					if send(call(id)) != nil {
						return // the command ended; the test reports it
					}
				}
			}()

			// Until the last refusal, nothing may be answered but refusals,
			// and the model may never hold more than the limit.
			refused, atModel := map[string]bool{}, 0
			timeout := time.After(2 * time.Minute)
			for len(refused) < extra || atModel < tc.limit {
				select {
				case <-arrived:
					if atModel++; atModel > tc.limit {
						t.Fatalf("%d tool calls in flight at the model, over the limit of %d: every request was taken on (refused so far: %d)",
							atModel, tc.limit, len(refused))
					}
				case r, ok := <-replies:
					if !ok {
						t.Fatal("query mcp ended")
					}
					if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "--max-concurrent") {
						t.Fatalf("while %d calls are held, a reply other than a busy error: %s", atModel, r.raw)
					}
					refused[string(r.ID)] = true
				case <-timeout:
					t.Fatalf("after 2 minutes: %d of %d calls refused, %d at the model (limit %d)", len(refused), extra, atModel, tc.limit)
				}
			}
			for id := tc.limit + 1; id <= total; id++ {
				if !refused[strconv.Itoa(id)] {
					t.Errorf("refused %v, want the calls over the limit, %d to %d", refused, tc.limit+1, total)
					break
				}
			}
			// The id of a call in flight is not taken twice.
			if err := send(call(1)); err != nil {
				t.Fatalf("query mcp is not reading: %v", err)
			}
			if r := next("a second call with id 1"); r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "1" {
				t.Errorf("a second call with the id of one in flight: %s", r.raw)
			}

			// Released, the held calls are answered, and a slot is free again.
			letGo()
			for range tc.limit {
				if r := next("a held call"); r.Error != nil || refused[string(r.ID)] || !strings.Contains(r.raw, "go-language.md") {
					t.Errorf("held call: %.300s", r.raw)
				}
			}
			if err := send(call(total + 1)); err != nil {
				t.Fatalf("query mcp is not reading: %v", err)
			}
			if r := next("a call after the others ended"); r.Error != nil || string(r.ID) != strconv.Itoa(total+1) {
				t.Errorf("call after the others ended: %.300s", r.raw)
			}
		})
	}
}

// TestMCPHTTPBoundsToolCalls: over HTTP too, --max-concurrent tool calls
// run at once and one more is refused at once.
func TestMCPHTTPBoundsToolCalls(t *testing.T) {
	db := corpusStore(t)
	arrived, letGo := heldModel(t)
	const limit, total = 2, 5
	f := testFlags(t, db, "--llm", "openai:test-model", "--llm-concurrency", "1024", "--llm-cache", "off")
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runMCP(ctx, &mcpOptions{serverFlags: *f, HTTP: "127.0.0.1:0", MaxConcurrent: limit},
			streams{Err: &syncWriter{w: &bytes.Buffer{}}}, func(a string) { addr <- a })
	}()
	t.Cleanup(func() {
		letGo()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("mcp --http returned %v", err)
		}
	})
	s := connectMCP(t, &mcp.StreamableClientTransport{Endpoint: "http://" + <-addr + "/mcp", MaxRetries: -1})

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	results := make(chan result, total)
	callCtx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	defer stop()
	for i := range total {
		go func() {
			res, err := s.CallTool(callCtx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{
				"question": fmt.Sprintf("Who designed the Go programming language? (asked %d)", i), "top_k": 2}})
			results <- result{res, err}
		}()
	}
	refused, atModel := 0, 0
	for refused < total-limit || atModel < limit {
		select {
		case <-arrived:
			if atModel++; atModel > limit {
				t.Fatalf("%d tool calls in flight at the model, over the limit of %d", atModel, limit)
			}
		case r := <-results:
			if r.err == nil || !strings.Contains(r.err.Error(), "--max-concurrent") {
				t.Fatalf("while %d calls are held, a result other than a busy error: %+v %v", atModel, r.res, r.err)
			}
			refused++
		case <-callCtx.Done():
			t.Fatalf("after 2 minutes: %d of %d calls refused, %d at the model (limit %d)", refused, total-limit, atModel, limit)
		}
	}
	letGo()
	for range limit {
		if r := <-results; r.err != nil || r.res.IsError {
			t.Errorf("held call: %+v %v", r.res, r.err)
		}
	}
}
