package retrieve_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/splitter"
)

// fakeModel starts the fake chat server and returns langchaingo's real
// OpenAI client pointed at it.
func fakeModel(t *testing.T, respond llmtest.Responder) (llms.Model, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(respond)
	t.Cleanup(srv.Close)
	m, err := openai.New(openai.WithBaseURL(srv.OpenAIBaseURL()), openai.WithToken("test-key"), openai.WithModel("test-model"))
	if err != nil {
		t.Fatal(err)
	}
	return m, srv
}

func TestParseKeywords(t *testing.T) {
	tests := []struct {
		name      string
		answer    string
		high, low string
		ok        bool
	}{
		{"plain", `{"high_level_keywords": ["film direction"], "low_level_keywords": ["Won In The Clouds", "director"]}`,
			"[film direction]", "[Won In The Clouds director]", true},
		{"fenced", "```json\n{\"high_level_keywords\": [\"birthplace\"], \"low_level_keywords\": [\"Harold Fairfax\"]}\n```",
			"[birthplace]", "[Harold Fairfax]", true},
		{"prose around", `Sure! Here they are: {"high_level_keywords": ["a", "A", " b "], "low_level_keywords": []} Hope that helps.`,
			"[a b]", "[]", true},
		{"comma string", `{"high_level_keywords": "war, peace", "low_level_keywords": "Tolstoy"}`,
			"[war peace]", "[Tolstoy]", true},
		{"only one level", `{"low_level_keywords": ["Rhine"]}`, "[]", "[Rhine]", true},
		{"empty lists", `{"high_level_keywords": [], "low_level_keywords": []}`, "", "", false},
		{"wrong keys", `{"keywords": ["x"]}`, "", "", false},
		{"broken json", `{"high_level_keywords": ["x"`, "", "", false},
		{"no json", `I cannot help with that.`, "", "", false},
		{"numbers only", `{"high_level_keywords": [1, 2], "low_level_keywords": [null]}`, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kw, err := retrieve.ParseKeywords(tt.answer)
			if !tt.ok {
				if !errors.Is(err, retrieve.ErrUnusableKeywords) {
					t.Fatalf("ParseKeywords(%q) = %+v, %v; want ErrUnusableKeywords", tt.answer, kw, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseKeywords: %v", err)
			}
			if got := fmtList(kw.High); got != tt.high {
				t.Errorf("high = %s, want %s", got, tt.high)
			}
			if got := fmtList(kw.Low); got != tt.low {
				t.Errorf("low = %s, want %s", got, tt.low)
			}
			if kw.Source != "llm" {
				t.Errorf("source = %q", kw.Source)
			}
		})
	}
}

func fmtList(l []string) string { return "[" + strings.Join(l, " ") + "]" }

func TestExtractKeywordsUsesTheModel(t *testing.T) {
	model, srv := fakeModel(t, llmtest.Fixed(`{"high_level_keywords": ["birthplace of film directors"], "low_level_keywords": ["Won In The Clouds"]}`))
	kw, err := retrieve.ExtractKeywords(context.Background(), model, ner.NewOffline(), filmQuestion)
	if err != nil {
		t.Fatal(err)
	}
	if kw.Source != "llm" || fmtList(kw.Low) != "[Won In The Clouds]" || fmtList(kw.High) != "[birthplace of film directors]" {
		t.Errorf("keywords = %+v", kw)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].JSONMode || !strings.Contains(reqs[0].Last(), filmQuestion) {
		t.Errorf("requests = %+v; want one JSON-mode request carrying the question", reqs)
	}
}

func TestExtractKeywordsFallsBack(t *testing.T) {
	offline := retrieve.OfflineKeywords(ner.NewOffline(), filmQuestion)
	if offline.Source != "offline" || !strings.Contains(fmtList(offline.Low), "Won In The Clouds") {
		t.Fatalf("offline keywords = %+v; want the film's name at the low level", offline)
	}
	for _, c := range []struct {
		name    string
		respond llmtest.Responder
		want    error
	}{
		{"unusable JSON", llmtest.Fixed(`{"high_level_keywords": "", "low_level_keywords": []}`), retrieve.ErrUnusableKeywords},
		{"prose", llmtest.Fixed("The keywords are director and clouds."), retrieve.ErrUnusableKeywords},
		{"server error", func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Status: http.StatusBadRequest, Error: "overloaded"}
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			model, _ := fakeModel(t, c.respond)
			kw, err := retrieve.ExtractKeywords(context.Background(), model, ner.NewOffline(), filmQuestion)
			if err == nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error = %v, want %v", err, c.want)
			}
			if fmtList(kw.Low) != fmtList(offline.Low) || fmtList(kw.High) != fmtList(offline.High) || kw.Source != "offline" {
				t.Errorf("fallback keywords = %+v, want %+v", kw, offline)
			}
		})
	}
	// No model at all is not an error.
	kw, err := retrieve.ExtractKeywords(context.Background(), nil, ner.NewOffline(), filmQuestion)
	if err != nil || kw.Source != "offline" {
		t.Errorf("without a model: %+v, %v", kw, err)
	}
}

