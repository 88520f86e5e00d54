package llm

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm/llmtest"
)

func TestLogProbsThroughTheTransport(t *testing.T) {
	tokens := []llmtest.Token{
		{Text: "Mel", LogProb: -0.01, Top: []llmtest.Token{{Text: "Mel", LogProb: -0.01}, {Text: "Syd", LogProb: -4.6}}},
		{Text: "bourne", LogProb: 0},
		{Text: "\n", LogProb: -0.2},
		{Text: "Zürich", LogProb: -1.5},
	}
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Tokens: tokens, PromptTokens: 12, CompletionTokens: 4}
	})
	defer srv.Close()
	c := newTestClient(t, srv, WithCache(filepath.Join(t.TempDir(), "cache.db")))
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Where was Harold Fairfax born?")}

	resp, err := c.GenerateContent(ctx, msgs, llms.WithTemperature(0), WithLogProbs(2))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Content; got != "Melbourne\nZürich" {
		t.Fatalf("content %q", got)
	}
	req := srv.Requests()[0]
	if !req.LogProbs || req.TopLogProbs != 2 {
		t.Fatalf("request logprobs=%v top=%d; the transport must ask for them", req.LogProbs, req.TopLogProbs)
	}
	got, ok := LogProbs(resp.Choices[0])
	if !ok || len(got) != 4 {
		t.Fatalf("LogProbs = %+v, %v", got, ok)
	}
	if got[0].Token != "Mel" || got[0].LogProb != -0.01 || len(got[0].Top) != 2 || got[0].Top[1].Token != "Syd" {
		t.Errorf("first token %+v", got[0])
	}
	if got[3].Text() != "Zürich" || len(got[3].Bytes) != len("Zürich") {
		t.Errorf("token bytes: %+v", got[3])
	}
	if s := c.Stats(); s.PromptTokens != 12 || s.CompletionTokens != 4 {
		t.Errorf("usage still counted: %+v", s)
	}

	// The cache keeps them: the same call costs no request and still has them.
	again, err := c.GenerateContent(ctx, msgs, llms.WithTemperature(0), WithLogProbs(2))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 1 {
		t.Fatalf("%d requests; the repeat should come from the cache", srv.Count())
	}
	cached, ok := LogProbs(again.Choices[0])
	if !ok || len(cached) != 4 || math.Abs(cached[2].LogProb+0.2) > 1e-12 || cached[0].Top[1].Token != "Syd" {
		t.Fatalf("cached LogProbs = %+v, %v", cached, ok)
	}

	// Without the option the request is left alone and is a different cache entry.
	plain, err := c.GenerateContent(ctx, msgs, llms.WithTemperature(0))
	if err != nil {
		t.Fatal(err)
	}
	if srv.Count() != 2 || srv.Requests()[1].LogProbs {
		t.Fatalf("a call without WithLogProbs: %d requests, logprobs asked %v", srv.Count(), srv.Requests()[1].LogProbs)
	}
	if _, ok := LogProbs(plain.Choices[0]); ok {
		t.Error("log-probabilities on a call that did not ask for them")
	}
}

func TestLogProbsAbsent(t *testing.T) {
	ctx := context.Background()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "Who designed Go?")}

	t.Run("server ignores the request", func(t *testing.T) {
		srv := llmtest.NewServer(llmtest.Fixed("Rob Pike"))
		defer srv.Close()
		c := newTestClient(t, srv)
		if !c.SupportsLogProbs() {
			t.Fatal("openai clients support log-probabilities")
		}
		resp, err := c.GenerateContent(ctx, msgs, WithLogProbs(0))
		if err != nil {
			t.Fatal(err)
		}
		if !srv.Requests()[0].LogProbs {
			t.Error("not asked for")
		}
		if resp.Choices[0].Content != "Rob Pike" {
			t.Errorf("content %q", resp.Choices[0].Content)
		}
		if tokens, ok := LogProbs(resp.Choices[0]); ok {
			t.Errorf("LogProbs = %v; the server sent none", tokens)
		}
	})

	t.Run("streamed call", func(t *testing.T) {
		srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Tokens: llmtest.Tokens("Rob Pike", -0.1)}
		})
		defer srv.Close()
		c := newTestClient(t, srv)
		var streamed strings.Builder
		resp, err := c.GenerateContent(ctx, msgs, WithLogProbs(0), llms.WithStreamingFunc(func(_ context.Context, b []byte) error {
			streamed.Write(b)
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		if streamed.String() != "Rob Pike" || srv.Requests()[0].LogProbs {
			t.Errorf("streamed %q, logprobs asked %v: a stream is passed through untouched", streamed.String(), srv.Requests()[0].LogProbs)
		}
		if _, ok := LogProbs(resp.Choices[0]); ok {
			t.Error("log-probabilities on a streamed call")
		}
	})

	t.Run("ollama", func(t *testing.T) {
		srv := llmtest.NewServer(llmtest.Fixed("Rob Pike"))
		defer srv.Close()
		c, err := New("ollama:qwen2.5", WithBaseURL(srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.SupportsLogProbs() {
			t.Error("langchaingo's ollama client returns no log-probabilities")
		}
		resp, err := c.GenerateContent(ctx, msgs, WithLogProbs(3))
		if err != nil {
			t.Fatal(err)
		}
		if r := srv.Requests()[0]; r.Path != "/api/chat" || r.LogProbs {
			t.Errorf("request %s logprobs %v", r.Path, r.LogProbs)
		}
		if _, ok := LogProbs(resp.Choices[0]); ok {
			t.Error("log-probabilities from ollama")
		}
	})
}

func TestWithLogProbsKeepsOtherMetadata(t *testing.T) {
	var o llms.CallOptions
	llms.WithMetadata(map[string]any{"user": "u1"})(&o)
	WithLogProbs(50)(&o)
	if o.Metadata["user"] != "u1" {
		t.Errorf("metadata lost: %v", o.Metadata)
	}
	if top, ok := wantsLogProbs(o); !ok || top != maxTopLogProbs {
		t.Errorf("wantsLogProbs = %d, %v; want the limit %d", top, ok, maxTopLogProbs)
	}
}
