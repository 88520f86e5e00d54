// Package retrievetest runs a real HTTP server speaking the OpenAI chat API,
// streamed (server-sent events) or not, with scripted answers, so tests can
// drive langchaingo's OpenAI client through keyword, Cypher and answer calls.
package retrievetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Message is one chat message as the server received it.
type Message struct {
	Role    string
	Content string
}

// Request is one chat request as the server received it.
type Request struct {
	Stream   bool
	JSONMode bool // response_format json_object was asked for
	Messages []Message
}

// Last is the content of the request's last message.
func (r Request) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// Responder chooses the answer to a request; a returned status other than
// 0 or 200 is sent as an error with the answer as its message.
type Responder func(r Request) (answer string, status int)

// Server is the fake chat server; point langchaingo's OpenAI client at BaseURL.
type Server struct {
	*httptest.Server
	respond Responder
	// ChunkSize is how many bytes each streamed event carries (default 8).
	ChunkSize int

	mu   sync.Mutex
	reqs []Request
}

// NewServer starts a server answering with respond; it is closed when the
// test calling Close (usually via t.Cleanup) ends.
func NewServer(respond Responder) *Server {
	s := &Server{respond: respond, ChunkSize: 8}
	s.Server = httptest.NewServer(http.HandlerFunc(s.chat))
	return s
}

// BaseURL is the OpenAI base URL of the server.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) chat(w http.ResponseWriter, hr *http.Request) {
	if !strings.HasSuffix(hr.URL.Path, "/chat/completions") {
		http.NotFound(w, hr)
		return
	}
	var body struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	if err := json.NewDecoder(hr.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Stream: body.Stream, JSONMode: body.ResponseFormat != nil && body.ResponseFormat.Type == "json_object"}
	for _, m := range body.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: text(m.Content)})
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	answer, status := s.respond(req)
	if status != 0 && status != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"test"}}`, answer)
		return
	}
	created := time.Now().Unix()
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": created, "model": "test",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": answer}}},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	event := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": "test",
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event(map[string]any{"role": "assistant"}, nil)
	size := max(s.ChunkSize, 1)
	for rest := answer; rest != ""; {
		n := min(size, len(rest))
		for n < len(rest) && rest[n]&0xC0 == 0x80 {
			n++ // never split a character
		}
		event(map[string]any{"content": rest[:n]}, nil)
		rest = rest[n:]
	}
	event(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}
