package retrieve_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/retrieve"
)

// listTokens spells answer lines as tokens: the tokens of each line's
// candidate (the text before " [" or the whole line) share log(p), so the
// candidate's joint probability is p; every other token (citations,
// bullets, line breaks) gets -3, which must not count.
func listTokens(lines []string, p []float64) []llmtest.Token {
	var out []llmtest.Token
	for i, line := range lines {
		if i > 0 {
			out = append(out, llmtest.Token{Text: "\n", LogProb: -3})
		}
		cand, rest, _ := strings.Cut(line, " [")
		if rest != "" {
			rest = " [" + rest
		}
		prefix := ""
		if strings.HasPrefix(cand, "- ") {
			prefix, cand = "-", cand[1:]
		}
		if prefix != "" {
			out = append(out, llmtest.Token{Text: prefix, LogProb: -3})
		}
		parts := llmtest.SplitTokens(cand)
		for _, t := range parts {
			out = append(out, llmtest.Token{Text: t, LogProb: math.Log(p[i]) / float64(len(parts))})
		}
		for _, t := range llmtest.SplitTokens(rest) {
			out = append(out, llmtest.Token{Text: t, LogProb: -3})
		}
	}
	return out
}

func toLLM(ts []llmtest.Token) []llm.TokenLogProb {
	out := make([]llm.TokenLogProb, len(ts))
	for i, t := range ts {
		out[i] = llm.TokenLogProb{Token: t.Text, LogProb: t.LogProb}
	}
	return out
}

func TestCandidates(t *testing.T) {
	type want struct {
		text  string
		conf  float64
		cites string
	}
	tests := []struct {
		name   string
		answer string
		tokens []llmtest.Token
		want   []want
	}{
		{
			name:   "bullets and citations",
			tokens: listTokens([]string{"- Melbourne [2]", "- Harold Fairfax [1][3]"}, []float64{0.9, 0.25}),
			want:   []want{{"Melbourne", 0.9, "[2]"}, {"Harold Fairfax", 0.25, "[1 3]"}},
		},
		{
			name:   "numbered, label, emphasis, full stop",
			tokens: listTokens([]string{"1. **Answer: 1958**.", `2) "Los Angeles"`}, []float64{1, 0.5}),
			want:   []want{{"1958", 1, "[]"}, {"Los Angeles", -1, "[]"}}, // the line shares 0.5 with the numbering
		},
		{
			name:   "bracketed list, as ROG answers",
			tokens: listTokens([]string{`["Kismet", "Destry Rides Again"]`}, []float64{0.5}),
			// Each item gets the part of the line's probability its own tokens carry.
			want: []want{{"Kismet", -1, "[]"}, {"Destry Rides Again", -1, "[]"}},
		},
		{
			name:   "refusals and repeats dropped",
			tokens: listTokens([]string{"I don't know", "Paris", "paris.", "None"}, []float64{1, 0.8, 0.7, 1}),
			want:   []want{{"Paris", 0.8, "[]"}},
		},
		{
			name:   "reasoning before the answer is not a candidate",
			tokens: listTokens([]string{"<think>maybe Sydney</think>Melbourne"}, []float64{0.6}),
			want:   []want{{"Melbourne", -1, "[]"}},
		},
		{
			name:   "no tokens: no confidence",
			answer: "Melbourne [2]\nSydney",
			want:   []want{{"Melbourne", 0, "[2]"}, {"Sydney", 0, "[]"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := tt.answer
			if tt.tokens != nil {
				var b strings.Builder
				for _, tk := range tt.tokens {
					b.WriteString(tk.Text)
				}
				answer = b.String()
			}
			got := retrieve.Candidates(answer, toLLM(tt.tokens))
			if len(got) != len(tt.want) {
				t.Fatalf("Candidates(%q) = %+v, want %d", answer, got, len(tt.want))
			}
			for i, w := range tt.want {
				c := got[i]
				if c.Text != w.text || fmtInts(c.Cites) != w.cites {
					t.Errorf("candidate %d = %q cites %v, want %q %s", i, c.Text, c.Cites, w.text, w.cites)
				}
				if w.conf >= 0 && math.Abs(c.Confidence-w.conf) > 1e-9 {
					t.Errorf("candidate %q confidence %v, want %v", c.Text, c.Confidence, w.conf)
				}
				if w.conf < 0 && (c.Confidence <= 0 || c.Confidence >= 1) {
					t.Errorf("candidate %q confidence %v, want a share of the line's", c.Text, c.Confidence)
				}
			}
		})
	}
}

func TestCandidatesReadTheTokensOwnText(t *testing.T) {
	// A server whose content differs from its tokens (here: trailing
	// whitespace trimmed) is read through its tokens, so offsets line up.
	tokens := listTokens([]string{"Zürich", "Genève"}, []float64{0.5, 1})
	tokens = append(tokens, llmtest.Token{Text: "\n", LogProb: 0})
	got := retrieve.Candidates("Zürich\nGenève", toLLM(tokens))
	if len(got) != 2 || got[0].Text != "Zürich" || math.Abs(got[0].Confidence-0.5) > 1e-9 || got[1].Confidence != 1 {
		t.Fatalf("got %+v", got)
	}
}

func TestMeetsThreshold(t *testing.T) {
	tests := []struct {
		conf, tau float64
		want      bool
	}{
		{1, 1, true},
		{math.Exp(-3e-7), 1, true}, // a "certain" token in float32 log-probabilities
		{0.999, 1, false},
		{0.5, 0.5, true},
		{0.49, 0.5, false},
		{0, 0, true},
	}
	for _, tt := range tests {
		if got := retrieve.MeetsThreshold(tt.conf, tt.tau); got != tt.want {
			t.Errorf("MeetsThreshold(%v, %v) = %v", tt.conf, tt.tau, got)
		}
	}
}

// integrationServer answers the GraphRAG prompt (it carries sources) and
// the LLM-only prompt with the given lines and candidate probabilities;
// withTokens false makes it a server that ignores logprobs.
func integrationServer(t *testing.T, gLines []string, gP []float64, lLines []string, lP []float64, withTokens bool) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		lines, p := gLines, gP
		if strings.Contains(r.Last(), "from your own knowledge") {
			lines, p = lLines, lP
		}
		if !withTokens {
			return llmtest.Reply{Content: strings.Join(lines, "\n")}
		}
		return llmtest.Reply{Tokens: listTokens(lines, p)}
	})
	t.Cleanup(srv.Close)
	return srv
}

