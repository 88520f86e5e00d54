package ner

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
)

// loopServer is a fake OpenAI server that tells the loop's three kinds of
// request apart by their last message and answers each kind from its own
// script, logging the kinds in order.
type loopServer struct {
	*llmtest.Server
	script map[string][]llmtest.Reply
}

func requestKind(r llmtest.Request) string {
	last := r.Last()
	switch {
	case strings.Contains(last, "YES or NO"):
		return "judge"
	case strings.Contains(last, "were missed"):
		return "continue"
	case strings.Contains(last, "Now the real text."):
		return "extract"
	}
	return "unknown"
}

func newLoopServer(script map[string][]string) *loopServer {
	s := &loopServer{script: map[string][]llmtest.Reply{}}
	for k, answers := range script {
		for _, a := range answers {
			s.script[k] = append(s.script[k], llmtest.Reply{Content: a})
		}
	}
	seen := map[string]int{}
	s.Server = llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		k := requestKind(r)
		i := seen[k]
		seen[k]++
		if i < len(s.script[k]) {
			return s.script[k][i]
		}
		return llmtest.Reply{Status: 418, Error: fmt.Sprintf("no scripted answer for %s request %d", k, i+1)}
	})
	return s
}

func (s *loopServer) kinds() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, requestKind(r))
	}
	return out
}

