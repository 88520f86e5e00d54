package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/splitter"
)

func TestAnswerModesNeedAModel(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--mode", "logic", "q"}, "--mode logic needs --llm"},
		{[]string{"--integrate", "logits", "q"}, "--integrate logits needs --llm"},
		{[]string{"--mode", "path", "--integrate", "logits", "q"}, "--integrate logits needs --llm"},
		{[]string{"--integrate", "logits", "--mode", "hybrid", "--llm", "openai:m", "q"}, "works with --mode mix or path, not hybrid"},
		{[]string{"--integrate", "logits", "--mode", "logic", "--llm", "openai:m", "q"}, "not logic"},
		{[]string{"--integrate", "softmax", "--llm", "openai:m", "q"}, `--integrate "softmax": unknown method`},
		{[]string{"--tau-g", "0.3", "q"}, "--tau-g is a threshold of --integrate logits"},
		{[]string{"--integrate", "logits", "--tau-l", "1.5", "--llm", "openai:m", "q"}, "--tau-l 1.5: must be between 0 and 1"},
		{[]string{"--integrate", "logits", "--response-type", "an essay", "--llm", "openai:m", "q"}, "--response-type and --integrate logits"},
	}
	for _, tt := range tests {
		out, errs, err := run(t, append([]string{"--store", db, "--config", ""}, tt.args...)...)
		if err == nil || !strings.Contains(errs, tt.want) || out != "" {
			t.Errorf("%v: error %v, stderr %q, stdout %q; want an error saying %q", tt.args, err, errs, out, tt.want)
		}
	}
	// eval refuses the same way.
	_, errs, err := run(t, "eval", "--config", "", "--dataset", t.TempDir(), "--mode", "mix,logic")
	if err == nil || !strings.Contains(errs, "--mode logic needs --llm") {
		t.Errorf("eval --mode logic offline: %v %q", err, errs)
	}
	_, errs, err = run(t, "eval", "--config", "", "--dataset", t.TempDir(), "--integrate", "logits")
	if err == nil || !strings.Contains(errs, "--integrate logits needs --llm") {
		t.Errorf("eval --integrate offline: %v %q", err, errs)
	}
}

// answerServer is the fake model for the answer-side modes: a plan for the
// decomposition, a verdict for the pre-check, keywords, and answers with
// token log-probabilities: GraphRAG's (the prompt with sources or paths)
// and the model alone's. Every answer token has log-probability lp.
func integrateServer(t *testing.T, plan, check, graphrag, alone string, lp float64, logprobs bool) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		text := graphrag
		switch requestKind(r) {
		case "plan":
			return llmtest.Reply{Content: plan}
		case "precheck":
			return llmtest.Reply{Content: check}
		case "keywords":
			return llmtest.Reply{Content: `{"high_level_keywords": ["programming language"], "low_level_keywords": ["Unix", "Google"]}`}
		case "llm_only":
			text = alone
		}
		if !logprobs {
			return llmtest.Reply{Content: text}
		}
		return llmtest.Reply{Tokens: llmtest.Tokens(text, lp)}
	})
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
	return srv
}

const (
	goQuestion = "Which programming language did the co-creator of Unix design at Google?"
	goPlan     = `{"steps": [
 {"question": "Who created Unix?", "op": "follow_relation", "args": {"entity": "Unix", "relation": "developed"}},
 {"question": "What did they design at Google?", "op": "entity_chunks", "args": {"entity": "$1", "about": "Google programming language"}}
]}`
)

