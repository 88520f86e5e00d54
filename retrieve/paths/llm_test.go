package paths

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
)

func TestParseSelection(t *testing.T) {
	tests := []struct {
		in      string
		n       int
		want    []int
		invalid int
		err     bool
	}{
		{"3, 1, 7", 8, []int{2, 0, 6}, 0, false},
		{" [2,2, 5] ", 5, []int{1, 4}, 0, false}, // repeat dropped
		{"1, 9, 0", 3, []int{0}, 2, false},       // out of range counted
		{"NONE", 3, nil, 0, false},
		{"none.", 3, nil, 0, false},
		{"2.", 3, []int{1}, 0, false},
		{"Paths 1 and 2", 3, nil, 0, true},
		{"1; 2", 3, nil, 0, true},
		{"", 3, nil, 0, true},
		{"[1, two]", 3, nil, 0, true},
	}
	for _, tt := range tests {
		got, invalid, err := ParseSelection(tt.in, tt.n)
		if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) || invalid != tt.invalid {
			t.Errorf("ParseSelection(%q, %d) = %v, %d, %v; want %v, %d, err %v", tt.in, tt.n, got, invalid, err, tt.want, tt.invalid, tt.err)
		}
		if err != nil && !errors.Is(err, ErrUnparsable) {
			t.Errorf("ParseSelection(%q): error %v is not ErrUnparsable", tt.in, err)
		}
	}
}

func testModel(t *testing.T, respond llmtest.Responder) (*llm.Client, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(respond)
	t.Cleanup(srv.Close)
	c, err := llm.New("openai:test-model", llm.WithBaseURL(srv.OpenAIBaseURL()), llm.WithAPIKey("sk-test"), llm.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

func TestLLMScorer(t *testing.T) {
	ctx := context.Background()
	texts := []string{"has genre", "directed by", "release year", "starred actors"}
	q := "who directed [Kismet]"

	// The model picks path 2 then 4 of the list it was shown, which the
	// fill-in scorer ordered (directed by, then the zero-score rest in order).
	model, srv := testModel(t, llmtest.Fixed("2, 4"))
	s := NewLLM(model, NewBM25(), 0)
	sc, err := s.Score(ctx, q, texts)
	if err != nil {
		t.Fatal(err)
	}
	prompt := srv.Requests()[0].Last()
	for _, want := range []string{"Question:\nwho directed [Kismet]", "1. directed by", "2. has genre", "4. starred actors"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	order := rankOf(sc)
	if got := []string{texts[order[0]], texts[order[1]], texts[order[2]], texts[order[3]]}; !reflect.DeepEqual(got, []string{"has genre", "starred actors", "directed by", "release year"}) {
		t.Errorf("ranking %v: the model's picks first, in its order, then the fill-in order", got)
	}
	if st := s.Stats(); st.Calls != 1 || st.FilledIn != 1 || st.Unparsable != 0 {
		t.Errorf("stats %+v", st)
	}

	// An unusable answer leaves the fill-in ranking whole.
	model, _ = testModel(t, llmtest.Fixed("I think the second path is best."))
	s = NewLLM(model, NewBM25(), 0)
	sc, err = s.Score(ctx, q, texts)
	if err != nil {
		t.Fatal(err)
	}
	if texts[rankOf(sc)[0]] != "directed by" || s.Stats().Unparsable != 1 {
		t.Errorf("fallback ranking %v, stats %+v", sc, s.Stats())
	}

	// Only the fill-in's best maxPaths go to the model.
	model, srv = testModel(t, llmtest.Fixed("1"))
	if _, err := NewLLM(model, NewBM25(), 2).Score(ctx, q, texts); err != nil {
		t.Fatal(err)
	}
	if p := srv.Requests()[0].Last(); strings.Contains(p, "3. ") {
		t.Errorf("more than 2 paths sent:\n%s", p)
	}
}

func TestLLMScorerInBeamSearch(t *testing.T) {
	model, srv := testModel(t, llmtest.Fixed("1"))
	r := newRetriever(t, movieKG(t), "pf=beam:llm,pr=llm", WithLLM(model, 0), WithBeamWidth(1, 0), WithMaxHop(2))
	res := retrieve(t, r, "who directed the movies [Marlene Dietrich] acted in", "Marlene Dietrich")
	// Two beam steps and one refinement: three calls.
	if srv.Count() != 3 || len(res.Paths) != 2 {
		t.Errorf("%d model calls, %d paths", srv.Count(), len(res.Paths))
	}
}

func TestFIFilter(t *testing.T) {
	ctx := context.Background()
	model, srv := testModel(t, llmtest.Fixed("3, 1"))
	paths := []Path{
		{Text: "A -[r]-> B", Score: 10},
		{Text: "A -[r]-> C", Score: 9},
		{Text: "A -[r]-> D", Score: 8},
		{Text: "A -[r]-> E", Score: 1}, // below the coarse threshold
	}
	f := NewFI(model, 0.5, 0)
	high, extra, note, err := f.Filter(ctx, "q?", paths)
	if err != nil || note != "" {
		t.Fatal(err, note)
	}
	if !reflect.DeepEqual(texts(high), []string{"A -[r]-> B", "A -[r]-> D"}) || !reflect.DeepEqual(texts(extra), []string{"A -[r]-> C"}) {
		t.Errorf("high %q, additional %q", texts(high), texts(extra))
	}
	if p := srv.Requests()[0].Last(); strings.Contains(p, "A -[r]-> E") || strings.Contains(p, "most to least") {
		t.Errorf("fine filter prompt:\n%s", p)
	}

	model, _ = testModel(t, llmtest.Fixed("all of them"))
	high, extra, note, err = NewFI(model, 0.5, 2).Filter(ctx, "q?", paths)
	if err != nil || len(high) != 0 || len(extra) != 2 || note == "" {
		t.Errorf("unusable answer: high %v, additional %v, note %q, %v", texts(high), texts(extra), note, err)
	}

	prompt, err := AnswerPrompt("q?", paths[:1], paths[1:2])
	if err != nil {
		t.Fatal(err)
	}
	hi, add := strings.Index(prompt, "High priority paths:\nA -[r]-> B"), strings.Index(prompt, "Additional paths:\nA -[r]-> C")
	if hi < 0 || add < hi || !strings.HasSuffix(prompt, "Question: q?\n") {
		t.Errorf("answer prompt:\n%s", prompt)
	}
	plain, _ := AnswerPrompt("q?", paths[:2], nil)
	if strings.Contains(plain, "High priority") || !strings.Contains(plain, "A -[r]-> B\nA -[r]-> C\n") {
		t.Errorf("answer prompt without FI:\n%s", plain)
	}
}

func TestRetrieveWithFI(t *testing.T) {
	model, _ := testModel(t, llmtest.Fixed("1"))
	r := newRetriever(t, movieKG(t), "", WithLLM(model, 0), WithFI(0.5, 10))
	res := retrieve(t, r, "who directed the movies [Marlene Dietrich] acted in", "Marlene Dietrich")
	if len(res.Priority) != 1 || res.Priority[0].Text != res.Paths[0].Text || len(res.Additional) == 0 {
		t.Errorf("priority %q, additional %q", texts(res.Priority), texts(res.Additional))
	}
}
