package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"

	"github.com/docgraph/docgraph/server"
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
		{name: "nothing answers", want: "query: deadline of 4s reached while waiting for the keywords from openai:test-model (after 1 attempt; raise --deadline"},
		{name: "the answer hangs", keywords: true, want: "query: deadline of 4s reached while waiting for the answer from openai:test-model (after 1 attempt; raise --deadline"},
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
				args := []string{"--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--deadline", "4s"}
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
				// Generous: the bound is the deadline, not the retries' minutes;
				// the deadline leaves the steps before the answer room on a
				// loaded machine.
				if took > 15*time.Second {
					t.Errorf("took %s with --deadline 4s", took)
				}
			})
		}
	}
}

// enigmaStore starts a model server that answers keywords and an answer
// about Enigma, points the environment at it, and ingests testdata into a
// new store with embedder; from then on its embedding requests get
// broken's reply. It returns the store's URL.
func enigmaStore(t *testing.T, embedder string, broken func() llmtest.Reply) string {
	t.Helper()
	var embedBroken atomic.Bool
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		switch {
		case r.IsEmbedding() && embedBroken.Load():
			return broken()
		case strings.Contains(r.Last(), "high_level_keywords"):
			return llmtest.Reply{Content: `{"high_level_keywords": ["code breaking"], "low_level_keywords": ["Enigma"]}`}
		}
		return llmtest.Reply{Content: "Alan Turing led the work on Enigma at Bletchley Park [1]."}
	})
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestWith(t, db, embedder) // fills the cache beside the store, the probe included
	embedBroken.Store(true)
	return db
}

// TestQueryEmbedderDown: an embedder that answers 500 at query time costs
// the vector paths, not the query: one warning names it, full-text and
// graph search still find passages, the answer comes back (exit 0), and
// the question's embedding is not retried six times.
func TestQueryEmbedderDown(t *testing.T) {
	const embedder = "openai:text-embedding-3-small"
	var embedCalls atomic.Int64
	db := enigmaStore(t, embedder, func() llmtest.Reply {
		embedCalls.Add(1)
		return llmtest.Reply{Status: http.StatusInternalServerError, Error: "embedding backend down"}
	})

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
	api := startAPI(t, testEngine(t, db, "--llm", "openai:test-model", "--llm-cache", "off"), server.HandlerConfig{})
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

// TestQueryEmbedderHangs: an embedder that never answers at query time,
// whether in the dimension probe (no cache) or in the question's embedding
// (the probe answered from the cache ingest filled), costs the vector
// paths after its own wait, a quarter of the time left before --deadline,
// not the query: one warning says it did not answer within that wait, and
// the passages and answer come back.
func TestQueryEmbedderHangs(t *testing.T) {
	const embedder = "openai:text-embedding-3-small"
	db := enigmaStore(t, embedder, func() llmtest.Reply {
		return llmtest.Reply{Delay: time.Hour} // until the client leaves
	})

	// About a quarter of the 4 s --deadline, less the time the query took
	// to get to the embedding.
	warn := regexp.MustCompile(`warning: embedder ` + embedder + ` did not answer within [0-9.]+m?s, so vector search is skipped and full-text and graph search answer alone\n`)
	tests := []struct {
		name  string
		flags []string
		want  string // on stdout
	}{
		{name: "probe/mix", flags: []string{"--llm-cache", "off", "--llm", "openai:test-model"}, want: "Alan Turing led"},
		{name: "probe/naive", flags: []string{"--llm-cache", "off", "--llm", "openai:test-model", "--mode", "naive"}, want: "Alan Turing led"},
		{name: "probe/hybrid", flags: []string{"--llm-cache", "off", "--llm", "openai:test-model", "--mode", "hybrid"}, want: "Alan Turing led"},
		{name: "probe/offline", flags: []string{"--llm-cache", "off"}, want: "[1] "},
		{name: "question/mix", flags: []string{"--llm", "openai:test-model"}, want: "Alan Turing led"},
		{name: "question/local", flags: []string{"--llm", "openai:test-model", "--mode", "local"}, want: "Alan Turing led"},
		{name: "question/json", flags: []string{"--llm", "openai:test-model", "--json"}, want: `"passages": [`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// --deadline 4s gives each embedding about 1 s.
			args := append([]string{"--store", db, "--config", "", "--embedder", embedder, "--deadline", "4s"}, tt.flags...)
			start := time.Now()
			out, errs, err := run(t, append(args, "Who broke Enigma messages at Bletchley Park?")...)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("%v after %s\nstdout:\n%s\nstderr:\n%s", err, took, out, errs)
			}
			if n := len(warn.FindAllString(errs, -1)); n != 1 {
				t.Errorf("%d warnings that the embedder did not answer, want 1:\n%s", n, errs)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("stdout lacks %q:\n%s", tt.want, out)
			}
			if strings.Contains(tt.name, "json") && !strings.Contains(out, "did not answer within") {
				t.Errorf("the warning is not among the JSON warnings:\n%s", out)
			}
			// The waits are 1 s, the query's deadline 4 s; the bound only
			// shows that the 15 s wait for an embedder was not spent.
			if took > 10*time.Second {
				t.Errorf("took %s", took)
			}
		})
	}
}