func TestOfflineKeywords(t *testing.T) {
	kw := retrieve.OfflineKeywords(ner.NewOffline(), "Which river flows through Basel and Rotterdam?")
	if fmtList(kw.Low) != "[Basel Rotterdam]" {
		t.Errorf("low = %v, want the two names", kw.Low)
	}
	if fmtList(kw.High) != "[river flows Basel Rotterdam]" {
		t.Errorf("high = %v, want all the content words", kw.High)
	}
	kw = retrieve.OfflineKeywords(ner.NewOffline(), "how do rivers form deltas?")
	if fmtList(kw.Low) != "[rivers form deltas]" || fmtList(kw.High) != "[rivers form deltas]" {
		t.Errorf("no names: %+v; want the content words at both levels", kw)
	}
}

func TestCitations(t *testing.T) {
	for answer, want := range map[string]string{
		"Melbourne [2].":                  "2",
		"He was born in Melbourne [1][3]": "1 3",
		"See [1, 2] and [4; 5].":          "1 2 4 5",
		"No sources [a] or [].":           "",
		"Array x[0] is [ 7 ]":             "7", // no source 0
	} {
		got := retrieve.Citations(answer)
		var nums []string
		for _, n := range []string{"0", "1", "2", "3", "4", "5", "6", "7"} {
			i := int(n[0] - '0')
			if got[i] {
				nums = append(nums, n)
			}
		}
		if strings.Join(nums, " ") != want {
			t.Errorf("Citations(%q) = %v, want %s", answer, got, want)
		}
	}
}

func TestAnswerStreamsAndCites(t *testing.T) {
	const answer = "Harold Fairfax, who directed Won In The Clouds [1], was born in Melbourne [2]."
	model, srv := fakeModel(t, llmtest.Fixed(answer))
	srv.SetChunkSize(5)
	res := &retrieve.Result{
		Question: filmQuestion,
		Hint:     "",
		Passages: []retrieve.Passage{
			{ChunkID: "c1", DocPath: "films/won.txt", DocTitle: "Won In The Clouds", Text: film[0].Text},
			{ChunkID: "c2", DocPath: "people/fairfax.txt", DocTitle: "Harold Fairfax", Text: film[1].Text},
			{ChunkID: "c3", DocPath: "misc/clouds.txt", DocTitle: "Clouds (film)", Text: film[2].Text},
		},
		Entities:  []retrieve.EntityInfo{{Name: "Won In The Clouds", Type: "film", Description: "A 1935 film."}},
		Relations: []retrieve.RelationInfo{{Source: "Won In The Clouds", Target: "Harold Fairfax", Keywords: "directed by"}},
	}
	tok, err := splitter.NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	c, err := retrieve.Assemble(res, tok, retrieve.DefaultBudget(), "")
	if err != nil {
		t.Fatal(err)
	}
	var w chunkWriter
	a, err := retrieve.Answer(context.Background(), model, c, &w)
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != answer || w.String() != answer {
		t.Errorf("answer %q, streamed %q; want %q", a.Text, w.String(), answer)
	}
	if w.writes < 10 {
		t.Errorf("answer arrived in %d writes; want it streamed in pieces", w.writes)
	}
	var cited []string
	for _, s := range a.Cited() {
		cited = append(cited, s.DocPath)
	}
	if strings.Join(cited, " ") != "films/won.txt people/fairfax.txt" {
		t.Errorf("cited sources = %v", cited)
	}
	req := srv.Requests()[0]
	if !req.Stream || len(req.Messages) != 2 || req.Messages[0].Role != "system" {
		t.Fatalf("request = %+v; want a streamed system + user request", req)
	}
	if !strings.Contains(req.Messages[0].Content, "Won In The Clouds -- Harold Fairfax (directed by)") {
		t.Errorf("system message lacks the relationship:\n%s", req.Messages[0].Content)
	}
	for i, p := range res.Passages {
		if !strings.Contains(req.Last(), "["+string(rune('1'+i))+"] "+p.DocTitle) {
			t.Errorf("prompt lacks source [%d] %s:\n%s", i+1, p.DocTitle, req.Last())
		}
	}

	// Without citations every source is listed.
	model2, _ := fakeModel(t, llmtest.Fixed("I do not know."))
	a, err = retrieve.Answer(context.Background(), model2, c, nil)
	if err != nil || len(a.Cited()) != 3 {
		t.Errorf("uncited answer lists %d sources, %v; want all 3", len(a.Cited()), err)
	}
}

type chunkWriter struct {
	bytes.Buffer
	writes int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}