func clientFor(t *testing.T, spec, baseURL string) *llm.Client {
	t.Helper()
	c, err := llm.New(spec, llm.WithAPIKey("sk-test"), llm.WithBaseURL(baseURL), llm.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var graphragMsgs = []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman,
	"Answer from the sources.\nSources:\n[1] Harold Fairfax\nHe was born in Melbourne.\n\nQuestion: Where was the director of Won In The Clouds born?")}

const integrateQuestion = "Where was the director of Won In The Clouds born?"

func TestIntegrateThresholdsAndCombine(t *testing.T) {
	ctx := context.Background()
	// GraphRAG: Melbourne (0.9), Sydney (0.4). LLM-only: London (1),
	// Melbourne (0.7).
	srv := integrationServer(t,
		[]string{"- Melbourne [1]", "- Sydney [1]"}, []float64{0.9, 0.4},
		[]string{"London", "Melbourne"}, []float64{1, 0.7}, true)
	model := clientFor(t, "openai:test-model", srv.OpenAIBaseURL())

	tests := []struct {
		name       string
		tauG, tauL float64
		final      string // text/from, one per final candidate
		answer     string
	}{
		{"paper defaults", retrieve.DefaultTauG, retrieve.DefaultTauL, "Melbourne/graphrag London/llm_only", "Melbourne [1]\nLondon"},
		{"lower tau_G keeps Sydney", 0.3, 1, "Melbourne/graphrag Sydney/graphrag London/llm_only", "Melbourne [1]\nSydney [1]\nLondon"},
		{"lower tau_L: both agree on Melbourne", 0.5, 0.6, "Melbourne/both London/llm_only", "Melbourne [1]\nLondon"},
		{"strict tau_G drops GraphRAG", 0.95, 1, "London/llm_only", "London"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := retrieve.Integrate(ctx, model, graphragMsgs, integrateQuestion, retrieve.IntegrateOptions{TauG: tt.tauG, TauL: tt.tauL})
			if err != nil {
				t.Fatal(err)
			}
			var final []string
			for _, f := range in.Final {
				final = append(final, f.Text+"/"+f.From)
			}
			if strings.Join(final, " ") != tt.final || in.Answer != tt.answer || in.Fallback != "" {
				t.Fatalf("final %v answer %q fallback %q; want %s, %q", final, in.Answer, in.Fallback, tt.final, tt.answer)
			}
			if len(in.GraphRAG.Candidates) != 2 || in.LLMOnly == nil || len(in.LLMOnly.Candidates) != 2 {
				t.Fatalf("candidate sets %+v %+v", in.GraphRAG, in.LLMOnly)
			}
			if c := in.GraphRAG.Candidates[0]; math.Abs(c.Confidence-0.9) > 1e-9 || c.Kept != (0.9 >= tt.tauG) {
				t.Errorf("GraphRAG Melbourne %+v", c)
			}
			if c := in.LLMOnly.Candidates[1]; math.Abs(c.Confidence-0.7) > 1e-9 || c.Kept != (0.7 >= tt.tauL) {
				t.Errorf("LLM-only Melbourne %+v", c)
			}
			if f := in.Final[0]; f.From == "both" && (f.ConfidenceG == nil || f.ConfidenceL == nil || *f.ConfidenceL < 0.69) {
				t.Errorf("a candidate of both answers carries both confidences: %+v", f)
			}
		})
	}
	// Each run asks twice, both for log-probabilities; the model alone never sees the sources.
	reqs := srv.Requests()
	if len(reqs) != 2*len(tests) {
		t.Fatalf("%d requests for %d integrations", len(reqs), len(tests))
	}
	for _, r := range reqs {
		if !r.LogProbs || r.Stream {
			t.Errorf("request without logprobs or streamed: %+v", r)
		}
		if strings.Contains(r.Last(), "own knowledge") && strings.Contains(r.Last(), "born in Melbourne") {
			t.Errorf("the LLM-only prompt carries retrieved text:\n%s", r.Last())
		}
	}
}

