package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/docgraph/docgraph/server"
)

// TestMain lets the tests run this command as a child process (the test
// binary re-executed with DOCGRAPH_QUERY_MAIN=1), as an assistant starts it.
func TestMain(m *testing.M) {
	if os.Getenv("DOCGRAPH_QUERY_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// commandOf is `query ARGS...` run as a child process.
func commandOf(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "DOCGRAPH_QUERY_MAIN=1")
	return cmd
}

func connectMCP(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "docgraph-test", Version: "0"}, nil)
	s, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// inMemoryMCP serves e to a client over an in-memory transport.
func inMemoryMCP(t *testing.T, e *server.Engine) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.NewMCPServer(e, 30*time.Second, 0).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return connectMCP(t, ct)
}

// call calls a tool and decodes its structured content into T.
func call[T any](t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) (T, string) {
	t.Helper()
	var out T
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	text := contentText(res)
	if res.IsError {
		t.Fatalf("%s %v: tool error %s", tool, args, text)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", tool, b, err)
	}
	return out, text
}

func contentText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolError(t *testing.T, s *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err.Error() // rejected by the SDK's schema validation
	}
	if !res.IsError {
		t.Errorf("%s %v: want an error, got %s", tool, args, contentText(res))
	}
	return contentText(res)
}

func TestMCPTools(t *testing.T) {
	s := inMemoryMCP(t, testEngine(t, corpusStore(t)))
	ctx := context.Background()

	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		if len(tool.Description) < 80 || !bytes.Contains(schema, []byte(`"properties"`)) || tool.OutputSchema == nil {
			t.Errorf("tool %s: description %q, input schema %s, output schema %v", tool.Name, tool.Description, schema, tool.OutputSchema)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("tool %s is not marked read-only", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"get_chunk", "get_entity", "list_documents", "neighbours", "search"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	found, text := call[server.SearchOutput](t, s, "search", map[string]any{"question": "Who broke Enigma messages at Bletchley Park?", "top_k": 3})
	if len(found.Passages) != 3 || !strings.HasSuffix(found.Passages[0].DocPath, "alan-turing.txt") || len(found.Entities) == 0 || len(found.Relations) == 0 {
		t.Fatalf("search: %+v", found)
	}
	if !strings.Contains(text, "[1] ") || !strings.Contains(text, "alan-turing.txt") || !strings.Contains(text, "Entities:") {
		t.Errorf("search text:\n%s", text)
	}
	if hy, _ := call[server.SearchOutput](t, s, "search", map[string]any{"question": "Which languages did Ken Thompson create?", "mode": "hybrid"}); hy.Mode != "hybrid" || len(hy.Passages) == 0 {
		t.Errorf("hybrid search: %+v", hy)
	}

	ent, text := call[server.EntityDetail](t, s, "get_entity", map[string]any{"entity": "Alan Turing"})
	if ent.Name != "Alan Turing" || len(ent.Passages) == 0 || len(ent.Relations) == 0 || !strings.Contains(text, "Passages:") {
		t.Errorf("get_entity: %+v\n%s", ent, text)
	}
	g, _ := call[server.GraphJSON](t, s, "neighbours", map[string]any{"entity": ent.ID, "hops": 2, "limit": 100})
	if g.Center != ent.ID || len(g.Nodes) < 3 || len(g.Edges) == 0 {
		t.Errorf("neighbours: %+v", g)
	}
	c, _ := call[server.ChunkJSON](t, s, "get_chunk", map[string]any{"chunk_id": found.Passages[0].ChunkID})
	if c.ID != found.Passages[0].ChunkID || c.Text != found.Passages[0].Text {
		t.Errorf("get_chunk by id: %+v", c)
	}
	c2, _ := call[server.ChunkJSON](t, s, "get_chunk", map[string]any{"document": found.Passages[0].DocPath, "index": 0})
	if c2.ID != c.ID {
		t.Errorf("get_chunk by document and index: %+v", c2)
	}
	docs, text := call[server.DocPage](t, s, "list_documents", map[string]any{"limit": 3})
	if docs.Total != 10 || len(docs.Documents) != 3 || docs.NextOffset == nil || !strings.Contains(text, "More: offset 3") {
		t.Errorf("list_documents: %+v\n%s", docs, text)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{"question": ""}, "question"},
		{"search", map[string]any{"question": "Go", "top_k": 500}, "top_k"},
		{"search", map[string]any{"question": "Go", "mode": "deep"}, "mode"},
		{"search", map[string]any{}, "question"},
		{"get_entity", map[string]any{"entity": "No Such Entity Anywhere"}, "no entity"},
		{"neighbours", map[string]any{"entity": "Alan Turing", "hops": 3}, "hops"},
		{"get_chunk", map[string]any{}, "chunk id"},
		{"get_chunk", map[string]any{"document": found.Passages[0].DocPath, "index": 7}, "no chunk 7"},
		{"list_documents", map[string]any{"status": "gone"}, "status"},
	} {
		msg := toolError(t, s, c.tool, c.args)
		t.Logf("%s %v: %s", c.tool, c.args, msg)
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: error %q does not mention %q", c.tool, c.args, msg, c.want)
		}
	}
}