// TestQueryDeadlineEveryMode: in every mode, a model call that never
// comes back stops the query at --deadline with a message naming what it
// waited for (keywords, logic form, pre-check, choice of paths, answer),
// the model and the attempts, and nothing of what then failed on the
// expired context (a store read, a fallback).
func TestQueryDeadlineEveryMode(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	// The model's name says which kinds of request hang (requestKind,
	// and "select" for the choice of paths), so that one server serves
	// subtests running side by side.
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		kind := requestKind(r)
		if strings.Contains(r.Last(), "pick the paths") {
			kind = "select"
		}
		if slices.Contains(strings.Split(r.Model, "-"), kind) {
			return llmtest.Reply{Delay: time.Hour} // until the client leaves
		}
		switch kind {
		case "plan":
			return llmtest.Reply{Content: goPlan}
		case "precheck":
			return llmtest.Reply{Content: "YES"}
		case "keywords":
			return llmtest.Reply{Content: `{"high_level_keywords": ["programming language"], "low_level_keywords": ["Unix", "Google"]}`}
		case "select":
			return llmtest.Reply{Content: "1"}
		}
		if r.LogProbs {
			return llmtest.Reply{Tokens: llmtest.Tokens("Go [1].", -0.01)}
		}
		return llmtest.Reply{Content: "Go [1]."}
	})
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")

	tests := []struct {
		name  string
		hang  string // request kinds, joined by "-"
		flags []string
		want  string // what the message says the query waited for
		tries string // "after 1 attempt" when empty
	}{
		{name: "mix", hang: "keywords-answer", want: "the keywords"},
		{name: "mix/answer", hang: "answer", want: "the answer"},
		{name: "local", hang: "keywords", flags: []string{"--mode", "local"}, want: "the keywords"},
		{name: "global", hang: "keywords", flags: []string{"--mode", "global"}, want: "the keywords"},
		{name: "hybrid", hang: "keywords", flags: []string{"--mode", "hybrid"}, want: "the keywords"},
		{name: "naive", hang: "answer", flags: []string{"--mode", "naive"}, want: "the answer"},
		{name: "logic", hang: "plan-keywords-answer", flags: []string{"--mode", "logic"}, want: "the logic form"},
		{name: "logic/precheck", hang: "precheck", flags: []string{"--mode", "logic"}, want: "the logic form's pre-check"},
		{name: "logic/answer", hang: "answer", flags: []string{"--mode", "logic"}, want: "the answer"},
		{name: "path", hang: "answer", flags: []string{"--mode", "path"}, want: "the answer"},
		{name: "path/llm", hang: "select", flags: []string{"--mode", "path", "--paths", "se=ppr,pf=beam:bm25,pr=llm"}, want: "the choice of paths"},
		{name: "mix/integrate", hang: "graphrag-llm_only", flags: []string{"--integrate", "logits"}, want: "the answer and the model-only answer", tries: "2 calls side by side"},
		{name: "path/integrate", hang: "graphrag-llm_only", flags: []string{"--mode", "path", "--integrate", "logits"}, want: "the answer and the model-only answer", tries: "2 calls side by side"},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			name := tt.name
			if asJSON {
				name += "/json"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				model := "openai:" + tt.hang
				// 26 queries run at once, under -race too: the deadline
				// leaves room to reach the model call that hangs.
				args := append([]string{"--store", db, "--config", "", "--llm", model, "--llm-cache", "off", "--deadline", "6s"}, tt.flags...)
				if asJSON {
					args = append(args, "--json")
				}
				start := time.Now()
				out, errs, err := run(t, append(args, goQuestion)...)
				took := time.Since(start)
				if code := cli.ExitCode(err); code != 1 {
					t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
				}
				tries := tt.tries
				if tries == "" {
					tries = "after 1 attempt"
				}
				want := "query: deadline of 6s reached while waiting for " + tt.want + " from " + model + " (" + tries + "; raise --deadline, or 0 for none)\n"
				if !strings.HasSuffix(errs, want) {
					t.Errorf("stderr does not end with %q:\n%s", want, errs)
				}
				for _, noise := range []string{"sqlite", "context deadline exceeded", "canceled", "network error"} {
					if strings.Contains(errs, noise) {
						t.Errorf("stderr says %q:\n%s", noise, errs)
					}
				}
				if asJSON && out != "" {
					t.Errorf("--json printed a document:\n%s", out)
				}
				// Generous (26 at once, maybe under -race): the point is
				// that the deadline ends the query, not the retries.
				if took > 30*time.Second {
					t.Errorf("took %s with --deadline 6s", took)
				}
			})
		}
	}
}

