// Package llmtest runs a real HTTP server speaking the OpenAI and Ollama chat
// and embedding APIs, OpenAI chat streamed (server-sent events) or not, with
// scripted answers and a log of every request, so tests can drive
// langchaingo's real clients end to end.
package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Message is one chat message as the server received it.
type Message struct {
	Role    string
	Content string
}

// Request is one request as the server received it.
type Request struct {
	N           int // arrival order, from 1
	Time        time.Time
	Path        string
	Auth        string // the Authorization header
	Model       string
	Messages    []Message // chat requests
	Input       []string  // embedding requests
	Temperature float64
	Stream      bool // the client asked for the answer as a stream
	// JSONMode says the client asked for a JSON object answer: OpenAI's
	// response_format json_object or Ollama's format "json".
	JSONMode bool
	// LogProbs says the client asked for token log-probabilities (OpenAI's
	// logprobs), TopLogProbs how many alternatives per token.
	LogProbs    bool
	TopLogProbs int
}

// Last is the content of the request's last message.
func (r Request) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// IsEmbedding says whether the request asked for embeddings.
func (r Request) IsEmbedding() bool { return len(r.Input) > 0 }

// Reply is how the server answers one request.
type Reply struct {
	Status     int           // HTTP status; 200 when zero
	Content    string        // the assistant's answer (chat, status 200)
	Error      string        // the error message sent with a non-200 status
	RetryAfter string        // Retry-After header value, if any
	Delay      time.Duration // wait before answering; cut short if the client leaves
	// Usage reported with a chat answer; omitted when both are zero.
	PromptTokens, CompletionTokens int
	// Tokens are the answer's tokens with their log-probabilities, sent as
	// choices[0].logprobs.content of a non-streamed OpenAI answer when the
	// request asks for logprobs (without Tokens such a request gets
	// "logprobs": null, as from a server that does not offer them). When
	// Content is empty the answer is the tokens' concatenation.
	Tokens []Token
	// Raw, when set, is the whole body of a 200 answer instead of an API
	// response: garbage for the client to choke on (OpenAI chat).
	Raw string
	// Cut, when above zero, ends an OpenAI chat answer early: a streamed
	// one after that many content events (no finish_reason, no [DONE]), a
	// plain one after that many bytes of its JSON. The body just ends, as
	// when a proxy gives up; with Abort the connection is dropped there
	// instead, so the client sees the body break off.
	Cut   int
	Abort bool
}

// Token is one answer token with its log-probability and, for the
// top_logprobs list, the likeliest alternatives at its position.
type Token struct {
	Text    string
	LogProb float64
	Top     []Token
}

// Tokens splits content into tokens the way GPT tokenizers roughly do
// (words with their leading space, punctuation and line breaks on their
// own), each with the same log-probability.
func Tokens(content string, logprob float64) []Token {
	var out []Token
	for _, t := range SplitTokens(content) {
		out = append(out, Token{Text: t, LogProb: logprob})
	}
	return out
}

// SplitTokens cuts text into word-like tokens: a run of letters or digits
// with the spaces before it, each other character alone; concatenated they
// give back text.
func SplitTokens(text string) []string {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	word := func(i int) int { // end of the word starting at i
		for i < len(text) {
			r, n := utf8.DecodeRuneInString(text[i:])
			if !isWord(r) {
				break
			}
			i += n
		}
		return i
	}
	var out []string
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		j := i + n
		switch {
		case isWord(r):
			j = word(i)
		case r == ' ':
			if next, _ := utf8.DecodeRuneInString(text[j:]); j < len(text) && isWord(next) {
				j = word(j)
			}
		}
		out = append(out, text[i:j])
		i = j
	}
	return out
}

func joinTokens(ts []Token) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString(t.Text)
	}
	return b.String()
}

// logprobsJSON is the OpenAI wire form of tokens: token, logprob, bytes and
// the first top alternatives.
func logprobsJSON(ts []Token, top int) map[string]any {
	content := make([]map[string]any, len(ts))
	for i, t := range ts {
		alts := []map[string]any{}
		for _, a := range t.Top[:min(top, len(t.Top))] {
			alts = append(alts, map[string]any{"token": a.Text, "logprob": a.LogProb, "bytes": byteList(a.Text)})
		}
		content[i] = map[string]any{"token": t.Text, "logprob": t.LogProb, "bytes": byteList(t.Text), "top_logprobs": alts}
	}
	return map[string]any{"content": content}
}

