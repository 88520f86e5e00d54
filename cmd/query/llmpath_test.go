package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
)

// TestQueryDeadline: a model that never answers stops the query at
// --deadline, whatever the per-call timeout and retries, with a message
// naming the step that ran out: the keywords or the answer.
func TestQueryDeadline(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	hung := llmtest.Reply{Delay: time.Hour}
	tests := []struct {
		name     string
		keywords bool // the keywords are answered, only the answer hangs
		want     string
	}{
		{name: "nothing answers", want: "query: deadline of 2s reached while waiting for the keywords from openai:test-model (after 1 attempt; raise --deadline"},
		{name: "the answer hangs", keywords: true, want: "query: deadline of 2s reached while waiting for the answer from openai:test-model (after 1 attempt; raise --deadline"},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			name := tt.name
			if asJSON {
				name += "/json"
			}
			t.Run(name, func(t *testing.T) {
				if tt.keywords {
					answerServer(t, hung)
				} else {
					srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return hung })
					t.Cleanup(srv.Close)
					t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
					t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
				}
				// The defaults a user has: 2-minute calls, 6 retries.
				args := []string{"--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--deadline", "2s"}
				if asJSON {
					args = append(args, "--json")
				}
				start := time.Now()
				out, errs, err := run(t, append(args, "Who broke Enigma messages at Bletchley Park?")...)
				took := time.Since(start)
				if code := cli.ExitCode(err); code != 1 {
					t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
				}
				if !strings.Contains(errs, tt.want) {
					t.Errorf("stderr lacks %q:\n%s", tt.want, errs)
				}
				// Generous: the bound is the deadline, not the retries' minutes.
				if took > 10*time.Second {
					t.Errorf("took %s with --deadline 2s", took)
				}
			})
		}
	}
}

// TestQueryEmbedderDown: an embedder that answers 500 at query time costs
// the vector paths, not the query: one warning names it, full-text and
// graph search still find passages, the answer comes back (exit 0), and
// the question's embedding is not retried six times.
func TestQueryEmbedderDown(t *testing.T) {
	const embedder = "openai:text-embedding-3-small"
	var embedDown atomic.Bool
	var embedCalls atomic.Int64
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		switch {
		case r.IsEmbedding() && embedDown.Load():
			embedCalls.Add(1)
			return llmtest.Reply{Status: http.StatusInternalServerError, Error: "embedding backend down"}
		case strings.Contains(r.Last(), "high_level_keywords"):
			return llmtest.Reply{Content: `{"high_level_keywords": ["code breaking"], "low_level_keywords": ["Enigma"]}`}
		}
		return llmtest.Reply{Content: "Alan Turing led the work on Enigma at Bletchley Park [1]."}
	})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestWith(t, db, embedder)
	embedDown.Store(true)

	for _, mode := range []string{"mix", "naive", "hybrid"} {
		for _, asJSON := range []bool{false, true} {
			name := mode
			if asJSON {
				name += "/json"
			}
			t.Run(name, func(t *testing.T) {
				args := []string{"--store", db, "--config", "", "--embedder", embedder, "--llm", "openai:test-model", "--llm-cache", "off", "--mode", mode}
				if asJSON {
					args = append(args, "--json")
				}
				before := embedCalls.Load()
				out, errs, err := run(t, append(args, "Who broke Enigma messages at Bletchley Park?")...)
				if err != nil {
					t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
				}
				const warn = "warning: embedder " + embedder + " failed, so vector search is skipped and full-text and graph search answer alone"
				if n := strings.Count(errs, warn); n != 1 {
					t.Errorf("%d warnings naming the embedder, want 1:\n%s", n, errs)
				}
				if !strings.Contains(out, "Alan Turing") {
					t.Errorf("no answer:\n%s", out)
				}
				if asJSON {
					var doc struct {
						Passages []json.RawMessage
						Warnings []string
					}
					if err := json.Unmarshal([]byte(out), &doc); err != nil {
						t.Fatal(err)
					}
					if len(doc.Passages) == 0 || len(doc.Warnings) != 1 {
						t.Errorf("%d passages, warnings %q", len(doc.Passages), doc.Warnings)
					}
				}
				// hybrid embeds both levels' keywords: two embeddings, each tried twice.
				if n := embedCalls.Load() - before; n > 4 {
					t.Errorf("%d embedding requests, want at most one retry per embedding", n)
				}
			})
		}
	}
}

