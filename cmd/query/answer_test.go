package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/splitter"
)

// fakeLLM points the openai provider at a fake chat server for the test.
func fakeLLM(t *testing.T, answer string) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Last(), "high_level_keywords") {
			return llmtest.Reply{Content: `{"high_level_keywords": ["code breaking"], "low_level_keywords": ["Enigma", "Bletchley Park"]}`}
		}
		return llmtest.Reply{Content: answer}
	})
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
	return srv
}

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := execute(context.Background(), streams{Out: &out, Err: &errb}, args)
	return out.String(), errb.String(), err
}

func TestQueryStreamsAnswerWithSources(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	srv := fakeLLM(t, "Alan Turing led the work on Enigma at Bletchley Park [1].")
	srv.SetChunkSize(4)
	out, errs, err := run(t, "--store", db, "--config", "", "--llm", "openai:test-model", "Who broke Enigma messages at Bletchley Park?")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	answer, sources, ok := strings.Cut(out, "\nSources:\n")
	if !ok {
		t.Fatalf("no sources list:\n%s", out)
	}
	if strings.TrimSpace(answer) != "Alan Turing led the work on Enigma at Bletchley Park [1]." {
		t.Errorf("answer = %q", answer)
	}
	lines := strings.Split(strings.TrimSpace(sources), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "[1] ") || !strings.Contains(lines[0], "alan-turing.txt (chunk 0)") {
		t.Errorf("sources = %q; want only the cited [1], alan-turing.txt", sources)
	}
	var answerReq *llmtest.Request
	for _, r := range srv.Requests() {
		if r.Stream {
			answerReq = &r
		}
	}
	if answerReq == nil {
		t.Fatal("the answer was not requested as a stream")
	}
	if !strings.Contains(answerReq.Last(), "[1] ") || !strings.Contains(answerReq.Last(), "Bletchley") {
		t.Errorf("answer prompt lacks numbered sources:\n%.500s", answerReq.Last())
	}
}

func TestQueryJSONWithAnswer(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	fakeLLM(t, "Go was designed at Google [2][1].")
	out, errs, err := run(t, "--store", db, "--config", "", "--llm", "openai:test-model", "--json", "Who designed the Go programming language?")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	var res struct {
		Answer   string `json:"answer"`
		Keywords struct {
			Source string   `json:"source"`
			Low    []string `json:"low_level"`
		} `json:"keywords"`
		Sources []struct {
			N     int  `json:"n"`
			Cited bool `json:"cited"`
		} `json:"sources"`
		Passages []json.RawMessage `json:"passages"`
		Entities []struct {
			Name string `json:"name"`
		} `json:"entities"`
		ContextTokens int              `json:"context_tokens"`
		Timings       map[string]int64 `json:"timings_ns"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if res.Answer != "Go was designed at Google [2][1]." || res.Keywords.Source != "llm" || len(res.Sources) < 2 {
		t.Fatalf("answer %q keywords %+v sources %d", res.Answer, res.Keywords, len(res.Sources))
	}
	for _, s := range res.Sources {
		if s.Cited != (s.N == 1 || s.N == 2) {
			t.Errorf("source %d cited = %v", s.N, s.Cited)
		}
	}
	for _, stage := range []string{"keywords", "fulltext", "vector", "ppr", "rerank", "context", "answer", "total"} {
		if res.Timings[stage] <= 0 {
			t.Errorf("timing %s = %d", stage, res.Timings[stage])
		}
	}
	if res.ContextTokens <= 0 || len(res.Passages) == 0 || len(res.Entities) == 0 {
		t.Errorf("context tokens %d, %d passages, %d entities", res.ContextTokens, len(res.Passages), len(res.Entities))
	}
}

func TestQueryContextOnlyKeepsTheBudget(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	big, _, err := run(t, "--store", db, "--config", "", "--context-only", "--mode", "hybrid", "Which languages did Ken Thompson create?")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"-----Entities-----", "-----Relationships-----", "-----Sources-----\n[1] "} {
		if !strings.Contains(big, s) {
			t.Errorf("context lacks %q:\n%.600s", s, big)
		}
	}
	small, _, err := run(t, "--store", db, "--config", "", "--context-only", "--max-context-tokens", "400", "Which languages did Ken Thompson create?")
	if err != nil {
		t.Fatal(err)
	}
	if n := tok.Count(small); n > 400 || n >= tok.Count(big) {
		t.Errorf("--max-context-tokens 400 printed %d tokens (unbounded: %d)", n, tok.Count(big))
	}
	if !strings.Contains(small, "[1] ") {
		t.Errorf("small context has no passage:\n%s", small)
	}
}
