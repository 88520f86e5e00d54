package retrieve

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docgraph/docgraph/prompts"
)

// TokenCounter counts tokens the way the model's tokenizer does;
// splitter.NewTokenizer("") (cl100k) is the one docgraph uses.
type TokenCounter interface {
	Count(text string) int
	Truncate(text string, maxTokens int) string
}

// Budget bounds the prompt built from a result. Each graph section may use
// at most its share of the tokens left after the prompt's fixed text; what
// a section leaves unused goes to the passages.
type Budget struct {
	MaxTokens int     // the whole prompt: instructions, question, graph sections and passages (8000)
	Cypher    float64 // share for graph query rows (0.10)
	Entities  float64 // share for entities (0.15)
	Relations float64 // share for relationships (0.15)
	Facts     float64 // share for knowledge graph facts (0.10)
	Steps     float64 // share for logic-form steps and results (0.40)
}

// DefaultBudget is an 8k-token prompt with most of it for passages.
func DefaultBudget() Budget {
	return Budget{MaxTokens: 8000, Cypher: 0.10, Entities: 0.15, Relations: 0.15, Facts: 0.10, Steps: 0.40}
}

// Source is one numbered passage of the context, citable as [N].
type Source struct {
	N        int    `json:"n"`
	ChunkID  string `json:"chunk_id"`
	DocPath  string `json:"doc_path"`
	DocTitle string `json:"doc_title"`
	Index    int    `json:"chunk_index"`
	Text     string `json:"text"`
	// Truncated is set when the passage was cut to fit the budget.
	Truncated bool `json:"truncated"`
	Cited     bool `json:"cited"`
}

// Context is a result laid out for the answering model: the graph sections
// (system message) and the numbered passages (in the answer prompt).
type Context struct {
	Graph    string   `json:"graph"`
	Sources  []Source `json:"sources"`
	Question string   `json:"-"`
	// ResponseType is the answer shape the prompt asks for.
	ResponseType string `json:"-"`
	// Tokens is the size of the whole prompt: both messages.
	Tokens int `json:"tokens"`
}

// graphPreamble opens the system message that carries the graph sections.
const graphPreamble = "Knowledge graph context for the question below. Use it together with the numbered sources; cite only the numbered sources, as [n].\n\n"

// Prompt is the answer request: the rendered answer prompt with the sources.
func (c *Context) Prompt() (string, error) {
	ps := make([]prompts.Source, len(c.Sources))
	for i, s := range c.Sources {
		ps[i] = prompts.Source{ID: s.N, Title: sourceTitle(s), Text: s.Text}
	}
	return prompts.RenderAnswer(prompts.AnswerData{Question: c.Question, Sources: ps, ResponseType: c.ResponseType})
}

// System is the system message: the graph sections, or "" when there are none.
func (c *Context) System() string {
	if c.Graph == "" {
		return ""
	}
	return graphPreamble + c.Graph
}

// String is the context as --context-only prints it.
func (c *Context) String() string {
	var b strings.Builder
	if c.Graph != "" {
		b.WriteString(c.Graph)
	}
	if len(c.Sources) > 0 {
		b.WriteString("-----Sources-----\n")
		for _, s := range c.Sources {
			fmt.Fprintf(&b, "[%d] %s (chunk %d)\n%s\n\n", s.N, sourceTitle(s), s.Index, strings.TrimSpace(s.Text))
		}
	}
	return b.String()
}

func sourceTitle(s Source) string {
	switch {
	case s.DocTitle != "" && s.DocPath != "":
		return s.DocTitle + " — " + s.DocPath
	case s.DocPath != "":
		return s.DocPath
	}
	return s.DocTitle
}