// ingestWith ingests the test corpus into db with the named embedder.
func ingestWith(t *testing.T, db, embedder string) {
	t.Helper()
	s := pipeline.Settings{Store: db, Embedder: embedder}
	ctx := context.Background()
	m, err := pipeline.NewModels(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	st, err := pipeline.OpenStore(ctx, s, m.Embedder, m.Merger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := pipeline.New(s, m, st)
	if err != nil {
		t.Fatal(err)
	}
	corpus, _ := filepath.Abs(filepath.Join(repoRoot(t), "testdata", "corpus"))
	if sum, err := p.Ingest(ctx, []string{corpus}, pipeline.Options{}); err != nil || sum.Failed != 0 {
		t.Fatalf("%+v %v", sum, err)
	}
}

// TestQueryReportsUsage: --json reports the chat calls of the query and
// the tokens the server said they used, summed over keywords and answer.
func TestQueryReportsUsage(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Last(), "high_level_keywords") {
			return llmtest.Reply{Content: `{"high_level_keywords": ["code breaking"], "low_level_keywords": ["Enigma"]}`, PromptTokens: 110, CompletionTokens: 12}
		}
		return llmtest.Reply{Content: "Alan Turing led the work on Enigma at Bletchley Park [1].", PromptTokens: 900, CompletionTokens: 30}
	})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	for _, tt := range []struct {
		mode string
		want llm.UsageCounts
	}{
		{"mix", llm.UsageCounts{Calls: 2, PromptTokens: 1010, CompletionTokens: 42}},
		{"naive", llm.UsageCounts{Calls: 1, PromptTokens: 900, CompletionTokens: 30}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			out, errs, err := run(t, "--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--json", "--mode", tt.mode, "Who broke Enigma messages at Bletchley Park?")
			if err != nil {
				t.Fatalf("%v\n%s", err, errs)
			}
			var doc struct {
				LLMUsage *llm.UsageCounts `json:"llm_usage"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.LLMUsage == nil || *doc.LLMUsage != tt.want {
				t.Errorf("llm_usage %+v, want %+v", doc.LLMUsage, tt.want)
			}
		})
	}
	// Without a model the usage is there, and zero.
	out, errs, err := run(t, "--store", db, "--config", "", "--json", "Who broke Enigma messages at Bletchley Park?")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	if !strings.Contains(out, `"llm_usage": {
    "calls": 0,`) {
		t.Errorf("no zero llm_usage without --llm:\n%s", out)
	}
}

// TestServeReportsUsagePerRequest: the API's query response counts the
// request's own calls, though every request shares one model client.
func TestServeReportsUsagePerRequest(t *testing.T) {
	db := corpusStore(t)
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "Rob Pike, Ken Thompson and Robert Griesemer [1].", PromptTokens: 700, CompletionTokens: 9}
	})
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
	api := startAPI(t, testEngine(t, db, "--llm", "openai:test-model", "--llm-cache", "off"), apiConfig{})
	want := llm.UsageCounts{Calls: 1, PromptTokens: 700, CompletionTokens: 9}
	for range 2 { // the second request's usage is its own, not the sum
		r := do(t, "POST", api.URL+"/v1/query", `{"question": "Who designed Go?", "mode": "naive"}`)
		got := decode[struct {
			LLMUsage llm.UsageCounts `json:"llm_usage"`
		}](t, r.Body).LLMUsage
		if r.Status != http.StatusOK || got != want {
			t.Errorf("%d: llm_usage %+v, want %+v", r.Status, got, want)
		}
	}
}
