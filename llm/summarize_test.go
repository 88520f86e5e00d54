package llm

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
)

// numbered matches the "n. description" lines of the summarize prompt.
var numbered = regexp.MustCompile(`(?m)^\d+\. (.*)$`)

func TestSummarizer(t *testing.T) {
	descs := func(n, words int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("fact %d: %s", i, strings.Repeat("detail ", words)))
		}
		return out
	}
	tests := []struct {
		name         string
		descriptions []string
		budget       int
		wantCalls    int
		wantFinalIn  int // descriptions in the last request
	}{
		{"fits in one call", descs(5, 10), 4000, 1, 5},
		{"duplicates and blanks dropped", append(descs(3, 10), "", "  ", descs(3, 10)[0]), 4000, 1, 3},
		// 12 descriptions of 20 tokens, 100 per group: groups of 5, 5 and 2, then 1.
		{"map-reduce", descs(12, 10), 100, 4, 3},
		// A single description longer than the budget is cut, not sent whole.
		{"one huge description", descs(1, 2000), 200, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
				n := len(numbered.FindAllString(r.Last(), -1))
				return llmtest.Reply{Content: fmt.Sprintf("summary of %d (request %d)", n, r.N)}
			})
			defer srv.Close()
			c := newTestClient(t, srv)
			s := NewSummarizer(c, WithSummaryContextTokens(tt.budget), WithSummaryMaxWords(60))

			got, err := s.Summarize(context.Background(), "entity", "Acme", tt.descriptions)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.wantCalls {
				t.Fatalf("%d model calls, want %d", len(reqs), tt.wantCalls)
			}
			last := reqs[len(reqs)-1]
			items := numbered.FindAllStringSubmatch(last.Last(), -1)
			if len(items) != tt.wantFinalIn {
				t.Fatalf("final request merges %d descriptions, want %d", len(items), tt.wantFinalIn)
			}
			if want := fmt.Sprintf("summary of %d (request %d)", tt.wantFinalIn, last.N); got != want {
				t.Errorf("Summarize = %q, want the final call's answer %q", got, want)
			}
			if !strings.Contains(last.Last(), "Entity: Acme") || !strings.Contains(last.Last(), "60 words") {
				t.Errorf("prompt lacks the name or the length limit:\n%s", last.Last())
			}
			for _, r := range reqs {
				if n := EstimateTokens(strings.Join(itemsOf(r.Last()), "\n")); n > tt.budget+10 {
					t.Errorf("request %d carries %d tokens of descriptions, budget %d", r.N, n, tt.budget)
				}
			}
			if tt.wantCalls > 1 {
				// The reduce step merges the map step's answers.
				for _, it := range items {
					if !strings.HasPrefix(it[1], "summary of ") {
						t.Errorf("final request merges %q, want a group summary", it[1])
					}
				}
			}
		})
	}
}

func itemsOf(prompt string) []string {
	var out []string
	for _, m := range numbered.FindAllStringSubmatch(prompt, -1) {
		out = append(out, m[1])
	}
	return out
}

func TestSummarizerNothingToSay(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed(""))
	defer srv.Close()
	c := newTestClient(t, srv)
	s := NewSummarizer(c)
	if got, err := s.Summarize(context.Background(), "relation", "A -> B", []string{" ", ""}); got != "" || err != nil || srv.Count() != 0 {
		t.Fatalf("no descriptions: %q, %v, %d calls; want \"\", nil, 0", got, err, srv.Count())
	}
	if _, err := s.Summarize(context.Background(), "relation", "A -> B", []string{"x"}); err == nil {
		t.Fatal("an empty answer from the model should be an error")
	}
}

// TestSummarizerRejectsUnusableSummaries: an empty answer or one longer
// than what it summarises is an UnusableSummaryError, counted, the first
// kept as the example, and dropped from the cache so a later run asks
// again; a short answer is a summary.
func TestSummarizerRejectsUnusableSummaries(t *testing.T) {
	blather := "Sure! " + strings.Repeat("Here is a lot of text about many other things. ", 60)
	tests := []struct {
		name, answer, wantReason string
	}{
		{"empty", "  \n", "empty"},
		{"longer than its input", blather, "words, longer than the"},
		{"a summary", "Acme makes anvils and rockets.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Fixed(tt.answer))
			defer srv.Close()
			c := newTestClient(t, srv, WithCache(t.TempDir()+"/cache.db"))
			s := NewSummarizer(c, WithSummaryMaxWords(20))
			descs := []string{"Acme makes anvils.", "Acme makes rockets.", "Acme is a company."}
			for range 2 {
				got, err := s.Summarize(context.Background(), "entity", "Acme", descs)
				var ue *UnusableSummaryError
				if tt.wantReason == "" {
					if err != nil || got != tt.answer {
						t.Fatalf("Summarize = %q, %v; want the answer", got, err)
					}
					continue
				}
				if !errors.As(err, &ue) || !ue.Unusable() || !strings.Contains(ue.Reason, tt.wantReason) || ue.Model != "openai:test-model" || len(ue.Answer) > 124 {
					t.Fatalf("Summarize error = %v, want an UnusableSummaryError (%s) naming the model with the answer's start", err, tt.wantReason)
				}
			}
			st := s.Stats()
			switch {
			case tt.wantReason == "" && (st.Unusable != 0 || srv.Count() != 1):
				t.Errorf("a usable summary: %d unusable, %d calls (want 0 and 1: the second from the cache)", st.Unusable, srv.Count())
			case tt.wantReason != "" && (st.Unusable != 2 || st.Example == nil || srv.Count() != 2):
				t.Errorf("%d unusable (example %v), %d calls: want 2, an example, and 2 calls (never replayed from the cache)", st.Unusable, st.Example, srv.Count())
			}
		})
	}
}
