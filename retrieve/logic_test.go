package retrieve_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

func TestParseLogicPlan(t *testing.T) {
	tests := []struct {
		name    string
		answer  string
		max     int
		ops     string // operators of the steps, space-separated
		cut     int
		wantErr string
	}{
		{name: "object", answer: `{"steps": [{"question": "Who directed it?", "op": "follow_relation", "args": {"entity": "Won In The Clouds", "relation": "directed by"}},
			{"question": "Where was he born?", "op": "entity_chunks", "args": {"entity": "$1", "about": "born"}}]}`, ops: "follow_relation entity_chunks"},
		{name: "bare list, fenced", answer: "```json\n[{\"op\": \"search_text\", \"args\": {\"query\": \"Unix 1969\"}}]\n```", ops: "search_text"},
		{name: "prose around, numbers as values", answer: `Plan: {"steps": [{"op": "compute", "args": {"op": "diff", "values": [1992, "1906"]}}]} done`, ops: "compute"},
		{name: "optional argument left out", answer: `{"steps": [{"op": "follow_relation", "args": {"entity": "Unix", "relation": null}}]}`, ops: "follow_relation"},
		{name: "cut at the step cap", answer: `{"steps": [` + strings.Repeat(`{"op": "lookup_entity", "args": {"name": "Go"}},`, 11) + `{"op": "lookup_entity", "args": {"name": "Go"}}]}`,
			max: 8, ops: strings.TrimSpace(strings.Repeat("lookup_entity ", 8)), cut: 4},
		{name: "malformed JSON", answer: `{"steps": [{"op": "lookup_entity", "args": {"name": "Go"}`, wantErr: "malformed JSON"},
		{name: "no JSON", answer: "First find the director, then his birthplace.", wantErr: "no JSON"},
		{name: "no steps", answer: `{"steps": []}`, wantErr: "no steps"},
		{name: "unknown operator", answer: `{"steps": [{"op": "run_cypher", "args": {"query": "MATCH (n) RETURN n"}}]}`, wantErr: `step 1: unknown operator "run_cypher"`},
		{name: "unknown argument", answer: `{"steps": [{"op": "lookup_entity", "args": {"name": "Go", "limit": "3"}}]}`, wantErr: `lookup_entity has no argument "limit"`},
		{name: "missing argument", answer: `{"steps": [{"op": "entity_chunks", "args": {"about": "born"}}]}`, wantErr: "entity_chunks needs argument entity"},
		{name: "argument of the wrong type", answer: `{"steps": [{"op": "lookup_entity", "args": {"name": {"first": "Ken"}}}]}`, wantErr: "want a string"},
		{name: "forward reference", answer: `{"steps": [{"op": "lookup_entity", "args": {"name": "$2"}}, {"op": "lookup_entity", "args": {"name": "Go"}}]}`, wantErr: "step 1 refers to $2"},
		{name: "self reference", answer: `{"steps": [{"op": "lookup_entity", "args": {"name": "Go"}}, {"op": "entity_chunks", "args": {"entity": "$2"}}]}`, wantErr: "step 2 refers to $2"},
		{name: "unknown compute op", answer: `{"steps": [{"op": "compute", "args": {"op": "average", "values": ["1", "2"]}}]}`, wantErr: `compute op "average"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := retrieve.ParseLogicPlan(tt.answer, tt.max)
			if tt.wantErr != "" {
				if !errors.Is(err, retrieve.ErrUnusablePlan) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseLogicPlan error = %v; want ErrUnusablePlan mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, s := range plan.Steps {
				ops = append(ops, s.Op)
			}
			if strings.Join(ops, " ") != tt.ops || plan.Cut != tt.cut {
				t.Errorf("ops %v cut %d; want %s cut %d", ops, plan.Cut, tt.ops, tt.cut)
			}
		})
	}
	plan, err := retrieve.ParseLogicPlan(`{"steps": [{"op": "compute", "args": {"op": "diff", "values": [1992, "1906"]}}]}`, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := plan.Steps[0].Args["values"].([]string); strings.Join(got, ",") != "1992,1906" {
		t.Errorf("values %q", got)
	}
}

// corpusStore ingests testdata/corpus offline into a new SQLite store.
func corpusStore(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, p := offlineStore(t)
	dir, _ := filepath.Abs("../testdata/corpus")
	if sum, err := p.Ingest(ctx, []string{dir}, pipeline.Options{}); err != nil || sum.Failed != 0 {
		t.Fatalf("ingest: %+v %v", sum, err)
	}
	return st
}

// logicServer answers the decomposition with plan, the pre-check with
// check, the keyword request with keywords and anything else with answer.
func logicServer(t *testing.T, plan, check, answer string) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		switch last := r.Last(); {
		case strings.Contains(last, "Break the question into steps"):
			return llmtest.Reply{Content: plan}
		case strings.Contains(last, "Answer with exactly one word, YES or NO"):
			return llmtest.Reply{Content: check}
		case strings.Contains(last, "high_level_keywords"):
			return llmtest.Reply{Content: `{"high_level_keywords": ["birth"], "low_level_keywords": ["Ada Lovelace", "Charles Babbage"]}`}
		}
		return llmtest.Reply{Content: answer}
	})
	t.Cleanup(srv.Close)
	return srv
}

func logicRetriever(t *testing.T, st store.Store, srv *llmtest.Server) *retrieve.Retriever {
	t.Helper()
	r, _ := logicModel(t, st, srv)
	return r
}

func logicModel(t *testing.T, st store.Store, srv *llmtest.Server) (*retrieve.Retriever, *llm.Client) {
	t.Helper()
	model, err := llm.New("openai:test-model", llm.WithAPIKey("sk-test"), llm.WithBaseURL(srv.OpenAIBaseURL()), llm.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	return retrieve.New(st, embedstore.NewHash(), retrieve.WithModel(model)), model
}

func answerSetup(t *testing.T) retrieve.AnswerSetup {
	t.Helper()
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	return retrieve.AnswerSetup{Tokens: tok, Budget: retrieve.DefaultBudget()}
}

// agePlan computes how much older Babbage was than Lovelace from what
// the store holds: Lovelace's birth date in her entity's description,
// Babbage's in his own passage.
const agePlan = `{"steps": [
 {"question": "When was Ada Lovelace born?", "op": "lookup_entity", "args": {"name": "Augusta Ada King, Countess of Lovelace"}},
 {"question": "When was Charles Babbage born?", "op": "entity_chunks", "args": {"entity": "Charles Babbage", "about": "Lucasian Professorship Difference Engine"}},
 {"question": "How many years apart?", "op": "compute", "args": {"op": "diff", "values": ["$1", "$2"], "near": "born"}}
]}`

const ageQuestion = "How much older was Charles Babbage than Ada Lovelace?"

func TestLogicFormRetrieval(t *testing.T) {
	st := corpusStore(t)
	srv := logicServer(t, agePlan, "YES", "")
	r := logicRetriever(t, st, srv)
	res, err := r.Retrieve(context.Background(), ageQuestion, retrieve.ModeLogic)
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Logic
	if tr == nil || tr.Error != "" || len(tr.Steps) != 3 {
		t.Fatalf("trace %+v", tr)
	}
	if it := tr.Steps[0].Items; len(it) != 1 || it[0].Kind != "entity" || !strings.Contains(it[0].Text, "10 December 1815") {
		t.Errorf("step 1 items %+v", it)
	}
	if it := tr.Steps[1].Items; len(it) == 0 || it[0].Kind != "passage" || it[0].Name != "Charles Babbage" {
		t.Errorf("step 2 items %+v; want Babbage's own passage first", it)
	}
	// 10 December 1815 minus 26 December 1791: 23 whole years.
	if it := tr.Steps[2].Items; len(it) != 1 || it[0].Kind != "value" || it[0].Name != "23 years" || !strings.Contains(it[0].Text, "26 December 1791") {
		t.Errorf("step 3 items %+v", it)
	}
	if len(res.Passages) == 0 || !strings.HasSuffix(res.Passages[0].DocPath, "charles-babbage.md") || res.Passages[0].Text == "" {
		t.Errorf("passages %+v", res.Passages)
	}
	req := srv.Requests()
	if len(req) != 1 || !req[0].JSONMode || !strings.Contains(req[0].Last(), "follow_relation(entity, relation?)") || !strings.Contains(req[0].Last(), ageQuestion) {
		t.Fatalf("requests %+v; want one JSON-mode decomposition listing the operators", req)
	}

	// The history is the context: steps, their results, the passages cited by number.
	c, err := retrieve.Assemble(res, answerSetup(t).Tokens, retrieve.DefaultBudget(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-----Reasoning steps-----", "Step 1: When was Ada Lovelace born? [lookup_entity(name: Augusta Ada King, Countess of Lovelace)]",
		"  passage [1] Charles Babbage", "Step 3: How many years apart?", "= 23 years"} {
		if !strings.Contains(c.Graph, want) {
			t.Errorf("context lacks %q:\n%s", want, c.Graph)
		}
	}
	if len(c.Sources) == 0 || c.Sources[0].DocTitle != "Charles Babbage" {
		t.Errorf("sources %+v", c.Sources)
	}
	// A budget that leaves out passages says so rather than cite a missing source.
	small, err := retrieve.Assemble(res, answerSetup(t).Tokens, retrieve.Budget{MaxTokens: 420, Steps: 0.6}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(small.Sources) >= len(res.Passages) || !strings.Contains(small.Graph, "left out of the context") {
		t.Errorf("with %d of %d sources the steps read:\n%s", len(small.Sources), len(res.Passages), small.Graph)
	}
	if strings.Contains(small.Graph, "passage ["+string(rune('1'+len(small.Sources)))+"]") {
		t.Errorf("steps cite a passage not in the sources:\n%s", small.Graph)
	}
}

func TestLogicFormLoopsAndEmptySteps(t *testing.T) {
	st := corpusStore(t)
	plan := `{"steps": [
 {"question": "Who is Ken Thompson?", "op": "lookup_entity", "args": {"name": "Ken Thompson"}},
 {"question": "Who is Ken Thompson, again?", "op": "lookup_entity", "args": {"name": "ken  thompson"}},
 {"question": "Who is Zorblax?", "op": "lookup_entity", "args": {"name": "Zorblax Quuxington"}},
 {"question": "Where does Zorblax appear?", "op": "entity_chunks", "args": {"entity": "$3"}},
 {"question": "Whom did Thompson marry?", "op": "follow_relation", "args": {"entity": "Ken Thompson", "relation": "married spouse"}},
 {"question": "How many people?", "op": "compute", "args": {"op": "count", "values": ["$1", "$3"]}}
]}`
	srv := logicServer(t, plan, "YES", "")
	r := logicRetriever(t, st, srv)
	res, err := r.Retrieve(context.Background(), "Whom did Ken Thompson marry?", retrieve.ModeLogic)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Logic.Steps
	if len(s) != 6 {
		t.Fatalf("steps %+v", s)
	}
	if s[1].Same != 1 || s[1].Note != "repeats step 1" || len(s[1].Items) != len(s[0].Items) {
		t.Errorf("a repeated step (same operator, same arguments once normalised) is not run again: %+v", s[1])
	}
	if len(s[2].Items) != 0 || !strings.Contains(s[2].Note, `"Zorblax Quuxington"`) {
		t.Errorf("step 3 %+v; want nothing found, named", s[2])
	}
	if len(s[3].Items) != 0 || s[3].Note != "step 3 found nothing to go on" {
		t.Errorf("step 4 %+v; a step on nothing does not run", s[3])
	}
	if len(s[4].Items) != 0 || !strings.Contains(s[4].Note, `no relation of Ken Thompson matches "married spouse"`) {
		t.Errorf("step 5 %+v", s[4])
	}
	if it := s[5].Items; len(it) != 1 || it[0].Name != "1" || !strings.Contains(s[5].Note, "nothing to read from $3") {
		t.Errorf("step 6 %+v: count of what step 1 found; step 3 found nothing", s[5])
	}
	if !res.Logic.Found() {
		t.Error("step 1 found something")
	}

	// A plan of only fruitless steps finds nothing.
	srv2 := logicServer(t, `{"steps": [{"op": "search_text", "args": {"query": "zzzqx wwwqy"}}]}`, "YES", "")
	res, err = logicRetriever(t, st, srv2).Retrieve(context.Background(), "zzzqx?", retrieve.ModeLogic)
	if err != nil {
		t.Fatal(err)
	}
	if res.Logic.Found() || res.Logic.Steps[0].Note != "nothing found" || len(res.Passages) != 0 {
		t.Errorf("trace %+v passages %d", res.Logic, len(res.Passages))
	}
}

func TestLogicNeedsAModel(t *testing.T) {
	st := corpusStore(t)
	_, err := retrieve.New(st, embedstore.NewHash()).Retrieve(context.Background(), ageQuestion, retrieve.ModeLogic)
	if !errors.Is(err, retrieve.ErrNeedsModel) || !strings.Contains(err.Error(), "--llm") {
		t.Fatalf("error %v; want one naming --llm", err)
	}
}

func TestPrecheckAndFallBack(t *testing.T) {
	st := corpusStore(t)
	const answer = "Babbage was 23 years older [1]."
	tests := []struct {
		name       string
		plan       string
		check      string
		answeredBy string
		reason     string
		asked      bool
		requests   string // kinds of the requests, in order
	}{
		{"pre-check yes", agePlan, "YES", "logic", "", true, "plan check answer"},
		{"pre-check yes, decorated", agePlan, "**Yes.**", "logic", "", true, "plan check answer"},
		{"pre-check no", agePlan, "NO", "mix", "insufficient", true, "plan check keywords answer"},
		{"pre-check neither", agePlan, "Probably, the steps give both dates.", "mix", "is not yes or no", true, "plan check keywords answer"},
		{"malformed plan", `{"steps": [`, "YES", "mix", "malformed JSON", false, "plan keywords answer"},
		{"unknown operator", `{"steps": [{"op": "ask_wikipedia", "args": {"q": "Babbage"}}]}`, "YES", "mix", "unknown operator", false, "plan keywords answer"},
		{"nothing found", `{"steps": [{"op": "lookup_entity", "args": {"name": "Zorblax Quuxington"}}]}`, "YES", "mix", "found nothing", false, "plan keywords answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := logicServer(t, tt.plan, tt.check, answer)
			srv.SetChunkSize(4)
			r, model := logicModel(t, st, srv)
			out, err := r.PrepareLogic(context.Background(), ageQuestion, answerSetup(t))
			if err != nil {
				t.Fatal(err)
			}
			if out.AnsweredBy != tt.answeredBy || !strings.Contains(out.Reason, tt.reason) || (out.Precheck != nil) != tt.asked {
				t.Fatalf("answered by %s (%q), pre-check %+v", out.AnsweredBy, out.Reason, out.Precheck)
			}
			if out.Result.Mode != tt.answeredBy || out.Logic.Logic == nil {
				t.Errorf("result mode %s", out.Result.Mode)
			}
			var w chunkWriter
			a, err := retrieve.Answer(context.Background(), model, out.Context, &w)
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != answer || w.String() != answer || w.writes < 5 {
				t.Errorf("answer %q streamed %q in %d writes", a.Text, w.String(), w.writes)
			}
			var kinds []string
			for _, q := range srv.Requests() {
				switch last := q.Last(); {
				case strings.Contains(last, "Break the question"):
					kinds = append(kinds, "plan")
				case strings.Contains(last, "YES or NO"):
					kinds = append(kinds, "check")
					if !strings.Contains(last, "Reasoning steps") || !strings.Contains(last, "Step 3") {
						t.Errorf("the pre-check does not see the steps:\n%s", last)
					}
				case strings.Contains(last, "high_level_keywords"):
					kinds = append(kinds, "keywords")
				default:
					kinds = append(kinds, "answer")
					if !q.Stream {
						t.Error("the answer was not streamed")
					}
					if tt.answeredBy == "logic" && !strings.Contains(q.Messages[0].Content, "Reasoning steps") {
						t.Errorf("a logic answer without the steps in its context: %+v", q.Messages)
					}
				}
			}
			if strings.Join(kinds, " ") != tt.requests {
				t.Errorf("requests %v; want %s", kinds, tt.requests)
			}
		})
	}
}