// TestMCPStdio runs `query mcp` as a child process, as an assistant does,
// and searches through it.
func TestMCPStdio(t *testing.T) {
	db := corpusStore(t)
	cmd := commandOf("mcp", "--store", db, "--config", "")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	s := connectMCP(t, &mcp.CommandTransport{Command: cmd})
	found, _ := call[server.SearchOutput](t, s, "search", map[string]any{"question": "Who designed the Go programming language?"})
	if len(found.Passages) == 0 || !strings.HasSuffix(found.Passages[0].DocPath, "go-language.md") {
		t.Errorf("search over stdio: %+v\nstderr: %s", found, stderr.String())
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if !strings.Contains(stderr.String(), "over stdio") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// bearerTransport adds a token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPStreamableHTTP serves MCP over HTTP with a token and calls it.
func TestMCPStreamableHTTP(t *testing.T) {
	db := corpusStore(t)
	const token = "mcp-test-token-0123456789"
	f := testFlags(t, db, "--token", token)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runMCP(ctx, &mcpOptions{serverFlags: *f, HTTP: "127.0.0.1:0"}, streams{Err: &syncWriter{w: &bytes.Buffer{}}}, func(a string) { addr <- a })
	}()
	endpoint := "http://" + <-addr + "/mcp"

	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d", resp.StatusCode)
	}

	s := connectMCP(t, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{token}}, MaxRetries: -1})
	found, _ := call[server.SearchOutput](t, s, "search", map[string]any{"question": "Who broke Enigma messages at Bletchley Park?", "top_k": 2})
	if len(found.Passages) != 2 || !strings.HasSuffix(found.Passages[0].DocPath, "alan-turing.txt") {
		t.Errorf("search over HTTP: %+v", found)
	}
	s.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mcp --http returned %v", err)
	}
}

// TestMCPSearchLeavesAnsweringToTheAgent: with --llm the search tool uses
// the model for keywords but asks it for no answer: the client is a model.
func TestMCPSearchLeavesAnsweringToTheAgent(t *testing.T) {
	db := corpusStore(t)
	llm := fakeLLM(t, "an answer nobody asked for [1]")
	s := inMemoryMCP(t, testEngine(t, db, "--llm", "openai:test-model"))
	found, text := call[server.SearchOutput](t, s, "search", map[string]any{"question": "Who broke Enigma messages at Bletchley Park?"})
	if len(found.Passages) == 0 || strings.Contains(text, "nobody asked") {
		t.Errorf("search: %+v\n%s", found, text)
	}
	reqs := llm.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was not asked for keywords")
	}
	for _, r := range reqs {
		if !strings.Contains(r.Last(), "high_level_keywords") {
			t.Errorf("search asked the model more than keywords: %.200s", r.Last())
		}
	}
}
