package ner

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
)

const proseAnswer = "Sure! Here are the entities you asked for. The text talks about Ada Lovelace,\nwho worked with Charles Babbage on the Analytical Engine in London, and more."

func TestRecUsable(t *testing.T) {
	tests := []struct {
		name     string
		answer   string
		gleaning bool
		want     bool
	}{
		{"records", rec1, false, true},
		{"records without completion", `("entity"<|>Ada<|>person<|>A.)##`, false, true},
		{"nothing found, in format", "<|COMPLETE|>", false, true},
		{"nothing found after thinking", "<think>no names here</think>\n<|COMPLETE|>", false, true},
		{"prose", proseAnswer, false, false},
		{"empty first answer", "", false, false},
		{"only malformed records", `("entity"<|>Broken<|>person)##`, false, false},
		{"records drafted in thinking only", `<think>("entity"<|>Ada<|>person<|>A.)##</think> I cannot help.`, false, false},
		{"blank continuation", " \n", true, true},
		{"continuation: nothing more", "<|COMPLETE|>", true, true},
		{"continuation in prose", "There are no more entities to add, everything was listed.", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := recUsable(tt.answer, ParseRecords(tt.answer), tt.gleaning); got != tt.want {
				t.Errorf("recUsable(%q, gleaning=%v) = %v, want %v", tt.answer, tt.gleaning, got, tt.want)
			}
		})
	}
}

func TestRecExcerpt(t *testing.T) {
	long := strings.Repeat("é", 100) // two bytes each: the cut must not split one
	got := recExcerpt(long)
	if !strings.HasSuffix(got, "...") || len(got) > answerExcerptBytes+3 || !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("excerpt %q: want at most %d bytes of whole characters and ...", got, answerExcerptBytes)
	}
	if got := recExcerpt("a\n\tb  c"); got != "a b c" {
		t.Errorf("excerpt %q, want one line", got)
	}
}

func TestLoopUnusableAnswers(t *testing.T) {
	tests := []struct {
		name         string
		gleaning     int
		script       map[string][]string
		wantKinds    []string
		wantUnusable bool // the chunk's extraction answer
		wantAnswers  int  // unusable answers described
		wantEntities int
	}{
		{"prose extraction: no gleaning on top", 3, map[string][]string{"extract": {proseAnswer}},
			[]string{"extract"}, true, 1, 0},
		{"prose gleaning: records kept, gleaning stops (no judge)", 3, map[string][]string{"extract": {rec1}, "continue": {proseAnswer}},
			[]string{"extract", "continue"}, false, 1, 1},
		{"nothing found is no warning", 1, map[string][]string{"extract": {"<|COMPLETE|>"}, "continue": {"<|COMPLETE|>"}},
			[]string{"extract", "continue"}, false, 0, 0},
		{"records then blank continuation", 1, map[string][]string{"extract": {rec1}, "continue": {""}},
			[]string{"extract", "continue"}, false, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newLoopServer(tt.script)
			defer srv.Close()
			l := NewLoop(newLoopClient(t, srv.Server), WithGleaning(tt.gleaning))
			x, err := l.Extract(context.Background(), testChunk)
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.kinds(); !slices.Equal(got, tt.wantKinds) {
				t.Errorf("requests %v, want %v", got, tt.wantKinds)
			}
			if x.Unusable != tt.wantUnusable || len(x.UnusableAnswers) != tt.wantAnswers || len(x.Entities) != tt.wantEntities {
				t.Errorf("unusable %v answers %q entities %d, want %v, %d answers, %d entities",
					x.Unusable, x.UnusableAnswers, len(x.Entities), tt.wantUnusable, tt.wantAnswers, tt.wantEntities)
			}
			if st := l.Stats(); st.Unusable != int64(tt.wantAnswers) {
				t.Errorf("stats unusable %d, want %d", st.Unusable, tt.wantAnswers)
			}
			for _, a := range x.UnusableAnswers {
				if !strings.Contains(a, "openai:test-model") || !strings.Contains(a, "Sure! Here are") || strings.Contains(a, "\n") {
					t.Errorf("warning %q: want the model's name and the answer's start on one line", a)
				}
			}
		})
	}
}

func TestLoopStopsAfterUnusableStart(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed(proseAnswer))
	defer srv.Close()
	l := NewLoop(newLoopClient(t, srv), WithGleaning(1), WithUnusableLimit(3))
	ctx := context.Background()
	for i := range 2 {
		if x, err := l.Extract(ctx, testChunk); err != nil || !x.Unusable {
			t.Fatalf("answer %d: %+v, %v; want an unusable chunk, no error yet", i+1, x, err)
		}
	}
	_, err := l.Extract(ctx, testChunk)
	ue, ok := errors.AsType[*UnusableAnswersError](err)
	if !ok || ue.Count != 3 || ue.Model != "openai:test-model" || !strings.HasPrefix(ue.Answer, "Sure! Here are") {
		t.Fatalf("third unusable answer: %v, want an UnusableAnswersError naming the model and quoting the answer", err)
	}
	// Stopped: later chunks fail at once, without a call.
	before := srv.Count()
	if _, err := l.Extract(ctx, testChunk); !errors.As(err, &ue) {
		t.Fatalf("after the stop: %v", err)
	}
	if srv.Count() != before {
		t.Errorf("a stopped loop made %d more calls", srv.Count()-before)
	}
}

func TestLoopUsableAnswerEndsTheStartCount(t *testing.T) {
	answers := []string{proseAnswer, rec1, proseAnswer, proseAnswer, proseAnswer}
	var replies []llmtest.Reply
	for _, a := range answers {
		replies = append(replies, llmtest.Reply{Content: a})
	}
	srv := llmtest.NewServer(llmtest.Script(replies...))
	defer srv.Close()
	l := NewLoop(newLoopClient(t, srv), WithGleaning(0), WithUnusableLimit(2))
	for i := range answers {
		if _, err := l.Extract(context.Background(), testChunk); err != nil {
			t.Fatalf("answer %d: %v; after a usable answer unusable ones are only counted", i+1, err)
		}
	}
	if st := l.Stats(); st.Unusable != 4 {
		t.Errorf("unusable %d, want 4", st.Unusable)
	}
}

// TestLoopForgetsUnusableAnswers: an unusable answer is not replayed from
// the response cache, so the document's retry asks the model again; usable
// answers still are.
func TestLoopForgetsUnusableAnswers(t *testing.T) {
	srv := newLoopServer(map[string][]string{"extract": {proseAnswer, rec1, rec1}, "continue": {"<|COMPLETE|>", "<|COMPLETE|>"}})
	defer srv.Close()
	cache := filepath.Join(t.TempDir(), "cache.db")
	extract := func() *Extraction {
		t.Helper()
		l := NewLoop(newLoopClient(t, srv.Server, llm.WithCache(cache)), WithGleaning(1))
		x, err := l.Extract(context.Background(), testChunk)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if x := extract(); !x.Unusable {
		t.Fatalf("first run: %+v, want an unusable answer", x)
	}
	if x := extract(); x.Unusable || len(x.Entities) != 1 {
		t.Fatalf("retry: %+v, want the model asked again and its records", x)
	}
	before := srv.Count()
	if x := extract(); x.Unusable || len(x.Entities) != 1 || srv.Count() != before {
		t.Fatalf("third run: %+v after %d new requests, want the usable answer from the cache", x, srv.Count()-before)
	}
}
