package docgraph_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph"
)

// TestOpenKeepsTheStoresEmbedder: a store built with one embedder is
// opened again with it when no embedder is chosen, and queried.
func TestOpenKeepsTheStoresEmbedder(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + filepath.Join(t.TempDir(), "graph.db")
	g, err := docgraph.Open(ctx, url, docgraph.WithEmbedder("hash:64"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Ingest(ctx, "testdata/corpus/systems"); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}

	g, err = docgraph.Open(ctx, url)
	if err != nil {
		t.Fatalf("reopening without an embedder: %v", err)
	}
	defer g.Close()
	st, err := g.Store().Stats(ctx)
	if err != nil || st.Embedder.Dimension != 64 {
		t.Fatalf("stats %+v, %v: want the store's 64-dimension embedder", st, err)
	}
	res, err := g.Query(ctx, "Who designed the Go programming language?", docgraph.WithTopK(1))
	if err != nil || len(res.Passages) != 1 || filepath.Base(res.Passages[0].DocPath) != "go-language.md" {
		t.Fatalf("query: %v %+v", err, res)
	}
}

// TestHandlerServesMCP: the handler answers MCP's initialize at /mcp with
// a session, and the API's routes beside it, with the token when given.
func TestHandlerServesMCP(t *testing.T) {
	ctx := context.Background()
	g, err := docgraph.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Ingest(ctx, "testdata/corpus/systems"); err != nil {
		t.Fatal(err)
	}
	const token = "a-token-of-enough-length"
	srv := httptest.NewServer(g.Handler(docgraph.WithToken(token)))
	defer srv.Close()
	post := func(path, body string, auth bool) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}`
	if r := post("/mcp", initialize, true); r.StatusCode != 200 || r.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("/mcp initialize: %s, session %q", r.Status, r.Header.Get("Mcp-Session-Id"))
	}
	if r := post("/mcp", initialize, false); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("/mcp without the token: %s", r.Status)
	}
	if r := post("/v1/query", `{"question": "Go"}`, true); r.StatusCode != 200 {
		t.Errorf("/v1/query: %s", r.Status)
	}
	if r := post("/v1/query", `{"question": "Go"}`, false); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("/v1/query without the token: %s", r.Status)
	}
}

// TestStatusDocumentExportDelete: the store's report, one document, the
// export and a delete, through the Graph as the ingest subcommands do.
func TestStatusDocumentExportDelete(t *testing.T) {
	ctx := context.Background()
	g, err := docgraph.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "graph.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sum, err := g.Ingest(ctx, "testdata/corpus/systems")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := g.Status(ctx)
	if err != nil || rep.Documents != sum.Added || rep.Documents == 0 || rep.ByStatus["done"] != rep.Documents {
		t.Fatalf("status %+v, %v: want the %d documents ingested, all done", rep, err, sum.Added)
	}
	path, err := filepath.Abs("testdata/corpus/systems/go-language.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := g.Document(ctx, path)
	if err != nil || doc.Path != path || len(doc.Chunks) == 0 || !strings.Contains(doc.Text, "Go") {
		t.Fatalf("document %s: %+v, %v", path, doc, err)
	}
	var out strings.Builder
	if err := g.Export(ctx, &out, "jsonl"); err != nil || !strings.Contains(out.String(), `"kind":"entity"`) {
		t.Fatalf("export: %v, %.200q", err, out.String())
	}
	if err := g.Export(ctx, io.Discard, "csv"); err == nil {
		t.Error("export as csv: no error")
	}
	deleted, missing, err := g.Delete(ctx, doc.ID, filepath.Join(t.TempDir(), "nothing.md"))
	if err != nil || len(deleted) != 1 || deleted[0].DocID != doc.ID || len(missing) != 1 {
		t.Fatalf("delete: %+v, missing %q, %v", deleted, missing, err)
	}
	if rep, err := g.Status(ctx); err != nil || rep.Documents != sum.Added-1 {
		t.Fatalf("status after delete: %+v, %v", rep, err)
	}
}
