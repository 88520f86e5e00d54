package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"docgraph/cmd/internal/cli"
	"docgraph/llm/llmtest"
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
		{name: "nothing answers", want: "query: deadline of 2s reached while waiting for the keywords from openai:test-model (after 1 attempt)"},
		{name: "the answer hangs", keywords: true, want: "query: deadline of 2s reached while waiting for the answer from openai:test-model (after 1 attempt)"},
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
