package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/docgraph/docgraph/llm/llmtest"
)

func openaiModel(t *testing.T, srv *llmtest.Server) llms.Model {
	t.Helper()
	m, err := openai.New(openai.WithBaseURL(srv.OpenAIBaseURL()), openai.WithToken("sk-test"), openai.WithModel("test-model"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestStream(t *testing.T) {
	// Two-, three- and four-byte characters, placed so that 3-byte chunks
	// would cut through some of them.
	const answer = "Zürich → Genève, 🙂 déjà vu: naïve café «€»."
	srv := llmtest.NewServer(llmtest.Fixed(answer))
	defer srv.Close()
	srv.SetChunkSize(3)

	var chunks []string
	resp, err := openaiModel(t, srv).GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "where?")},
		llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			if len(chunk) > 0 {
				chunks = append(chunks, string(chunk))
			}
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(chunks, ""); got != answer {
		t.Errorf("chunks join to %q, want %q", got, answer)
	}
	if got := resp.Choices[0].Content; got != answer {
		t.Errorf("content = %q, want %q", got, answer)
	}
	if len(chunks) < 2 {
		t.Errorf("answer arrived in %d chunk(s); want it streamed in pieces", len(chunks))
	}
	longer := false
	for _, c := range chunks {
		if !utf8.ValidString(c) {
			t.Errorf("chunk %q splits a character", c)
		}
		longer = longer || len(c) > 3
	}
	if !longer {
		t.Errorf("no chunk outgrew the chunk size 3; the answer does not test splitting: %q", chunks)
	}
	if r := srv.Requests(); len(r) != 1 || !r[0].Stream || r[0].JSONMode {
		t.Errorf("requests = %+v; want one streamed request, not in JSON mode", r)
	}
}

func TestStreamErrorIsJSON(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script(llmtest.Reply{Status: http.StatusBadRequest, Error: "bad prompt"}))
	defer srv.Close()
	_, err := openaiModel(t, srv).GenerateContent(context.Background(),
		[]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")},
		llms.WithStreamingFunc(func(context.Context, []byte) error {
			return errors.New("no chunk expected")
		}))
	if err == nil || !strings.Contains(err.Error(), "bad prompt") {
		t.Errorf("error = %v; want the server's message", err)
	}
}

func TestJSONMode(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed(`{"ok": true}`))
	defer srv.Close()
	m := openaiModel(t, srv)
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")}
	if _, err := m.GenerateContent(context.Background(), msgs, llms.WithJSONMode()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GenerateContent(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()
	if len(r) != 2 || !r[0].JSONMode || r[1].JSONMode || r[0].Stream || r[1].Stream {
		t.Errorf("requests = %+v; want JSON mode on the first only, neither streamed", r)
	}
}

func TestSplitTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Harold Fairfax", []string{"Harold", " Fairfax"}},
		{"- Melbourne [2]\n- Zürich", []string{"-", " Melbourne", " ", "[", "2", "]", "\n", "-", " Zürich"}},
		{"  a, 1935.", []string{" ", " a", ",", " 1935", "."}},
		{"", nil},
	}
	for _, tt := range tests {
		got := llmtest.SplitTokens(tt.in)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("SplitTokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Join(got, "") != tt.in {
			t.Errorf("SplitTokens(%q) does not concatenate back: %q", tt.in, got)
		}
	}
}

// TestLogProbsWireFormat reads the raw OpenAI answer: choices[0].logprobs
// holds content[] with token, logprob, bytes and top_logprobs, cut to the
// number asked for, and is null when the reply has no tokens.
func TestLogProbsWireFormat(t *testing.T) {
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Last(), "none") {
			return llmtest.Reply{Content: "no tokens"}
		}
		return llmtest.Reply{Tokens: []llmtest.Token{
			{Text: "Go", LogProb: -0.5, Top: []llmtest.Token{{Text: "Go", LogProb: -0.5}, {Text: "C", LogProb: -1}, {Text: "B", LogProb: -3}}},
		}}
	})
	defer srv.Close()
	post := func(body string) map[string]any {
		t.Helper()
		resp, err := http.Post(srv.OpenAIBaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v["choices"].([]any)[0].(map[string]any)
	}
	c := post(`{"model":"m","messages":[{"role":"user","content":"q"}],"logprobs":true,"top_logprobs":2}`)
	if c["message"].(map[string]any)["content"] != "Go" {
		t.Errorf("content %v", c["message"])
	}
	content := c["logprobs"].(map[string]any)["content"].([]any)
	tok := content[0].(map[string]any)
	if tok["token"] != "Go" || tok["logprob"] != -0.5 || len(tok["top_logprobs"].([]any)) != 2 || len(tok["bytes"].([]any)) != 2 {
		t.Errorf("token %v", tok)
	}
	if r := srv.Requests()[0]; !r.LogProbs || r.TopLogProbs != 2 {
		t.Errorf("request %+v", r)
	}
	if c := post(`{"model":"m","messages":[{"role":"user","content":"none"}],"logprobs":true}`); c["logprobs"] != nil {
		t.Errorf("logprobs %v; want null without tokens", c["logprobs"])
	}
	if _, has := post(`{"model":"m","messages":[{"role":"user","content":"q"}]}`)["logprobs"]; has {
		t.Error("logprobs sent unasked")
	}
}