func byteList(s string) []int {
	out := make([]int, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = int(s[i])
	}
	return out
}

// Responder chooses the reply to a request.
type Responder func(r Request) Reply

// Script answers the n-th request with replies[n-1]; past the end of the
// script it answers 418 so that a test making too many calls fails loudly.
func Script(replies ...Reply) Responder {
	return func(r Request) Reply {
		if r.N <= len(replies) {
			return replies[r.N-1]
		}
		return Reply{Status: http.StatusTeapot, Error: fmt.Sprintf("script exhausted at request %d", r.N)}
	}
}

// Fixed answers every request with content.
func Fixed(content string) Responder {
	return func(Request) Reply { return Reply{Content: content} }
}

// Server is the fake model server. Base URLs: URL+"/v1" for openai,
// URL for ollama.
type Server struct {
	*httptest.Server
	// Dim is the length of the embedding vectors returned (default 8).
	Dim int
	// chunkSize is how many bytes each event of a streamed OpenAI answer
	// carries (SetChunkSize; default 8), so tests can see an answer arrive
	// in pieces.
	chunkSize int

	respond  Responder
	mu       sync.Mutex
	reqs     []Request
	inflight int
	peak     int
}

// NewServer starts a server answering with respond. Close it when done.
func NewServer(respond Responder) *Server {
	s := &Server{Dim: 8, chunkSize: 8, respond: respond}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.openaiChat)
	mux.HandleFunc("POST /v1/embeddings", s.openaiEmbed)
	mux.HandleFunc("POST /api/chat", s.ollamaChat)
	mux.HandleFunc("POST /api/embed", s.ollamaEmbed)
	s.Server = httptest.NewServer(mux)
	return s
}

// SetChunkSize sets how many bytes each event of a streamed OpenAI answer
// carries. It locks, because the requests that read it may come from a
// child process, with nothing the race detector sees ordering them after
// the test's write.
func (s *Server) SetChunkSize(n int) {
	s.mu.Lock()
	s.chunkSize = n
	s.mu.Unlock()
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// PeakInFlight is the largest number of requests the server was handling at once.
func (s *Server) PeakInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// OpenAIBaseURL is the base URL to give an OpenAI client.
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// log records r and returns the reply after its delay; ok is false when the
// client went away during the delay.
func (s *Server) log(w http.ResponseWriter, hr *http.Request, r Request) (Reply, bool) {
	s.mu.Lock()
	r.N = len(s.reqs) + 1
	r.Time = time.Now()
	r.Path = hr.URL.Path
	r.Auth = hr.Header.Get("Authorization")
	s.reqs = append(s.reqs, r)
	s.inflight++
	s.peak = max(s.peak, s.inflight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()

	rep := s.respond(r)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-hr.Context().Done():
			return rep, false
		}
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.WriteHeader(rep.Status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"test"}}`, rep.Error)
		return rep, false
	}
	return rep, true
}

// chatBody is the part of an OpenAI or Ollama chat request the server reads.
type chatBody struct {
	Model       string  `json:"model"`
	Temperature float64 `json:"temperature"`
	Stream      bool    `json:"stream"`
	Messages    []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"` // openai
	// Format is Ollama's; raw because newer clients may send a JSON schema.
	Format      json.RawMessage `json:"format"`
	LogProbs    bool            `json:"logprobs"`
	TopLogProbs int             `json:"top_logprobs"`
}

func (b chatBody) request() Request {
	r := Request{
		Model: b.Model, Temperature: b.Temperature, Stream: b.Stream,
		JSONMode: b.ResponseFormat != nil && b.ResponseFormat.Type == "json_object" || string(b.Format) == `"json"`,
		LogProbs: b.LogProbs, TopLogProbs: b.TopLogProbs,
	}
	for _, m := range b.Messages {
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: text(m.Content)})
	}
	return r
}

// text reads a message content that is either a string or a list of parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
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

// chat reads and logs a chat request of either API; ok is false when the
// response has already been sent.
func (s *Server) chat(w http.ResponseWriter, hr *http.Request) (b chatBody, rep Reply, ok bool) {
	if err := json.NewDecoder(hr.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return b, rep, false
	}
	rep, ok = s.log(w, hr, b.request())
	return b, rep, ok
}

