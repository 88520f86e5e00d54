package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm/llmtest"
)

// TestAnswerSizeIsCapped: a 30 MB answer, whole or streamed, fails the
// call with an error naming the cap, once (asking again would bring the
// same 30 MB), instead of being read into memory and passed on.
func TestAnswerSizeIsCapped(t *testing.T) {
	huge := strings.Repeat("All work and no play. ", 30<<20/22)
	for _, c := range []struct {
		name             string
		stream, logProbs bool
	}{
		{name: "whole"},
		{name: "streamed", stream: true},
		{name: "whole, with log-probabilities", logProbs: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Fixed(huge))
			defer srv.Close()
			srv.SetChunkSize(16 << 10) // each event under the client's 64 KiB line limit
			cl := newTestClient(t, srv)
			var opts []llms.CallOption
			var streamed int
			if c.stream {
				opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, b []byte) error {
					streamed += len(b)
					return nil
				}))
			}
			if c.logProbs {
				opts = append(opts, WithLogProbs(0))
			}
			resp, err := cl.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")}, opts...)
			if err == nil {
				t.Fatalf("a %d-byte answer was accepted (%d bytes of content)", len(huge), len(resp.Choices[0].Content))
			}
			var ce *CallError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "8 MiB") || !strings.Contains(err.Error(), srv.OpenAIBaseURL()) {
				t.Errorf("error %q does not name the endpoint and the 8 MiB cap", err)
			}
			if n := srv.Count(); n != 1 {
				t.Errorf("%d requests: an answer over the cap is not asked for again", n)
			}
			if streamed > DefaultMaxAnswerBytes {
				t.Errorf("%d bytes streamed to the caller, over the cap", streamed)
			}
			t.Logf("%v", err)
		})
	}

	// An answer under the cap still passes.
	srv := llmtest.NewServer(llmtest.Fixed(huge[:1<<20]))
	defer srv.Close()
	if got, err := newTestClient(t, srv).Call(context.Background(), "q"); err != nil || len(got) != 1<<20 {
		t.Errorf("a 1 MiB answer: %d bytes, %v", len(got), err)
	}
}

// TestEmbeddingResponsesAreCapped: the embedder's cap grows with its batch
// (vectors are large), and a response over it fails the same way.
func TestEmbeddingResponsesAreCapped(t *testing.T) {
	if got := (&config{batchSize: 64}).responseCap(true); got != 16<<20 {
		t.Errorf("cap for a batch of 64 texts: %d, want 16 MiB", got)
	}
	srv := llmtest.NewServer(llmtest.Fixed(""))
	defer srv.Close()
	srv.Dim = 1024 // a vector is some 20 KB of JSON
	_, err := NewEmbedder(context.Background(), "openai:emb", WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL()),
		WithMaxResponseBytes(4<<10))
	if err == nil || !strings.Contains(err.Error(), "over the 4 KiB limit") {
		t.Errorf("a 20 KB embedding response under a 4 KiB cap: %v", err)
	}
	if _, err := NewEmbedder(context.Background(), "openai:emb", WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL())); err != nil {
		t.Errorf("under the default cap: %v", err)
	}
}
