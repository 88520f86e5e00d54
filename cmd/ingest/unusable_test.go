package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
)

const proseAnswer = "Sure! Here are the entities you asked for.\nThe text talks about several people and places."

// proseUnless answers prose to every extraction prompt whose text does not
// contain keep, and records for the others.
func proseUnless(keep string) llmtest.Responder {
	return func(r llmtest.Request) llmtest.Reply {
		last := r.Messages[0].Content
		if keep != "" && strings.Contains(last[strings.LastIndex(last, "Text:"):], keep) {
			return llmtest.Reply{Content: `("entity"<|>Grace Hopper<|>person<|>A computer scientist.)##` + "\n<|COMPLETE|>"}
		}
		return llmtest.Reply{Content: proseAnswer}
	}
}

func llmEnv(t *testing.T, srv *llmtest.Server) {
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
}

// TestIngestStopsOnProse: a model answering prose to every extraction
// prompt stops ingest after its first 5 answers with exit status 1 and one
// message quoting an answer and pointing at --llm; the corpus is not spent.
func TestIngestStopsOnProse(t *testing.T) {
	srv, dir, docs := proseFixture(t, "")
	const files, chunksEach = 20, 5
	for i := range files {
		var b strings.Builder
		for j := range chunksEach {
			fmt.Fprintf(&b, "Document %d, part %d: Grace Hopper wrote the first compiler for the Harvard Mark I team.\n\n", i, j)
		}
		os.WriteFile(filepath.Join(docs, fmt.Sprintf("d%02d.md", i)), []byte(b.String()), 0o644)
	}
	out, logs, err := runCmd(t, "--store", "sqlite://"+filepath.Join(dir, "g.db"), "--llm", "openai:fake",
		"--chunk-tokens", "40", "--llm-concurrency", "4", "--concurrency", "2", "--json", docs)
	if exitCode(err) != 1 {
		t.Fatalf("exit status %d (%v), want 1\n%s", exitCode(err), err, logs)
	}
	if strings.Count(logs, "not in the extraction format") != 1 || !strings.Contains(logs, "openai:fake") ||
		!strings.Contains(logs, `"Sure! Here are the entities you asked for. The text`) || !strings.Contains(logs, "check --llm") {
		t.Errorf("want one message naming the model, quoting an answer on one line and pointing at --llm:\n%s", logs)
	}
	var sum pipeline.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json summary: %v\n%s", err, out)
	}
	if sum.UnusableAnswers < 5 || sum.Added != 0 {
		t.Errorf("--json summary %+v: want at least the 5 unusable answers counted, nothing added", sum)
	}
	// The first 5 answers, plus what was already in flight (--llm-concurrency 4).
	if n := srv.Count(); n > 5+4 {
		t.Errorf("the server saw %d requests for %d chunks; want at most 9", n, files*chunksEach)
	}
}

// TestIngestFailsProseDocument: prose for one document, records for the
// others: that document fails with the reason (exit status 2), the others
// are added, and both summaries count the unusable answers.
func TestIngestFailsProseDocument(t *testing.T) {
	_, dir, docs := proseFixture(t, "Hopper")
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("Grace Hopper wrote the A-0 System."), 0o644)
	os.WriteFile(filepath.Join(docs, "b.md"), []byte("Grace Hopper found a moth in the Mark II."), 0o644)
	os.WriteFile(filepath.Join(docs, "prose.md"), []byte("Alan Turing worked at Bletchley Park."), 0o644)
	db := "sqlite://" + filepath.Join(dir, "g.db")

	out, logs, err := runCmd(t, "--store", db, "--llm", "openai:fake", "--llm-cache", "off", docs)
	if exitCode(err) != 2 {
		t.Fatalf("exit status %d (%v), want 2\n%s", exitCode(err), err, logs)
	}
	if !strings.Contains(out, "2 added") || !strings.Contains(out, "1 failed") ||
		!strings.Contains(out, "prose.md: 1 of 1 chunks got unusable answers") || !strings.Contains(out, "unusable answers: 1 ") {
		t.Errorf("summary:\n%s", out)
	}
	if !strings.Contains(logs, "failed ") || !strings.Contains(logs, "unusable answer from openai:fake") {
		t.Errorf("the log must show the failure with the model's name:\n%s", logs)
	}

	out, _, err = runCmd(t, "--store", db, "--llm", "openai:fake", "--llm-cache", "off", "--json", docs)
	if exitCode(err) != 2 {
		t.Fatalf("re-run: exit status %d (%v), want 2: the failed document is tried again", exitCode(err), err)
	}
	var sum pipeline.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.UnusableAnswers != 1 || sum.Unchanged != 2 || sum.Failed != 1 || sum.LLM == nil || sum.LLM.UnusableAnswers != 1 {
		t.Errorf("--json summary %+v: want unusable_answers 1", sum)
	}
}

// TestIngestUsableAnswersNoWarning: answers in the format, one of them
// listing nothing but the completion delimiter, give no warning.
func TestIngestUsableAnswersNoWarning(t *testing.T) {
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Messages[0].Content[strings.LastIndex(r.Messages[0].Content, "Text:"):], "nothing") {
			return llmtest.Reply{Content: "<|COMPLETE|>"}
		}
		return proseUnless("Hopper")(r)
	})
	defer srv.Close()
	llmEnv(t, srv)
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("Grace Hopper wrote the A-0 System."), 0o644)
	os.WriteFile(filepath.Join(dir, "b.md"), []byte("nothing named in here."), 0o644)
	out, logs, err := runCmd(t, "--store", "sqlite://"+filepath.Join(dir, "g.db"), "--llm", "openai:fake", "--gleaning", "0", dir)
	if err != nil || !strings.Contains(out, "2 added") || strings.Contains(out, "unusable") || strings.Contains(logs, "unusable") || strings.Contains(out, "warning") {
		t.Fatalf("valid answers: %v\n%s\n%s", err, out, logs)
	}
}

// proseFixture starts a model answering prose unless a prompt holds
// keep, points the environment at it, and makes a docs folder in a new
// working directory.
func proseFixture(t *testing.T, keep string) (srv *llmtest.Server, dir, docs string) {
	return llmFixture(t, proseUnless(keep))
}

// llmFixture starts a model answering with respond, points the
// environment at it, and makes a docs folder in a new working directory.
func llmFixture(t *testing.T, respond llmtest.Responder) (srv *llmtest.Server, dir, docs string) {
	t.Helper()
	srv = llmtest.NewServer(respond)
	t.Cleanup(srv.Close)
	llmEnv(t, srv)
	dir = t.TempDir()
	t.Chdir(dir)
	docs = filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	return srv, dir, docs
}
