package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
)

const recordAnswer = `("entity"<|>Grace Hopper<|>person<|>A computer scientist.)##` + "\n<|COMPLETE|>"

// waitFixture is a folder of n small documents and a model server
// answering with respond, reached through OPENAI_BASE_URL.
func waitFixture(t *testing.T, n int, respond llmtest.Responder) (srv *llmtest.Server, dir, docs string) {
	t.Helper()
	srv, dir, docs = llmFixture(t, respond)
	for i := range n {
		text := fmt.Sprintf("Note %d: Grace Hopper wrote the first compiler for the Harvard Mark I team.", i)
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("n%d.md", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return srv, dir, docs
}

func hang(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} }

// TestIngestStopsWhenTheModelNeverAnswers: a model that answers no call
// stops the run once the stall window passes, with exit status 1 and one
// message naming the model, its endpoint and the last failure; nothing
// lands, and the documents are left for the next run.
func TestIngestStopsWhenTheModelNeverAnswers(t *testing.T) {
	srv, dir, docs := waitFixture(t, 3, hang)
	db := filepath.Join(dir, "g.db")
	start := time.Now()
	out, logs, err := runCmd(t, "--store", "sqlite://"+db, "--llm", "openai:fake",
		"--llm-timeout", "200ms", "--llm-retries", "100", "--llm-stall", "1s", "--json", docs)
	took := time.Since(start)
	if exitCode(err) != 1 {
		t.Fatalf("exit status %d (%v), want 1\n%s", exitCode(err), err, logs)
	}
	msg := err.Error()
	for _, want := range []string{"stopped: no answer from openai:fake at " + srv.URL, "stall window 1s", "timeout", "--llm-stall", "retried on the next run"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "sk-test-secret") || strings.Contains(logs, "sk-test-secret") {
		t.Error("the API key was shown")
	}
	// The bound only shows that the run stops on its own; a second is the
	// window, 14 minutes what the retries alone would take.
	if took > time.Minute {
		t.Errorf("the run took %s to stop", took)
	}
	var sum pipeline.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json summary: %v\n%s", err, out)
	}
	if sum.Added != 0 || sum.Failed != 0 {
		t.Errorf("summary %+v: want nothing added and nothing failed (rolled back, not failed)", sum)
	}
	if n := doneCount(t, db); n != 0 {
		t.Errorf("%d documents stored as done", n)
	}
}

// TestIngestDoesNotStopASlowModel: a model slower than the stall window
// in all but still answering every call finishes the run.
func TestIngestDoesNotStopASlowModel(t *testing.T) {
	_, dir, docs := waitFixture(t, 5, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Delay: 300 * time.Millisecond, Content: recordAnswer}
	})
	out, logs, err := runCmd(t, "--store", "sqlite://"+filepath.Join(dir, "g.db"), "--llm", "openai:fake",
		"--llm-concurrency", "1", "--concurrency", "1", "--gleaning", "0", "--llm-stall", "1s", docs)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, logs)
	}
	if !strings.Contains(out, "5 added") {
		t.Errorf("summary:\n%s", out)
	}
}

// TestIngestShowsRetries: each retried call is one line on stderr with
// its reason and wait, as query shows them.
func TestIngestShowsRetries(t *testing.T) {
	var n atomic.Int64
	_, dir, docs := waitFixture(t, 2, func(llmtest.Request) llmtest.Reply {
		if n.Add(1) <= 2 {
			return llmtest.Reply{Status: http.StatusInternalServerError, Error: "overloaded"}
		}
		return llmtest.Reply{Content: recordAnswer}
	})
	out, logs, err := runCmd(t, "--store", "sqlite://"+filepath.Join(dir, "g.db"), "--llm", "openai:fake",
		"--llm-concurrency", "1", "--concurrency", "1", docs)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, logs)
	}
	lines := 0
	for _, l := range strings.Split(logs, "\n") {
		if strings.HasPrefix(l, "ingest: llm: llm call failed, retrying") {
			lines++
			if !strings.Contains(l, "reason HTTP 500") || !strings.Contains(l, "wait ") || !strings.Contains(l, "model fake") {
				t.Errorf("retry line lacks the reason, the wait or the model: %s", l)
			}
		}
	}
	if lines != 2 {
		t.Errorf("%d retry lines, want 2:\n%s", lines, logs)
	}
}

// TestIngestCtrlCWhileWaiting: a signal while model calls wait cancels
// them at once; the process exits with 130 instead of waiting out the
// shutdown timeout, and a re-run with a working model adds everything.
func TestIngestCtrlCWhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns and signals an ingest process")
	}
	var answer atomic.Bool
	srv, dir, docs := waitFixture(t, 4, func(llmtest.Request) llmtest.Reply {
		if answer.Load() {
			return llmtest.Reply{Content: recordAnswer}
		}
		return llmtest.Reply{Delay: time.Hour}
	})
	db := filepath.Join(dir, "g.db")
	c := startChild(t, dir, "--store", "sqlite://"+db, "--llm", "openai:fake", "--shutdown-timeout", "1m", docs)
	deadline := time.Now().Add(time.Minute)
	for srv.Count() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no model call was made:\n%s", c.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	c.signal(t, syscall.SIGINT)
	code := c.wait(t)
	took := time.Since(start)
	if code != 130 {
		t.Fatalf("exit status %d, want 130:\n%s", code, c.stderr.String())
	}
	if !strings.Contains(c.stderr.String(), "stopped while waiting for the model") {
		t.Errorf("stderr:\n%s", c.stderr.String())
	}
	// Bounded well below the minute of --shutdown-timeout a wait would run to.
	if took > 20*time.Second {
		t.Errorf("exit took %s after the signal", took)
	}
	t.Logf("exit %s after SIGINT", took.Round(time.Millisecond))

	answer.Store(true)
	out, logs, err := runCmd(t, "--store", "sqlite://"+db, "--llm", "openai:fake", docs)
	if err != nil || !strings.Contains(out, "4 added") {
		t.Fatalf("re-run: %v\n%s%s", err, out, logs)
	}
}

// TestIngestCountsUnusableSummaries: a model that extracts well but
// answers the summary prompt with pages of chat keeps every document; the
// descriptions are cut to the budget, and the summary counts the unusable
// summaries and quotes the first.
func TestIngestCountsUnusableSummaries(t *testing.T) {
	var n atomic.Int64
	_, dir, docs := waitFixture(t, 6, func(r llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.Messages[0].Content, "Several passages describe the same") {
			return llmtest.Reply{Content: "Sure! " + strings.Repeat("I would be glad to talk about something else entirely. ", 80)}
		}
		return llmtest.Reply{Content: fmt.Sprintf(`("entity"<|>Grace Hopper<|>person<|>A computer scientist who wrote compiler number %d for the team.)##`+"\n<|COMPLETE|>", n.Add(1))}
	})
	out, logs, err := runCmd(t, "--store", "sqlite://"+filepath.Join(dir, "g.db"), "--llm", "openai:fake",
		"--gleaning", "0", "--description-tokens", "40", docs)
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, logs)
	}
	if !strings.Contains(out, "6 added") || !strings.Contains(out, "unusable summaries: ") ||
		!strings.Contains(out, `unusable summary of entity "Grace Hopper" from openai:fake`) || !strings.Contains(out, "Sure! I would be glad") {
		t.Errorf("summary:\n%s", out)
	}
}
