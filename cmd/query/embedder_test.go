package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
)

// TestQueryWithProviderEmbedder ingests and queries with an OpenAI-compatible
// embedder: the query command must build the same embedder as ingest, with
// the client's retries and its cache beside the store it reads.
func TestQueryWithProviderEmbedder(t *testing.T) {
	var failNext atomic.Bool
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if failNext.CompareAndSwap(true, false) {
			return llmtest.Reply{Status: http.StatusServiceUnavailable, Error: "busy"}
		}
		return llmtest.Reply{Content: "unused"}
	})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	root := repoRoot(t)
	dir := t.TempDir()
	t.Chdir(dir)
	db := "sqlite://" + filepath.Join(dir, "graphs", "g.db")
	s := pipeline.Settings{Store: db, Embedder: "openai:text-embedding-3-small"}
	ctx := context.Background()
	m, err := pipeline.NewModels(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pipeline.OpenStore(ctx, s, m.Embedder, m.Merger())
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(s, m, st)
	if err != nil {
		t.Fatal(err)
	}
	corpus, _ := filepath.Abs(filepath.Join(root, "testdata", "corpus"))
	if sum, err := p.Ingest(ctx, []string{corpus}, pipeline.Options{}); err != nil || sum.Failed != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
	st.Close()
	m.Close()

	failNext.Store(true) // the question's embedding fails once and is retried
	out, errs, err := run(t, "--store", db, "--config", "", "--mode", "naive", "--embedder", "openai:text-embedding-3-small", "Who designed Colossus?")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	if !strings.Contains(out, "[1]") {
		t.Fatalf("no passages:\n%s", out)
	}
	if failNext.Load() {
		t.Error("the query made no embedding request")
	}
	if _, err := os.Stat(filepath.Join(dir, "graphs", "llm-cache.db")); err != nil {
		t.Errorf("no response cache beside the store: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".docgraph")); err == nil {
		t.Error("query wrote into the default store folder, not beside --store")
	}
}

func repoRoot(t *testing.T) string {
	abs, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