func TestIntegrateNothingKept(t *testing.T) {
	srv := integrationServer(t, []string{"Sydney [1]"}, []float64{0.2}, []string{"Perth"}, []float64{0.9}, true)
	in, err := retrieve.Integrate(context.Background(), clientFor(t, "openai:m", srv.OpenAIBaseURL()), graphragMsgs, integrateQuestion,
		retrieve.IntegrateOptions{TauG: 0.5, TauL: 1})
	if err != nil {
		t.Fatal(err)
	}
	if in.Answer != "Sydney [1]" || !strings.Contains(in.Fallback, "no candidate reached") || in.NoLogProbs {
		t.Fatalf("answer %q fallback %q", in.Answer, in.Fallback)
	}
	if len(in.Final) != 1 || in.Final[0].Text != "Sydney" || in.Final[0].From != "graphrag" {
		t.Errorf("final %+v; GraphRAG's answer stands", in.Final)
	}
}

func TestIntegrateWithoutLogProbs(t *testing.T) {
	ctx := context.Background()
	opts := retrieve.IntegrateOptions{TauG: retrieve.DefaultTauG, TauL: retrieve.DefaultTauL}

	t.Run("server ignores logprobs", func(t *testing.T) {
		srv := integrationServer(t, []string{"Melbourne [1]"}, nil, []string{"London"}, nil, false)
		in, err := retrieve.Integrate(ctx, clientFor(t, "openai:m", srv.OpenAIBaseURL()), graphragMsgs, integrateQuestion, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !in.NoLogProbs || !strings.Contains(in.Fallback, "no token log-probabilities") || in.Answer != "Melbourne [1]" {
			t.Fatalf("fallback %q answer %q", in.Fallback, in.Answer)
		}
		if in.GraphRAG.LogProbs || in.GraphRAG.Candidates[0].Kept {
			t.Errorf("candidates without log-probabilities kept: %+v", in.GraphRAG)
		}
		if srv.Count() != 2 {
			t.Errorf("%d requests; an OpenAI-compatible server is asked both", srv.Count())
		}
	})

	t.Run("provider without logprobs", func(t *testing.T) {
		srv := integrationServer(t, []string{"Melbourne [1]"}, nil, []string{"London"}, nil, false)
		in, err := retrieve.Integrate(ctx, clientFor(t, "ollama:qwen2.5", srv.URL), graphragMsgs, integrateQuestion, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !in.NoLogProbs || !strings.Contains(in.Fallback, "provider returns no token log-probabilities") || in.Answer != "Melbourne [1]" || in.LLMOnly != nil {
			t.Fatalf("%+v", in)
		}
		if srv.Count() != 1 {
			t.Errorf("%d requests; the model alone is not asked when its answer cannot be weighed", srv.Count())
		}
	})
}

func fmtInts(v []int) string { return fmt.Sprint(v) }
