package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Token log-probabilities. langchaingo v0.1.14 has no call option for them
// and its OpenAI client drops them from the response (its request type has
// the fields, but GenerateContent never sets them), so a Client asks for
// them in the HTTP transport it already owns: the request body gains
// "logprobs": true and "top_logprobs", and the answer's
// choices[0].logprobs.content is read from the response on its way back.
// Only non-streamed OpenAI-compatible chat completions carry them.

// logProbsKey marks a call that wants log-probabilities. It travels in
// CallOptions.Metadata, so it is part of the response cache key; the
// "openai:" prefix keeps langchaingo's OpenAI client from sending it, and
// the other providers read only their own metadata keys.
const logProbsKey = "openai:docgraph_logprobs"

// generationKey is where a Client puts the log-probabilities in the
// answer's ContentChoice.GenerationInfo (and so in the response cache).
const generationKey = "LogProbs"

// maxTopLogProbs is OpenAI's limit on alternatives per position.
const maxTopLogProbs = 20

// TokenLogProb is one generated token: its text, its log-probability (the
// log of the softmax over the vocabulary) and the most likely alternatives
// at its position.
type TokenLogProb struct {
	Token   string  `json:"token"`
	LogProb float64 `json:"logprob"`
	// Bytes are the token's UTF-8 bytes, when the server sends them: a
	// character split across tokens shows as U+FFFD in Token.
	Bytes []int        `json:"bytes,omitempty"`
	Top   []TopLogProb `json:"top_logprobs,omitempty"`
}

// TopLogProb is an alternative token at one position.
type TopLogProb struct {
	Token   string  `json:"token"`
	LogProb float64 `json:"logprob"`
}

// Text is the token's text: its bytes when the server sent them.
func (t TokenLogProb) Text() string {
	if len(t.Bytes) == 0 {
		return t.Token
	}
	b := make([]byte, len(t.Bytes))
	for i, v := range t.Bytes {
		b[i] = byte(v)
	}
	return string(b)
}

// WithLogProbs asks for the log-probability of every answer token and of
// the top most likely alternatives at each position (0..20). A Client
// built by New for an OpenAI-compatible server honours it on non-streamed
// calls; read the result with LogProbs. Other models ignore it.
func WithLogProbs(top int) llms.CallOption {
	top = min(max(top, 0), maxTopLogProbs)
	return func(o *llms.CallOptions) {
		m := maps.Clone(o.Metadata)
		if m == nil {
			m = map[string]any{}
		}
		m[logProbsKey] = top
		o.Metadata = m
	}
}

// wantsLogProbs says whether opts asked for log-probabilities, and how many
// alternatives.
func wantsLogProbs(opts llms.CallOptions) (top int, ok bool) {
	v, ok := opts.Metadata[logProbsKey]
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int:
		return n, true
	case float64:
		return int(n), true
	}
	return 0, true
}

// LogProbs returns the token log-probabilities of an answer choice; ok is
// false when the provider returned none (it does not offer them, or it
// ignored the request).
func LogProbs(choice *llms.ContentChoice) (tokens []TokenLogProb, ok bool) {
	if choice == nil {
		return nil, false
	}
	switch v := choice.GenerationInfo[generationKey].(type) {
	case []TokenLogProb:
		return v, len(v) > 0
	case nil:
		return nil, false
	default:
		// Read back from the response cache as generic JSON.
		b, err := json.Marshal(v)
		if err != nil || json.Unmarshal(b, &tokens) != nil {
			return nil, false
		}
		return tokens, len(tokens) > 0
	}
}

// SupportsLogProbs says whether the client's provider can return token
// log-probabilities: OpenAI and OpenAI-compatible servers can (though a
// server may still ignore the request); langchaingo's Ollama and Anthropic
// clients cannot.
func (c *Client) SupportsLogProbs() bool { return c.provider == "openai" }

// logProbsRequest is what the transport does for one attempt that wants
// log-probabilities: rewrite the request, then read the answer's tokens.
type logProbsRequest struct {
	top    int
	tokens []TokenLogProb
}

// addLogProbs rewrites a chat completion request body to ask for
// log-probabilities. Any other request, or a body it cannot read as a JSON
// object, is left alone.
func addLogProbs(req *http.Request, top int) (*http.Request, error) {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/chat/completions") || req.Body == nil {
		return req, nil
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return withBody(req, body), nil
	}
	fields["logprobs"] = json.RawMessage("true")
	if top > 0 {
		fields["top_logprobs"] = json.RawMessage(strconv.Itoa(top))
	}
	patched, err := json.Marshal(fields)
	if err != nil {
		return withBody(req, body), nil
	}
	return withBody(req, patched), nil
}

func withBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r
}

// readLogProbs reads the first choice's token log-probabilities from a
// non-streamed chat completion, leaving the body readable for the client.
// A streamed answer (server-sent events) is passed through untouched.
func readLogProbs(resp *http.Response) ([]TokenLogProb, error) {
	if resp.StatusCode != http.StatusOK || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return nil, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var v struct {
		Choices []struct {
			LogProbs *struct {
				Content []TokenLogProb `json:"content"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Choices) == 0 || v.Choices[0].LogProbs == nil {
		return nil, nil // the client reports an unreadable answer itself
	}
	return v.Choices[0].LogProbs.Content, nil
}

// attachLogProbs puts a log-probabilities request on the attempt's
// recorder when want is set; nil otherwise.
func attachLogProbs(ctx context.Context, want bool, top int) *logProbsRequest {
	rec, _ := ctx.Value(recorderKey{}).(*attemptRecord)
	if !want || rec == nil {
		return nil
	}
	lp := &logProbsRequest{top: top}
	rec.mu.Lock()
	rec.logProbs = lp
	rec.mu.Unlock()
	return lp
}

// into stores the tokens the transport read in the choice's
// GenerationInfo, where LogProbs finds them.
func (lp *logProbsRequest) into(choice *llms.ContentChoice) {
	if lp == nil || choice == nil || len(lp.tokens) == 0 {
		return
	}
	if choice.GenerationInfo == nil {
		choice.GenerationInfo = map[string]any{}
	}
	choice.GenerationInfo[generationKey] = lp.tokens
}