func (s *Server) openaiChat(w http.ResponseWriter, hr *http.Request) {
	b, rep, ok := s.chat(w, hr)
	if !ok {
		return
	}
	content := rep.Content
	if content == "" {
		content = joinTokens(rep.Tokens)
	}
	if rep.Raw != "" {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, rep.Raw)
		return
	}
	if b.Stream {
		rep.Content = content
		s.stream(w, b.Model, rep)
		return
	}
	choice := map[string]any{
		"index": 0, "finish_reason": "stop",
		"message": map[string]any{"role": "assistant", "content": content},
	}
	if b.LogProbs {
		choice["logprobs"] = nil
		if rep.Tokens != nil {
			choice["logprobs"] = logprobsJSON(rep.Tokens, b.TopLogProbs)
		}
	}
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": time.Now().Unix(), "model": b.Model,
		"choices": []map[string]any{choice},
	}
	if rep.PromptTokens != 0 || rep.CompletionTokens != 0 {
		resp["usage"] = map[string]int{
			"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
			"total_tokens": rep.PromptTokens + rep.CompletionTokens,
		}
	}
	if rep.Cut > 0 {
		b, _ := json.Marshal(resp)
		w.Write(b[:min(rep.Cut, len(b))])
		if rep.Abort {
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		return
	}
	json.NewEncoder(w).Encode(resp)
}

// stream sends rep.Content as OpenAI server-sent events: the role first,
// then the content in pieces of the chunk size, then finish_reason "stop" and
// [DONE] (unless rep.Cut ends it early).
func (s *Server) stream(w http.ResponseWriter, model string, rep Reply) {
	answer := rep.Content
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	created := time.Now().Unix()
	event := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}},
		})
		fmt.Fprintf(w, "data: %s\n\n", b)
		// Flushing each event makes the client see separate chunks rather
		// than one buffered body.
		if flusher != nil {
			flusher.Flush()
		}
	}
	event(map[string]any{"role": "assistant"}, nil)
	s.mu.Lock()
	size := max(s.chunkSize, 1)
	s.mu.Unlock()
	sent := 0
	for rest := answer; rest != ""; {
		if rep.Cut > 0 && sent == rep.Cut {
			if rep.Abort {
				panic(http.ErrAbortHandler) // drops the connection mid-body
			}
			return
		}
		n := min(size, len(rest))
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++ // a client may decode each chunk on its own
		}
		event(map[string]any{"content": rest[:n]}, nil)
		rest = rest[n:]
		sent++
	}
	event(map[string]any{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (s *Server) ollamaChat(w http.ResponseWriter, hr *http.Request) {
	b, rep, ok := s.chat(w, hr)
	if !ok {
		return
	}
	json.NewEncoder(w).Encode(map[string]any{
		"model": b.Model, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": "assistant", "content": rep.Content},
		"done":    true, "prompt_eval_count": rep.PromptTokens, "eval_count": rep.CompletionTokens,
	})
}

func (s *Server) openaiEmbed(w http.ResponseWriter, hr *http.Request) {
	var b struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(hr.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, ok := s.log(w, hr, Request{Model: b.Model, Input: b.Input}); !ok {
		return
	}
	data := make([]map[string]any, len(b.Input))
	for i, t := range b.Input {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": s.Vector(t)}
	}
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": b.Model, "data": data})
}

func (s *Server) ollamaEmbed(w http.ResponseWriter, hr *http.Request) {
	var b struct {
		Model string `json:"model"`
		Input string `json:"input"`
	}
	if err := json.NewDecoder(hr.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, ok := s.log(w, hr, Request{Model: b.Model, Input: []string{b.Input}}); !ok {
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"model": b.Model, "embeddings": [][]float32{s.Vector(b.Input)}})
}

// Vector is the unit vector the server returns for text: a deterministic
// function of the text, so tests can compare what the client got.
func (s *Server) Vector(text string) []float32 {
	v := make([]float32, s.Dim)
	var norm float64
	for i := range v {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d\x00%s", i, text)
		x := float64(h.Sum64()%2000)/1000 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / math.Sqrt(norm))
		}
	}
	return v
}