// TestQueryStreamCut: an answer whose stream breaks off after it began
// (the connection dropped, or the body ending before the model finished)
// fails the query at once, in every mode that streams, and says that the
// part printed is not the whole answer; that part stays on stdout, with
// no sources under it.
func TestQueryStreamCut(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	const answer = "Alan Turing led the work on Enigma at Bletchley Park [1]."
	for _, abort := range []bool{true, false} {
		for _, mode := range []string{"mix", "naive", "hybrid", "logic", "path"} {
			name := mode + "/body ends"
			why := "the answer stream ended after 24 bytes, before the model finished"
			if abort {
				name = mode + "/connection dropped"
				why = "answer stream broke after it began"
			}
			t.Run(name, func(t *testing.T) {
				srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
					switch requestKind(r) {
					case "plan":
						return llmtest.Reply{Content: goPlan}
					case "precheck":
						return llmtest.Reply{Content: "YES"}
					case "keywords":
						return llmtest.Reply{Content: `{"high_level_keywords": ["code breaking"], "low_level_keywords": ["Enigma"]}`}
					}
					// Three 8-byte events, then the cut.
					return llmtest.Reply{Content: answer, Cut: 3, Abort: abort}
				})
				t.Cleanup(srv.Close)
				t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
				t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
				start := time.Now()
				out, errs, err := run(t, "--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--mode", mode,
					"Who broke Enigma messages at Bletchley Park?")
				took := time.Since(start)
				if code := cli.ExitCode(err); code != 1 {
					t.Fatalf("exit status %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
				}
				if !strings.Contains(out, "Alan Turing led the work\n") || strings.Contains(out, "Sources:") {
					t.Errorf("stdout should keep the 24 bytes printed, on a line of their own, and list no sources:\n%s", out)
				}
				for _, want := range []string{"query: the answer printed above is incomplete: it broke off after 24 bytes: ", why} {
					if !strings.Contains(errs, want) {
						t.Errorf("stderr lacks %q:\n%s", want, errs)
					}
				}
				// Generous: a cut stream is not waited on, nor retried.
				if took > 10*time.Second {
					t.Errorf("took %s", took)
				}
			})
		}
	}
}

// TestQueryShowsRetries: a model call that fails once and then answers is
// retried, and the retry is shown on stderr, once, with its reason and
// wait; the answer comes back.
func TestQueryShowsRetries(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	tests := []struct {
		name  string
		fail  llmtest.Reply
		flags []string
		want  string // the retry line, a regexp
	}{
		{name: "500", fail: llmtest.Reply{Status: http.StatusInternalServerError, Error: "upstream overloaded"}, flags: []string{"--mode", "naive"},
			want: `llm: llm call failed, retrying \(provider openai, model test-model, reason HTTP 500, attempt 1, wait \d+(\.\d+)?m?s, error [^\n]*upstream overloaded\)\n`},
		{name: "500/keywords", fail: llmtest.Reply{Status: http.StatusInternalServerError, Error: "upstream overloaded"},
			want: `llm: llm call failed, retrying \(provider openai, model test-model, reason HTTP 500, attempt 1, wait \d+(\.\d+)?m?s, error [^\n]*upstream overloaded\)\n`},
		{name: "500/json", fail: llmtest.Reply{Status: http.StatusInternalServerError, Error: "upstream overloaded"}, flags: []string{"--mode", "naive", "--json"},
			want: `llm: llm call failed, retrying \(provider openai, model test-model, reason HTTP 500, attempt 1, wait \d+(\.\d+)?m?s, error [^\n]*upstream overloaded\)\n`},
		{name: "429 retry-after", fail: llmtest.Reply{Status: http.StatusTooManyRequests, Error: "slow down", RetryAfter: "1"}, flags: []string{"--mode", "naive"},
			want: `llm: llm call failed, retrying \(provider openai, model test-model, reason HTTP 429, attempt 1, wait 1\.\d+s, error [^\n]*slow down\)\n`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var failed atomic.Bool
			srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
				if failed.CompareAndSwap(false, true) {
					return tt.fail
				}
				if requestKind(r) == "keywords" {
					return llmtest.Reply{Content: `{"high_level_keywords": ["code breaking"], "low_level_keywords": ["Enigma"]}`}
				}
				return llmtest.Reply{Content: "Alan Turing led the work on Enigma at Bletchley Park [1]."}
			})
			t.Cleanup(srv.Close)
			t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
			t.Setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-0123")
			args := append([]string{"--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off"}, tt.flags...)
			out, errs, err := run(t, append(args, "Who broke Enigma messages at Bletchley Park?")...)
			if err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, errs)
			}
			if n := len(regexp.MustCompile(tt.want).FindAllString(errs, -1)); n != 1 || strings.Count(errs, "retrying") != 1 {
				t.Errorf("%d retry lines matching %s, want 1:\n%s", n, tt.want, errs)
			}
			if !strings.Contains(out, "Alan Turing led") {
				t.Errorf("no answer:\n%s", out)
			}
		})
	}
}