func newLoopClient(t *testing.T, srv *llmtest.Server, opts ...llm.Option) *llm.Client {
	t.Helper()
	base := []llm.Option{llm.WithAPIKey("sk-test-key-0000"), llm.WithBaseURL(srv.OpenAIBaseURL()),
		llm.WithBackoff(time.Millisecond, time.Millisecond)}
	c, err := llm.New("openai:test-model", append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const (
	rec1 = `("entity"<|>Ada Lovelace<|>person<|>Wrote the first program.)##` + "\n" + `<|COMPLETE|>`
	rec2 = `("entity"<|>Charles Babbage<|>person<|>Designed the engine.)##` + "\n" +
		`("relationship"<|>Charles Babbage<|>Analytical Engine<|>He designed it.<|>design<|>9)##` + "\n<|COMPLETE|>"
	rec3 = `("entity"<|>London<|>location<|>Where they met.)##` + "\n<|COMPLETE|>"
)

var testChunk = Chunk{ID: "doc1#0", DocTitle: "Engines", Text: "Ada Lovelace and Charles Babbage met in London to discuss the Analytical Engine."}

func TestLoopGleaning(t *testing.T) {
	tests := []struct {
		name         string
		opts         []LoopOption
		script       map[string][]string
		wantKinds    []string
		wantEntities []string
		want         LoopStats // the judge and round counters are compared
	}{
		{
			name:      "base stops when the judge says no",
			opts:      []LoopOption{WithGleaning(5)},
			script:    map[string][]string{"extract": {rec1}, "continue": {rec2, rec3}, "judge": {"YES", "no."}},
			wantKinds: []string{"extract", "continue", "judge", "continue", "judge"},
			// Analytical Engine comes in only as a relation endpoint.
			wantEntities: []string{"Ada Lovelace", "Charles Babbage", "London", "Analytical Engine"},
			want:         LoopStats{Rounds: 2, JudgeYes: 1, JudgeNo: 1},
		},
		{
			name:         "base stops at the round limit",
			opts:         []LoopOption{WithGleaning(2)},
			script:       map[string][]string{"extract": {rec1}, "continue": {rec2, rec3}, "judge": {"YES", "YES"}},
			wantKinds:    []string{"extract", "continue", "judge", "continue"},
			wantEntities: []string{"Ada Lovelace", "Charles Babbage", "London", "Analytical Engine"},
			want:         LoopStats{Rounds: 2, JudgeYes: 1},
		},
		{
			name:         "base default is one round and no judge",
			script:       map[string][]string{"extract": {rec1}, "continue": {rec2}},
			wantKinds:    []string{"extract", "continue"},
			wantEntities: []string{"Ada Lovelace", "Charles Babbage", "Analytical Engine"},
			want:         LoopStats{Rounds: 1},
		},
		{
			name:         "no gleaning",
			opts:         []LoopOption{WithGleaning(0)},
			script:       map[string][]string{"extract": {rec1}},
			wantKinds:    []string{"extract"},
			wantEntities: []string{"Ada Lovelace"},
		},
		{
			name:         "trial asks first and stops on no",
			opts:         []LoopOption{WithVariant(VariantTrial), WithGleaning(3)},
			script:       map[string][]string{"extract": {rec1}, "judge": {"NO"}},
			wantKinds:    []string{"extract", "judge"},
			wantEntities: []string{"Ada Lovelace"},
			want:         LoopStats{JudgeNo: 1},
		},
		{
			name:         "trial continues on yes up to the round limit",
			opts:         []LoopOption{WithVariant(VariantTrial), WithGleaning(2)},
			script:       map[string][]string{"extract": {rec1}, "continue": {rec2, rec3}, "judge": {"yes", "Yes"}},
			wantKinds:    []string{"extract", "judge", "continue", "judge", "continue"},
			wantEntities: []string{"Ada Lovelace", "Charles Babbage", "London", "Analytical Engine"},
			want:         LoopStats{Rounds: 2, JudgeYes: 2},
		},
		{
			name:         "a judge that will not say yes or no stops gleaning",
			opts:         []LoopOption{WithGleaning(4)},
			script:       map[string][]string{"extract": {rec1}, "continue": {rec2}, "judge": {"Yes, a few more could be listed."}},
			wantKinds:    []string{"extract", "continue", "judge"},
			wantEntities: []string{"Ada Lovelace", "Charles Babbage", "Analytical Engine"},
			want:         LoopStats{Rounds: 1, JudgeInvalid: 1},
		},
		{
			name:         "repeated records merge",
			opts:         []LoopOption{WithGleaning(1)},
			script:       map[string][]string{"extract": {rec1}, "continue": {strings.TrimSuffix(rec1, "<|COMPLETE|>") + rec3}},
			wantKinds:    []string{"extract", "continue"},
			wantEntities: []string{"Ada Lovelace", "London"},
			want:         LoopStats{Rounds: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newLoopServer(tt.script)
			defer srv.Close()
			l := NewLoop(newLoopClient(t, srv.Server), tt.opts...)

			x, err := l.Extract(context.Background(), testChunk)
			if err != nil {
				t.Fatal(err)
			}
			if got := srv.kinds(); !slices.Equal(got, tt.wantKinds) {
				t.Errorf("requests %v, want %v", got, tt.wantKinds)
			}
			var names []string
			for _, e := range x.Entities {
				names = append(names, e.Name)
			}
			if !slices.Equal(names, tt.wantEntities) {
				t.Errorf("entities %v, want %v", names, tt.wantEntities)
			}
			st := l.Stats()
			got := LoopStats{Rounds: st.Rounds, JudgeYes: st.JudgeYes, JudgeNo: st.JudgeNo, JudgeInvalid: st.JudgeInvalid}
			if got != tt.want {
				t.Errorf("stats %+v, want %+v", got, tt.want)
			}
			if st.Calls != int64(len(tt.wantKinds)) || st.Chunks != 1 || st.Entities != int64(len(tt.wantEntities)) {
				t.Errorf("calls %d chunks %d entities %d", st.Calls, st.Chunks, st.Entities)
			}
		})
	}
}

// The conversation is kept: each gleaning request carries the extraction
// prompt, every earlier answer and the earlier continue requests; the judge
// question is asked on top of it but not kept.
func TestLoopKeepsHistory(t *testing.T) {
	srv := newLoopServer(map[string][]string{"extract": {rec1}, "continue": {rec2, rec3}, "judge": {"YES"}})
	defer srv.Close()
	l := NewLoop(newLoopClient(t, srv.Server), WithGleaning(2))
	if _, err := l.Extract(context.Background(), testChunk); err != nil {
		t.Fatal(err)
	}
	roles := func(r llmtest.Request) string {
		var s []string
		for _, m := range r.Messages {
			s = append(s, m.Role)
		}
		return strings.Join(s, ",")
	}
	reqs := srv.Requests()
	want := []string{
		"user",
		"user,assistant,user",
		"user,assistant,user,assistant,user",
		"user,assistant,user,assistant,user", // second continue: no judge exchange in it
	}
	for i, r := range reqs {
		if got := roles(r); got != want[i] {
			t.Errorf("request %d (%s) roles %s, want %s", i+1, requestKind(r), got, want[i])
		}
	}
	last := reqs[3]
	if last.Messages[1].Content != rec1 || last.Messages[3].Content != rec2 || !strings.Contains(last.Messages[0].Content, testChunk.Text) {
		t.Errorf("second continue lacks the earlier answers or the text")
	}
	if requestKind(last) != "continue" || requestKind(llmtest.Request{Messages: []llmtest.Message{last.Messages[2]}}) != "continue" {
		t.Errorf("history holds %q where the first continue request belongs", last.Messages[2].Content)
	}
	if reqs[0].Temperature != 0 {
		t.Errorf("temperature %v, want 0", reqs[0].Temperature)
	}
}

func TestLoopToleratesChatterAndReportsMalformed(t *testing.T) {
	answer := "Here is what I found:\n```\n" +
		`("entity"<|>Ada Lovelace<|>person<|>Wrote the first program.)##` + "\n" +
		`("entity"<|>Broken<|>person)##` + "\n" + // one field short
		`("relationship"<|>Ada Lovelace<|><|>no target<|>k<|>3)##` + "\n" + // endpoint missing
		"```\nI hope this helps!"
	glean := `Sure, a few more: ("entity"<|>London<|>location<|>A city.)## and ("relationship"<|>Ada Lovelace<|>London<|>She lived`
	srv := newLoopServer(map[string][]string{"extract": {answer}, "continue": {glean}})
	defer srv.Close()
	l := NewLoop(newLoopClient(t, srv.Server))
	x, err := l.Extract(context.Background(), testChunk)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Entities) != 2 || x.Entities[1].Name != "London" || len(x.Relations) != 0 {
		t.Errorf("entities %+v relations %+v, want Ada Lovelace and London, no relation", x.Entities, x.Relations)
	}
	if x.Rejected != 3 || l.Stats().Rejected != 3 {
		t.Errorf("rejected %d (stats %d), want 3: short entity, missing endpoint, cut-off relation", x.Rejected, l.Stats().Rejected)
	}
}

func TestLoopSkipsRoundsBeyondTheContext(t *testing.T) {
	srv := newLoopServer(map[string][]string{"extract": {rec1, rec1}, "continue": {rec2}})
	defer srv.Close()
	c := newLoopClient(t, srv.Server)
	count := llm.EstimateTokens
	first := NewLoop(c, WithGleaning(0))
	if _, err := first.Extract(context.Background(), testChunk); err != nil {
		t.Fatal(err)
	}
	// A budget that holds the first exchange but not another round.
	prompt := srv.Requests()[0].Last()
	budget := count(prompt) + count(rec1) + 20
	l := NewLoop(newLoopClient(t, srv.Server), WithGleaning(3), WithContextTokens(budget), WithTokenCounter(count))
	x, err := l.Extract(context.Background(), testChunk)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.kinds(); !slices.Equal(got, []string{"extract", "extract"}) {
		t.Errorf("requests %v, want only the two extractions", got)
	}
	if st := l.Stats(); st.ContextSkips != 1 || st.Rounds != 0 || len(x.Entities) != 1 {
		t.Errorf("skips %d rounds %d entities %d, want 1 0 1", st.ContextSkips, st.Rounds, len(x.Entities))
	}
}

func TestLoopBlankChunkCostsNothing(t *testing.T) {
	srv := newLoopServer(nil)
	defer srv.Close()
	x, err := NewLoop(newLoopClient(t, srv.Server)).Extract(context.Background(), Chunk{ID: "blank", Text: " \n\t"})
	if err != nil || len(x.Entities) != 0 || srv.Count() != 0 {
		t.Fatalf("blank chunk: %+v, %v, %d requests; want nothing and no request", x, err, srv.Count())
	}
}

func TestLoopFailureNamesTheChunk(t *testing.T) {
	srv := newLoopServer(map[string][]string{"extract": {rec1}}) // continue is not scripted: 418
	defer srv.Close()
	l := NewLoop(newLoopClient(t, srv.Server))
	_, err := l.Extract(context.Background(), testChunk)
	if err == nil || !strings.Contains(err.Error(), "doc1#0") || !strings.Contains(err.Error(), "gleaning round 1") {
		t.Fatalf("error = %v, want one naming the chunk and the round", err)
	}
	if st := l.Stats(); st.Failed != 1 || st.Chunks != 0 {
		t.Errorf("failed %d chunks %d, want 1 0", st.Failed, st.Chunks)
	}
}

// Re-running extraction over the same chunks with the cache costs nothing.
func TestLoopRerunFromCache(t *testing.T) {
	srv := newLoopServer(map[string][]string{"extract": {rec1}, "continue": {rec2, rec3}, "judge": {"YES", "NO"}})
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "llm-cache.sqlite")
	run := func() (*Extraction, llm.Stats) {
		c := newLoopClient(t, srv.Server, llm.WithCache(path))
		x, err := NewLoop(c, WithGleaning(3)).Extract(context.Background(), testChunk)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		return x, c.Stats()
	}
	x1, st1 := run()
	x2, st2 := run()
	if st1.Calls != 5 || st2.Calls != 0 || st2.CacheHits != 5 || srv.Count() != 5 {
		t.Fatalf("first run %d calls, second %d calls %d hits, server %d requests; want 5, 0, 5, 5",
			st1.Calls, st2.Calls, st2.CacheHits, srv.Count())
	}
	if fmt.Sprint(x1) != fmt.Sprint(x2) {
		t.Errorf("cached run extracted %+v, first run %+v", x2, x1)
	}
}

func TestParseVariant(t *testing.T) {
	for in, want := range map[string]Variant{"base": VariantBase, " Trial ": VariantTrial} {
		if got, err := ParseVariant(in); err != nil || got != want {
			t.Errorf("ParseVariant(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseVariant("loop"); err == nil {
		t.Error("ParseVariant(loop) should fail")
	}
	names := map[string]bool{}
	for _, opts := range [][]LoopOption{
		nil,
		{WithVariant(VariantTrial)},
		{WithGleaning(2)},
		{WithEntityTypes("gene", "protein")},
		{WithLanguage("French")},
	} {
		names[NewLoop(llmsModelName{}, opts...).Name()] = true
	}
	if len(names) != 5 {
		t.Errorf("options that change the output must change Name(): %v", names)
	}
	if n := NewLoop(llmsModelName{}).Name(); n != "loop-v1(base,gleaning=1):fake:model" {
		t.Errorf("Name() = %q", n)
	}
}

// llmsModelName is only used for Name(); it is never called.
type llmsModelName struct{ llms.Model }

func (llmsModelName) Name() string { return "fake:model" }
