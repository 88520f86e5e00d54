package llm

import (
	"context"
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
