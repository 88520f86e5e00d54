package llm

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm/llmtest"
)

// TestBrokenAnswersAreErrors: answers that arrive broken must fail the
// call with a message saying so, never pass as a short or empty answer.
func TestBrokenAnswersAreErrors(t *testing.T) {
	const answer = "Alan Turing worked at Bletchley Park during the war."
	tests := []struct {
		name      string
		reply     llmtest.Reply
		stream    bool
		want      string
		wantCalls int // requests the client sent
	}{
		{name: "garbage stream", reply: llmtest.Reply{Raw: "<html>502 Bad Gateway</html>"}, stream: true,
			want: "nothing readable as an OpenAI chat completion stream", wantCalls: 1},
		{name: "garbage body", reply: llmtest.Reply{Raw: "<html>502 Bad Gateway</html>"},
			want: "unusable response", wantCalls: 1},
		{name: "stream cut cleanly", reply: llmtest.Reply{Content: answer, Cut: 2}, stream: true,
			want: "before the model finished", wantCalls: 1},
		{name: "stream dropped", reply: llmtest.Reply{Content: answer, Cut: 2, Abort: true}, stream: true,
			want: "answer stream broke", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return tt.reply })
			defer srv.Close()
			c := newTestClient(t, srv)
			var got strings.Builder
			opts := []llms.CallOption{}
			if tt.stream {
				opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, b []byte) error {
					got.Write(b)
					return nil
				}))
			}
			_, err := c.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")}, opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want an error saying %q, got %v (streamed %q)", tt.want, err, got.String())
			}
			if n := srv.Count(); n != tt.wantCalls {
				t.Errorf("%d requests, want %d: a broken answer is not retried once part of it was shown", n, tt.wantCalls)
			}
		})
	}
}

// TestCompleteStreamPasses: the check for a finish_reason accepts a whole
// stream.
func TestCompleteStreamPasses(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed("a whole answer"))
	defer srv.Close()
	c := newTestClient(t, srv)
	resp, err := c.GenerateContent(context.Background(), []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")},
		llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
	if err != nil || resp.Choices[0].Content != "a whole answer" {
		t.Fatalf("%v %+v", err, resp)
	}
}

// TestNetworkErrorsNameEndpointAndCause: a closed port must say which URL
// and why, never the key.
func TestNetworkErrorsNameEndpointAndCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	c, err := New("openai:test-model", WithAPIKey(testKey), WithBaseURL("http://user:pw@"+addr+"/v1"),
		WithBackoff(time.Millisecond, time.Millisecond), WithRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Call(context.Background(), "q")
	var ce *CallError
	if !errors.As(err, &ce) {
		t.Fatalf("want a CallError, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"http://" + addr + "/v1/chat/completions", "connection refused", "2 attempt(s)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
	for _, secret := range []string{testKey, "pw@", "user:"} {
		if strings.Contains(msg, secret) {
			t.Errorf("error shows %q: %s", secret, msg)
		}
	}
}

// TestHungServerTimesOut: a server that never answers ends the call at
// the per-call timeout, naming the endpoint.
func TestHungServerTimesOut(t *testing.T) {
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} })
	defer srv.Close()
	c := newTestClient(t, srv, WithTimeout(100*time.Millisecond), WithRetries(1))
	_, err := c.Call(context.Background(), "q")
	if err == nil || !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), srv.OpenAIBaseURL()+"/chat/completions") {
		t.Fatalf("want a timeout naming the endpoint, got %v", err)
	}
	// The server logs a request when its handler runs, which a loaded
	// machine may start after the client has given up on it.
	for deadline := time.Now().Add(10 * time.Second); srv.Count() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if srv.Count() != 2 {
		t.Errorf("%d requests, want 2 (one retry)", srv.Count())
	}
}