func TestQueryLogicMode(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	for _, tt := range []struct {
		check, verdict string
		requests       int
	}{
		{"YES", "answered by the logic form (pre-check: yes)", 3},
		{"NO", "answered by mix: the pre-check found the logic-form context insufficient", 4},
	} {
		t.Run(tt.check, func(t *testing.T) {
			srv := integrateServer(t, goPlan, tt.check, "Go [1].", "", 0, false)
			srv.SetChunkSize(3)
			out, errs, err := run(t, "--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--mode", "logic", goQuestion)
			if err != nil {
				t.Fatalf("%v\n%s", err, errs)
			}
			for _, want := range []string{"logic form: 2 step(s)", "Step 1: Who created Unix? [follow_relation(entity: Unix; relation: developed)]",
				"Step 2: What did they design at Google?", "\n" + tt.verdict + "\n\nGo [1].\n\nSources:\n[1] "} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if srv.Count() != tt.requests {
				t.Errorf("%d requests, want %d", srv.Count(), tt.requests)
			}
			last := srv.Requests()[srv.Count()-1]
			if !last.Stream {
				t.Error("the answer did not stream")
			}
		})
	}

	integrateServer(t, goPlan, "YES", "Go [1].", "", 0, false)
	out, errs, err := run(t, "--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--mode", "logic", "--json", goQuestion)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	var doc struct {
		Mode       string `json:"mode"`
		Answer     string `json:"answer"`
		AnsweredBy string `json:"answered_by"`
		Precheck   struct {
			Supported bool `json:"supported"`
		} `json:"precheck"`
		Logic struct {
			Steps []struct {
				Op    string            `json:"op"`
				Items []json.RawMessage `json:"items"`
			} `json:"steps"`
		} `json:"logic"`
		Sources []json.RawMessage `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Mode != "logic" || doc.AnsweredBy != "logic" || !doc.Precheck.Supported || doc.Answer != "Go [1]." ||
		len(doc.Logic.Steps) != 2 || len(doc.Logic.Steps[1].Items) == 0 || len(doc.Sources) == 0 {
		t.Errorf("json %+v", doc)
	}
}

func TestQueryIntegrateMix(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	// GraphRAG says Go [1] with every token at probability 1; the model
	// alone says Go and "Limbo language" less surely (each token 0.9: Go
	// 0.9, the two-token Limbo language 0.81), below the default tau_L 1.
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Last(), "high_level_keywords") {
			return llmtest.Reply{Content: `{"high_level_keywords": ["language"], "low_level_keywords": ["Unix"]}`}
		}
		if strings.Contains(r.Last(), "from your own knowledge") {
			return llmtest.Reply{Tokens: llmtest.Tokens("Go\nLimbo language", math.Log(0.9))}
		}
		return llmtest.Reply{Tokens: llmtest.Tokens("- Go [1]", 0)}
	})
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")
	args := []string{"--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--integrate", "logits"}

	out, errs, err := run(t, append(args, goQuestion)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	if !strings.HasPrefix(out, "Go [1]  (retrieved, confidence 1.00)\n\nSources:\n[1] ") || strings.Contains(out, "Limbo") || errs != "" {
		t.Errorf("output:\n%s\nstderr: %s", out, errs)
	}
	for _, r := range srv.Requests() {
		if r.Stream || (!strings.Contains(r.Last(), "high_level_keywords") && !r.LogProbs) {
			t.Errorf("request %d: stream %v logprobs %v", r.N, r.Stream, r.LogProbs)
		}
	}
	if srv.Count() != 3 {
		t.Errorf("%d requests; want keywords, GraphRAG and LLM-only", srv.Count())
	}
	gPrompt := srv.Requests()[1].Last() + srv.Requests()[2].Last()
	if !strings.Contains(gPrompt, "every possible answer as a list, one answer per line") {
		t.Errorf("the GraphRAG prompt does not ask for a list:\n%s", gPrompt)
	}

	out, errs, err = run(t, append(args, "--tau-l", "0.8", "--json", goQuestion)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	var doc struct {
		Answer      string `json:"answer"`
		Integration struct {
			GraphRAG struct {
				LogProbs   bool    `json:"logprobs"`
				Threshold  float64 `json:"threshold"`
				Candidates []struct {
					Text       string  `json:"text"`
					Confidence float64 `json:"confidence"`
					Kept       bool    `json:"kept"`
					Cites      []int   `json:"cites"`
				} `json:"candidates"`
			} `json:"graphrag"`
			LLMOnly struct {
				Threshold  float64 `json:"threshold"`
				Candidates []struct {
					Text       string  `json:"text"`
					Confidence float64 `json:"confidence"`
					Kept       bool    `json:"kept"`
				} `json:"candidates"`
			} `json:"llm_only"`
			Final []struct {
				Text string `json:"text"`
				From string `json:"from"`
			} `json:"final"`
		} `json:"integration"`
		Sources []struct {
			N     int  `json:"n"`
			Cited bool `json:"cited"`
		} `json:"sources"`
		Passages []json.RawMessage `json:"passages"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	in := doc.Integration
	if doc.Answer != "Go [1]\nLimbo language" || len(in.Final) != 2 || in.Final[0].From != "both" || in.Final[1].From != "llm_only" {
		t.Errorf("answer %q final %+v", doc.Answer, in.Final)
	}
	if g := in.GraphRAG; !g.LogProbs || g.Threshold != 0.5 || len(g.Candidates) != 1 || g.Candidates[0].Confidence != 1 || !g.Candidates[0].Kept || g.Candidates[0].Cites[0] != 1 {
		t.Errorf("graphrag %+v", g)
	}
	if l := in.LLMOnly; l.Threshold != 0.8 || len(l.Candidates) != 2 || math.Abs(l.Candidates[1].Confidence-0.81) > 1e-9 || !l.Candidates[1].Kept || l.Candidates[1].Text != "Limbo language" {
		t.Errorf("llm_only %+v", l)
	}
	if len(doc.Sources) == 0 || !doc.Sources[0].Cited || len(doc.Passages) == 0 {
		t.Errorf("sources %+v", doc.Sources)
	}
}

func TestQueryIntegrateWithoutLogProbs(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	integrateServer(t, "", "", "Go [1]", "Go", 0, false)
	out, errs, err := run(t, "--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "--integrate", "logits", goQuestion)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	if strings.Count(errs, "no token log-probabilities") != 1 || !strings.Contains(errs, "GraphRAG's answer stands") {
		t.Errorf("stderr %q; want the fall-back said once", errs)
	}
	if !strings.HasPrefix(out, "Go [1]\n\nSources:\n[1] ") {
		t.Errorf("output:\n%s", out)
	}
}

func TestQueryIntegratePaths(t *testing.T) {
	db, _ := kgStore(t)
	integrateServer(t, "", "", "William Dieterle\nJosef von Sternberg", "Josef von Sternberg", 0, true)
	q := "who directed the movies [Marlene Dietrich] acted in"
	out, errs, err := run(t, "--store", db, "--llm", "openai:test-model", "--llm-cache", "off", "--mode", "path", "--integrate", "logits", q)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	for _, want := range []string{
		"Marlene Dietrich <-[starred_actors]- Kismet -[directed_by]-> William Dieterle",
		"\nAnswer:\nWilliam Dieterle     (retrieved, confidence 1.00)\n    from: kb.txt chunk 0\nJosef von Sternberg  (retrieved 1.00 and model alone 1.00)\n    from: kb.txt chunk 0\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, errs, err = run(t, "--store", db, "--llm", "openai:test-model", "--llm-cache", "off", "--mode", "path", "--integrate", "logits", "--json", q)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	var doc struct {
		Answer      string `json:"answer"`
		Integration struct {
			Final []struct {
				Text string `json:"text"`
			} `json:"final"`
		} `json:"integration"`
		CandidateChunks map[string][]string `json:"candidate_chunks"`
		Paths           []json.RawMessage   `json:"paths"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Answer != "William Dieterle\nJosef von Sternberg" || len(doc.CandidateChunks["William Dieterle"]) != 1 || len(doc.Paths) == 0 {
		t.Errorf("json %+v", doc)
	}
}

// metaqaDir writes a MetaQA directory: pathKB as kb.txt and two 1-hop questions.
func metaqaDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "1-hop"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "kb.txt"), []byte(pathKB), 0o644)
	os.WriteFile(filepath.Join(dir, "1-hop", "qa_dev.txt"), []byte("who directed [Kismet]\tWilliam Dieterle\nwhich movies did [Bette Davis] act in\tJuarez\n"), 0o644)
	return dir
}

// TestEvalComparesTheAnswerMethods runs mix, logic and mix+logits on a
// passage set and on MetaQA in one run, as `query eval` does with a real
// OpenAI-compatible server.
func TestEvalComparesTheAnswerMethods(t *testing.T) {
	answers := map[string]string{
		"Won In The Clouds": "Melbourne", "The Lone Prairie": "Los Angeles", // right, wrong
		"Kismet": "William Dieterle", "Bette Davis": "Juarez",
	}
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		last := r.Last()
		switch {
		case strings.Contains(last, "Break the question into steps"):
			if strings.Contains(last, "Lone Prairie") {
				return llmtest.Reply{Content: "not a plan"}
			}
			return llmtest.Reply{Content: `{"steps": [{"question": "What is the film?", "op": "search_text", "args": {"query": "Won In The Clouds director"}}]}`}
		case strings.Contains(last, "YES or NO"):
			return llmtest.Reply{Content: "YES"}
		case strings.Contains(last, "high_level_keywords"):
			return llmtest.Reply{Content: `{"high_level_keywords": ["director"], "low_level_keywords": ["film"]}`}
		}
		q := last[strings.LastIndex(last, "Question:"):]
		for k, a := range answers {
			if strings.Contains(q, k) {
				if strings.Contains(last, "own knowledge") {
					return llmtest.Reply{Tokens: llmtest.Tokens("I don't know", 0)}
				}
				return llmtest.Reply{Tokens: llmtest.Tokens(a, 0)}
			}
		}
		return llmtest.Reply{Content: "I don't know"}
	})
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL())
	t.Setenv("OPENAI_API_KEY", "sk-test-not-real")

	reps, errs := evalReports(t, "--dataset", filmSet(t), "--metaqa", metaqaDir(t), "--hops", "1",
		"--mode", "mix,logic", "--integrate", "logits", "--llm", "openai:test-model", "--llm-cache", "off")
	for _, name := range []string{"films/mix", "films/logic", "films/mix+logits", "metaqa-1hop/mix", "metaqa-1hop/logic", "metaqa-1hop/mix+logits"} {
		r, ok := reps[name]
		if !ok {
			t.Fatalf("no report %s in %v\n%s", name, reps, errs)
		}
		if r.Answered != 2 || r.Questions != 2 {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if r := reps["films/mix+logits"]; r.EM != 50 || r.Hit != 50 || r.Recall[5] <= 0 {
		t.Errorf("films/mix+logits %+v; want Melbourne right, Los Angeles wrong", r)
	}
	if r := reps["metaqa-1hop/mix+logits"]; r.EM != 100 || r.Recall != nil {
		t.Errorf("metaqa-1hop/mix+logits %+v; want both right and no recall (no gold passages)", r)
	}
	if r := reps["films/logic"]; !strings.Contains(r.Note, "logic form answered 1 of 2; mix 1 (pre-check no 0, plan unusable 1") {
		t.Errorf("films/logic note %q", r.Note)
	}
}

// TestRequestsPerMode records what each answering mode sends for one
// question on testdata/corpus: how many requests, of which kind, and their
// prompt sizes in cl100k tokens (message text only; OpenAI adds about 4
// tokens a message). `go test ./cmd/query -run RequestsPerMode -v` prints
// the table the README quotes.
func TestRequestsPerMode(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := kgStore(t)
	tests := []struct {
		name  string
		check string
		plan  string
		args  []string
		kinds string
	}{
		{"mix", "", "", nil, "keywords answer"},
		{"mix --integrate logits", "", "", []string{"--integrate", "logits"}, "keywords graphrag llm_only"},
		{"path (KG store)", "", "", []string{"--mode", "path"}, "answer"},
		{"path --integrate logits (KG store)", "", "", []string{"--mode", "path", "--integrate", "logits"}, "graphrag llm_only"},
		{"logic, pre-check yes", "YES", goPlan, []string{"--mode", "logic"}, "plan precheck answer"},
		{"logic, pre-check no", "NO", goPlan, []string{"--mode", "logic"}, "plan precheck keywords answer"},
		{"logic, unusable plan", "YES", "no plan", []string{"--mode", "logic"}, "plan keywords answer"},
	}
	var table []string
	for _, tt := range tests {
		srv := integrateServer(t, tt.plan, tt.check, "Go [1]", "Go", 0, true)
		store := db
		q := goQuestion
		if strings.Contains(tt.name, "KG store") {
			store, q = kb, "who directed the movies [Marlene Dietrich] acted in"
		}
		if _, errs, err := run(t, append([]string{"--store", store, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off"}, append(tt.args, q)...)...); err != nil {
			t.Fatalf("%s: %v\n%s", tt.name, err, errs)
		}
		// The GraphRAG and LLM-only requests go out together: list them in
		// a fixed order.
		reqs := srv.Requests()
		order := "plan precheck keywords graphrag llm_only answer"
		sort.SliceStable(reqs, func(i, j int) bool {
			return strings.Index(order, requestKind(reqs[i])) < strings.Index(order, requestKind(reqs[j]))
		})
		var kinds, sizes []string
		total := 0
		for _, r := range reqs {
			kind := requestKind(r)
			n := 0
			for _, m := range r.Messages {
				n += tok.Count(m.Content)
			}
			total += n
			kinds = append(kinds, kind)
			sizes = append(sizes, fmt.Sprintf("%s %d", kind, n))
		}
		if strings.Join(kinds, " ") != tt.kinds {
			t.Errorf("%s: requests %v; want %s", tt.name, kinds, tt.kinds)
		}
		table = append(table, fmt.Sprintf("| %s | %d | %s | %d |", tt.name, len(kinds), strings.Join(sizes, ", "), total))
	}
	t.Logf("one question, testdata/corpus, --max-context-tokens 8000:\n| mode | requests | prompt tokens per request | total prompt tokens |\n|---|---|---|---|\n%s", strings.Join(table, "\n"))
}

// requestKind tells the requests of the answer-side modes apart by their prompts.
func requestKind(r llmtest.Request) string {
	switch last := r.Last(); {
	case strings.Contains(last, "Break the question into steps"):
		return "plan"
	case strings.Contains(last, "YES or NO"):
		return "precheck"
	case strings.Contains(last, "high_level_keywords"):
		return "keywords"
	case strings.Contains(last, "from your own knowledge"):
		return "llm_only"
	case r.LogProbs:
		return "graphrag"
	}
	return "answer"
}
