package llmtest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"docgraph/llm/llmtest"
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
	srv.ChunkSize = 3

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
		longer = longer || len(c) > srv.ChunkSize
	}
	if !longer {
		t.Errorf("no chunk outgrew ChunkSize %d; the answer does not test splitting: %q", srv.ChunkSize, chunks)
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