// Assemble lays a result out within the budget: answer-format hint,
// logic-form steps, graph query rows, entities, relationships, facts, then as many passages as fit,
// the last one truncated if that lets it in. The whole prompt, as Prompt and
// System render it, never exceeds b.MaxTokens.
func Assemble(res *Result, tok TokenCounter, b Budget, responseType string) (*Context, error) {
	if b.MaxTokens <= 0 {
		b.MaxTokens = DefaultBudget().MaxTokens
	}
	if b.Steps <= 0 {
		b.Steps = DefaultBudget().Steps
	}
	c := &Context{Question: res.Question, ResponseType: responseType}
	fixed, err := c.Prompt()
	if err != nil {
		return nil, err
	}
	left := b.MaxTokens - tok.Count(fixed) - tok.Count(graphPreamble)
	if left <= 0 {
		return nil, fmt.Errorf("max context tokens %d: the question and instructions alone take %d", b.MaxTokens, b.MaxTokens-left)
	}
	var graph strings.Builder
	used := 0
	// render lays out a header and as many lines as fit in share*left tokens.
	render := func(title string, lines []string, share float64) (string, int) {
		if len(lines) == 0 {
			return "", 0
		}
		limit := int(share * float64(left))
		header := "-----" + title + "-----\n"
		n := tok.Count(header) + 1
		if n >= limit {
			return "", 0
		}
		var sb strings.Builder
		sb.WriteString(header)
		for _, l := range lines {
			t := tok.Count(l) + 1
			if n+t > limit {
				break
			}
			sb.WriteString(l)
			sb.WriteByte('\n')
			n += t
		}
		if sb.Len() == len(header) {
			return "", 0
		}
		sb.WriteByte('\n')
		return sb.String(), n
	}
	section := func(title string, lines []string, share float64) {
		s, n := render(title, lines, share)
		graph.WriteString(s)
		used += n
	}
	if res.Hint != "" {
		section("Answer format", []string{res.Hint}, 1)
	}
	steps := func(kept int) string {
		s, _ := render("Reasoning steps", logicLines(res, kept), b.Steps)
		return s
	}
	stepsAt := graph.Len()
	section("Reasoning steps", logicLines(res, len(res.Passages)), b.Steps)
	stepsEnd := graph.Len()
	if res.Cypher != nil {
		lines := []string{"Query: " + strings.Join(strings.Fields(res.Cypher.Query), " ")}
		for _, row := range res.Cypher.Rows {
			j, err := json.Marshal(row)
			if err == nil {
				lines = append(lines, string(j))
			}
		}
		section("Graph query results", lines, b.Cypher)
	}
	var lines []string
	for _, e := range res.Entities {
		l := "- " + e.Name
		if e.Type != "" {
			l += " (" + e.Type + ")"
		}
		if d := oneLine(e.Description); d != "" {
			l += ": " + d
		}
		lines = append(lines, l)
	}
	section("Entities", lines, b.Entities)
	section("Relationships", relationLines(res.Relations), b.Relations)
	section("Knowledge graph facts", relationLines(res.Facts), b.Facts)
	c.Graph = graph.String()

	// Passages get the rest, measured as the answer template lays them out.
	room := left - used
	for i, p := range res.Passages {
		s := Source{N: i + 1, ChunkID: p.ChunkID, DocPath: p.DocPath, DocTitle: p.DocTitle, Index: p.Index, Text: strings.TrimSpace(p.Text)}
		head := fmt.Sprintf("[%d] %s\n", s.N, sourceTitle(s))
		t := tok.Count(head) + tok.Count(s.Text) + 2
		if t > room {
			// Cut the passage to fit if a useful part of it does.
			keep := room - tok.Count(head) - 2
			if keep < 32 {
				break
			}
			s.Text, s.Truncated = tok.Truncate(s.Text, keep), true
			t = tok.Count(head) + tok.Count(s.Text) + 2
		}
		c.Sources = append(c.Sources, s)
		room -= t
		if s.Truncated {
			break
		}
	}
	// Steps citing passages that did not fit say so instead.
	fixSteps := func() {
		if res.Logic != nil && len(c.Sources) < len(res.Passages) {
			s := steps(len(c.Sources))
			c.Graph = c.Graph[:stepsAt] + s + c.Graph[stepsEnd:]
			stepsEnd = stepsAt + len(s)
		}
	}
	fixSteps()
	// The estimate above adds pieces; the rendered prompt is what counts.
	for {
		prompt, err := c.Prompt()
		if err != nil {
			return nil, err
		}
		c.Tokens = tok.Count(prompt) + tok.Count(c.System())
		if c.Tokens <= b.MaxTokens || len(c.Sources) == 0 {
			break
		}
		c.Sources = c.Sources[:len(c.Sources)-1]
		fixSteps()
	}
	if c.Tokens > b.MaxTokens {
		c.Graph = ""
		prompt, _ := c.Prompt()
		c.Tokens = tok.Count(prompt)
	}
	return c, nil
}

func relationLines(rels []RelationInfo) []string {
	var lines []string
	for _, r := range rels {
		l := "- " + r.Source + " -- " + r.Target
		if r.Type != "" {
			l = "- " + r.Source + " -[" + r.Type + "]-> " + r.Target
		}
		if k := oneLine(r.Keywords); k != "" {
			l += " (" + k + ")"
		}
		if d := oneLine(r.Description); d != "" {
			l += ": " + d
		}
		lines = append(lines, l)
	}
	return lines
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
