package retrieve_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/splitter"
)

func bigResult() *retrieve.Result {
	res := &retrieve.Result{Question: "Is the Rhine longer than the Elbe?", Hint: retrieve.AnswerHint("Is the Rhine longer than the Elbe?")}
	for i := 0; i < 40; i++ {
		res.Entities = append(res.Entities, retrieve.EntityInfo{Name: fmt.Sprintf("Entity %d", i), Type: "place",
			Description: strings.Repeat("A river town with a long history of trade. ", 5)})
		res.Relations = append(res.Relations, retrieve.RelationInfo{Source: fmt.Sprintf("Entity %d", i), Target: "Rhine",
			Keywords: "lies on", Description: strings.Repeat("The town lies on the river. ", 4)})
		res.Facts = append(res.Facts, retrieve.RelationInfo{Source: "Rhine", Target: fmt.Sprintf("Port %d", i),
			Description: "The Rhine feeds the port."})
	}
	for i := 0; i < 20; i++ {
		res.Passages = append(res.Passages, retrieve.Passage{ChunkID: fmt.Sprint("c", i), DocPath: fmt.Sprintf("geo/river-%02d.md", i),
			DocTitle: fmt.Sprint("River ", i), Index: i, Text: strings.Repeat(fmt.Sprintf("Passage %d says the Rhine is 1,230 km long. ", i), 30)})
	}
	return res
}

func TestAssembleStaysWithinBudget(t *testing.T) {
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{250, 600, 1500, 4000, 20000} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			b := retrieve.DefaultBudget()
			b.MaxTokens = max
			res := bigResult()
			c, err := retrieve.Assemble(res, tok, b, "")
			if err != nil {
				t.Fatal(err)
			}
			prompt, err := c.Prompt()
			if err != nil {
				t.Fatal(err)
			}
			total := tok.Count(prompt) + tok.Count(c.System())
			if total > max || c.Tokens != total {
				t.Errorf("prompt is %d tokens (reported %d), budget %d", total, c.Tokens, max)
			}
			if len(c.Sources) == 0 {
				t.Fatalf("no passage fits in %d tokens", max)
			}
			for i, s := range c.Sources {
				if s.N != i+1 || !strings.Contains(prompt, fmt.Sprintf("[%d] %s", s.N, s.DocTitle)) {
					t.Errorf("source %d numbered %d or missing from the prompt", i+1, s.N)
				}
				if s.Truncated && i != len(c.Sources)-1 {
					t.Errorf("source %d truncated but not last", s.N)
				}
			}
			if max >= 20000 {
				if len(c.Sources) != len(res.Passages) || c.Sources[len(c.Sources)-1].Truncated {
					t.Errorf("a large budget kept %d of %d passages", len(c.Sources), len(res.Passages))
				}
			} else if len(c.Sources) == len(res.Passages) && !c.Sources[len(c.Sources)-1].Truncated {
				t.Errorf("budget %d kept every passage whole", max)
			}
			// Each graph section keeps to its share.
			left := max - tok.Count(prompt) + sourcesTokens(tok, c)
			for title, share := range map[string]float64{"Entities": b.Entities, "Relationships": b.Relations, "Knowledge graph facts": b.Facts} {
				sec := section(c.Graph, title)
				if n := tok.Count(sec); float64(n) > share*float64(left)+2 {
					t.Errorf("%s section is %d tokens, over %.0f%% of %d", title, n, 100*share, left)
				}
			}
			if !strings.HasPrefix(c.Graph, "-----Answer format-----\nThis is a yes/no question") {
				t.Errorf("graph context does not open with the yes/no hint:\n%.200s", c.Graph)
			}
		})
	}
	if _, err := retrieve.Assemble(bigResult(), tok, retrieve.Budget{MaxTokens: 40}, ""); err == nil {
		t.Error("a budget smaller than the instructions was accepted")
	}
}

func sourcesTokens(tok retrieve.TokenCounter, c *retrieve.Context) int {
	n := 0
	for _, s := range c.Sources {
		n += tok.Count(s.Text)
	}
	return n
}

// section returns one "-----Title-----" section of the graph context.
func section(graph, title string) string {
	i := strings.Index(graph, "-----"+title+"-----")
	if i < 0 {
		return ""
	}
	rest := graph[i:]
	if j := strings.Index(rest[5:], "\n-----"); j >= 0 {
		return rest[:j+5]
	}
	return rest
}

func TestAnswerHint(t *testing.T) {
	for q, want := range map[string]string{
		"Is Paris in France?":                 "yes/no",
		"Did the director win an Oscar?":      "yes/no",
		"How many ports does Rotterdam have?": "quantity",
		"When was the bridge opened?":         "time",
		"In what year did the war end?":       "time",
		"Who directed Won In The Clouds?":     "",
		"":                                    "",
	} {
		got := retrieve.AnswerHint(q)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("AnswerHint(%q) = %q, want one about %q", q, got, want)
		}
	}
}
