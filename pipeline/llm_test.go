package pipeline_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// fakeModel answers extraction prompts with records naming the first
// capitalised word of the chunk, the judge with "NO", and fails every request
// about a chunk containing "POISON" with a 500.
func fakeModel(calls *atomic.Int64) llmtest.Responder {
	return func(r llmtest.Request) llmtest.Reply {
		calls.Add(1)
		all := ""
		for _, m := range r.Messages {
			all += m.Content + "\n"
		}
		if strings.Contains(all, "POISON") {
			return llmtest.Reply{Status: 500, Error: "model crashed"}
		}
		last := strings.ToLower(r.Last())
		if strings.Contains(last, "yes or no") || strings.Contains(last, "answer yes") {
			return llmtest.Reply{Content: "NO"}
		}
		text := all[strings.LastIndex(all, "Text:"):]
		var names []string
		for _, w := range strings.Fields(text) {
			w = strings.Trim(w, ".,:;")
			if len(w) > 3 && w[0] >= 'A' && w[0] <= 'Z' && w != "Text" && w != "Output" {
				names = append(names, w)
			}
		}
		if len(names) < 2 {
			return llmtest.Reply{Content: "Sure! <|COMPLETE|>"}
		}
		out := "Here are the records:\n"
		out += `("entity"<|>` + names[0] + `<|>person<|>` + names[0] + ` is named first.)##` + "\n"
		out += `("entity"<|>` + names[1] + `<|>concept<|>` + names[1] + ` is named second.)##` + "\n"
		out += `("relationship"<|>` + names[0] + `<|>` + names[1] + `<|>appear together<|>co-occurrence<|>5)##` + "\n"
		out += `("entity"<|>broken record)##` + "\n<|COMPLETE|>"
		return llmtest.Reply{Content: out, PromptTokens: 100, CompletionTokens: 40}
	}
}

func llmPipeline(t *testing.T, dir string, srv *llmtest.Server) (*pipeline.Pipeline, *pipeline.Models, store.Store) {
	return llmPipelineWithCache(t, dir, srv, "")
}

func TestLLMIngestCachesAndIsolatesFailures(t *testing.T) {
	var calls atomic.Int64
	srv := llmtest.NewServer(fakeModel(&calls))
	defer srv.Close()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	write(t, filepath.Join(docs, "ada.md"), adaText)
	write(t, filepath.Join(docs, "babbage.md"), babbageText)
	write(t, filepath.Join(docs, "poison.txt"), "Alan Turing and the POISON pill.")
	ctx := context.Background()

	p, m, st := llmPipeline(t, dir, srv)
	sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 2 || sum.Failed != 1 || !strings.Contains(sum.Failures[0].Path, "poison.txt") {
		t.Fatalf("one failing chunk must fail only its document: %+v", sum)
	}
	if strings.Contains(sum.Failures[0].Error, "sk-test-secret") {
		t.Fatal("API key leaked into an error")
	}
	stats := m.Stats()
	if stats.Calls == 0 || stats.RejectedRecords == 0 || stats.PromptTokens == 0 {
		t.Fatalf("counters not reported: %+v", stats)
	}
	if ents, _ := st.Entities(ctx, []string{graphbuild.EntityID("Lovelace")}); len(ents) != 1 || ents[0].Type != "person" {
		t.Fatalf("LLM entity not stored: %+v", ents)
	}
	d, err := st.DocumentByPath(ctx, filepath.Join(docs, "poison.txt"))
	if err != nil || d.Status != store.StatusFailed || !strings.Contains(d.Error, "500") && !strings.Contains(d.Error, "crashed") {
		t.Fatalf("failed document should be recorded with its reason: %+v %v", d, err)
	}

	// A fresh store over the same cache: extraction is answered from the cache.
	before := calls.Load()
	dir2 := t.TempDir()
	p2, m2, _ := llmPipelineWithCache(t, dir2, srv, filepath.Join(dir, "llm-cache.db"))
	sum2, err := p2.Ingest(ctx, []string{filepath.Join(docs, "ada.md"), filepath.Join(docs, "babbage.md")}, pipeline.Options{})
	if err != nil || sum2.Added != 2 {
		t.Fatalf("%+v %v", sum2, err)
	}
	if got := calls.Load() - before; got != 0 {
		t.Fatalf("re-ingest with a warm cache made %d LLM calls, want 0", got)
	}
	if s := m2.Stats(); s.CacheHits == 0 || s.Calls != 0 {
		t.Fatalf("cache counters: %+v", s)
	}

	// Fix the failing file: a re-run only processes it.
	write(t, filepath.Join(docs, "poison.txt"), "Alan Turing and the Bombe machine.")
	before = calls.Load()
	sum3, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum3.Added != 1 || sum3.Unchanged != 2 || sum3.Failed != 0 {
		t.Fatalf("re-run should retry only what failed: %+v", sum3)
	}
	if calls.Load() == before {
		t.Fatal("the fixed document was not extracted")
	}
}

func llmPipelineWithCache(t *testing.T, dir string, srv *llmtest.Server, cache string) (*pipeline.Pipeline, *pipeline.Models, store.Store) {
	t.Helper()
	return llmPipelineWith(t, dir, srv, func(s *pipeline.Settings) { s.Cache = cache })
}

// llmPipelineWith is the test pipeline against srv, with edit's changes to
// its settings.
func llmPipelineWith(t *testing.T, dir string, srv *llmtest.Server, edit func(*pipeline.Settings)) (*pipeline.Pipeline, *pipeline.Models, store.Store) {
	t.Helper()
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	s := pipeline.Settings{Store: "sqlite://" + filepath.Join(dir, "g.db"), Embedder: "hash:64", Concurrency: 2}
	s.LLM, s.Gleaning, s.Retries = "openai:test-model", 1, 1
	s.Timeout, s.LLMSettings.Concurrency = 5*time.Second, 4
	edit(&s)
	ctx := context.Background()
	m, err := pipeline.NewModels(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	st, err := pipeline.OpenStore(ctx, s, m.Embedder, m.Merger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := pipeline.New(s, m, st)
	if err != nil {
		t.Fatal(err)
	}
	return p, m, st
}
