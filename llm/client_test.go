package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/docgraph/docgraph/llm/llmtest"
)

const testKey = "sk-test-0123456789abcdef"

// newTestClient builds an openai:test-model Client against srv with fast
// backoff, so tests spend their time on real HTTP, not on sleeping.
func newTestClient(t *testing.T, srv *llmtest.Server, opts ...Option) *Client {
	t.Helper()
	base := []Option{
		WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL()),
		WithBackoff(time.Millisecond, 5*time.Millisecond), WithRetries(3),
	}
	c, err := New("openai:test-model", append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{in: "openai:gpt-4o-mini", want: Spec{"openai", "gpt-4o-mini"}},
		{in: " Ollama:qwen2.5:7b ", want: Spec{"ollama", "qwen2.5:7b"}},
		{in: "anthropic:claude-3-5-haiku-latest", want: Spec{"anthropic", "claude-3-5-haiku-latest"}},
		{in: "gpt-4o", wantErr: "want provider:model"},
		{in: "openai:", wantErr: "want provider:model"},
		{in: "bard:x", wantErr: `unknown provider "bard"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpec(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSpec(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSpec(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestProvidersFromEnvironment(t *testing.T) {
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "hello from " + r.Path}
	})
	defer srv.Close()

	tests := []struct {
		name     string
		env      map[string]string
		spec     string
		wantErr  string
		wantPath string
		wantAuth string
	}{
		{
			name:     "openai with key and base URL",
			env:      map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": srv.OpenAIBaseURL()},
			spec:     "openai:gpt-test",
			wantPath: "/v1/chat/completions", wantAuth: "Bearer " + testKey,
		},
		{
			name:     "openai-compatible local server without key",
			env:      map[string]string{"OPENAI_API_KEY": "", "OPENAI_BASE_URL": srv.OpenAIBaseURL()},
			spec:     "openai:llama-3-8b",
			wantPath: "/v1/chat/completions", wantAuth: "Bearer " + placeholderKey,
		},
		{
			name:    "openai without key or base URL",
			env:     map[string]string{"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "OPENAI_API_BASE": ""},
			spec:    "openai:gpt-test",
			wantErr: "OPENAI_API_KEY is not set",
		},
		{
			name:     "ollama via OLLAMA_HOST",
			env:      map[string]string{"OLLAMA_HOST": srv.URL},
			spec:     "ollama:qwen2.5:7b",
			wantPath: "/api/chat",
		},
		{
			name:    "anthropic without key",
			env:     map[string]string{"ANTHROPIC_API_KEY": ""},
			spec:    "anthropic:claude-test",
			wantErr: "ANTHROPIC_API_KEY is not set",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, err := New(tt.spec, WithRetries(0))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%q) error = %v, want %q", tt.spec, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			before := srv.Count()
			got, err := c.Call(context.Background(), "hi")
			if err != nil {
				t.Fatal(err)
			}
			if got != "hello from "+tt.wantPath {
				t.Errorf("answer = %q, want it from %s", got, tt.wantPath)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			spec, _ := ParseSpec(tt.spec)
			if reqs[0].Model != spec.Model || reqs[0].Auth != tt.wantAuth {
				t.Errorf("request model %q auth %q, want %q %q", reqs[0].Model, reqs[0].Auth, spec.Model, tt.wantAuth)
			}
			if c.Name() != spec.String() {
				t.Errorf("Name() = %q, want %q", c.Name(), spec)
			}
		})
	}
}

func TestRetries(t *testing.T) {
	ok := llmtest.Reply{Content: "fine"}
	tests := []struct {
		name        string
		script      []llmtest.Reply
		opts        []Option
		wantErr     bool
		wantStatus  int // CallError.Status
		wantReqs    int
		wantRetries int64
		minWait     time.Duration // Stats.RetryWait at least
		minGap      time.Duration // between the first two requests, in the server's log
	}{
		{
			name:   "429 with Retry-After, then success",
			script: []llmtest.Reply{{Status: 429, Error: "slow down", RetryAfter: "1"}, ok},
			// Backoff alone would wait milliseconds: only Retry-After explains a second.
			wantReqs: 2, wantRetries: 1, minWait: time.Second, minGap: time.Second,
		},
		{
			name:     "500s are retried",
			script:   []llmtest.Reply{{Status: 500, Error: "boom"}, {Status: 502, Error: "bad gateway"}, ok},
			wantReqs: 3, wantRetries: 2,
		},
		{
			name: "timeouts are retried",
			script: []llmtest.Reply{
				{Content: "too late", Delay: time.Hour}, ok,
			},
			opts:     []Option{WithTimeout(2 * time.Second)},
			wantReqs: 2, wantRetries: 1,
		},
		{
			name: "a permanent failure gives up after the retry budget",
			script: []llmtest.Reply{
				{Status: 503, Error: "down"}, {Status: 503, Error: "down"}, {Status: 503, Error: "down"},
				{Status: 503, Error: "down"}, ok,
			},
			opts:    []Option{WithRetries(2)},
			wantErr: true, wantStatus: 503, wantReqs: 3, wantRetries: 2,
		},
		{
			name:    "400 is not retried",
			script:  []llmtest.Reply{{Status: 400, Error: "bad request"}, ok},
			wantErr: true, wantStatus: 400, wantReqs: 1, wantRetries: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Script(tt.script...))
			defer srv.Close()
			c := newTestClient(t, srv, tt.opts...)

			got, err := c.Call(context.Background(), "question")
			st := c.Stats()
			if tt.wantErr {
				var ce *CallError
				if !errors.As(err, &ce) {
					t.Fatalf("error = %v, want a *CallError", err)
				}
				if ce.Status != tt.wantStatus || ce.Attempts != tt.wantReqs {
					t.Errorf("CallError status %d attempts %d, want %d %d", ce.Status, ce.Attempts, tt.wantStatus, tt.wantReqs)
				}
				if st.Failures != 1 {
					t.Errorf("Failures = %d, want 1", st.Failures)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if got != "fine" || st.Failures != 0 {
					t.Errorf("answer %q failures %d, want \"fine\" 0", got, st.Failures)
				}
			}
			if n := srv.Count(); n != tt.wantReqs {
				t.Errorf("server saw %d requests, want %d", n, tt.wantReqs)
			}
			if st.Calls != 1 || st.Retries != tt.wantRetries {
				t.Errorf("Calls %d Retries %d, want 1 %d", st.Calls, st.Retries, tt.wantRetries)
			}
			if st.RetryWait < tt.minWait {
				t.Errorf("RetryWait = %v, want at least %v", st.RetryWait, tt.minWait)
			}
			if tt.minGap > 0 {
				r := srv.Requests()
				if gap := r[1].Time.Sub(r[0].Time); gap < tt.minGap {
					t.Errorf("second request came %v after the first, before Retry-After %v", gap, tt.minGap)
				}
			}
		})
	}
}

func TestCallerCancellationStopsRetrying(t *testing.T) {
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 503, RetryAfter: "60"} })
	defer srv.Close()
	c := newTestClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.Count() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := c.Call(ctx, "q")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if n := srv.Count(); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestSecretsStayOutOfErrorsAndLogs(t *testing.T) {
	// A key with no recognisable shape, so only knowing it can hide it, and
	// a careless server that echoes credentials into its errors.
	const key = "plainsecret-4f9a8b7c6d5e"
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		status := 500
		if r.N > 1 {
			status = 401
		}
		return llmtest.Reply{Status: status, Error: "rejected credentials " + r.Auth + " key=" + key}
	})
	defer srv.Close()
	var logs bytes.Buffer
	c := newTestClient(t, srv, WithAPIKey(key), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))

	_, err := c.Call(context.Background(), "q")
	if err == nil {
		t.Fatal("want an error from a failing server")
	}
	if srv.Count() != 2 {
		t.Fatalf("server saw %d requests, want 2 (one retry after the 500)", srv.Count())
	}
	if got := srv.Requests()[0].Auth; got != "Bearer "+key {
		t.Fatalf("server got Authorization %q; the test needs the real key sent", got)
	}
	for what, text := range map[string]string{"error": err.Error(), "logs": logs.String()} {
		if strings.Contains(text, key) || strings.Contains(text, key[6:]) {
			t.Errorf("%s contain the API key: %s", what, text)
		}
		if !strings.Contains(text, "rejected credentials") {
			t.Errorf("%s lost the server's message: %s", what, text)
		}
	}
	if !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("error %q does not name the status", err)
	}
}

func TestTokenCounters(t *testing.T) {
	tests := []struct {
		name                 string
		reply                llmtest.Reply
		wantPrompt, wantComp int64 // 0: estimated, must be positive
	}{
		{"reported by the server", llmtest.Reply{Content: "four words of answer", PromptTokens: 123, CompletionTokens: 7}, 123, 7},
		{"estimated when absent", llmtest.Reply{Content: "four words of answer"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return tt.reply })
			defer srv.Close()
			c := newTestClient(t, srv)
			if _, err := c.Call(context.Background(), strings.Repeat("a long prompt ", 40)); err != nil {
				t.Fatal(err)
			}
			st := c.Stats()
			if tt.wantPrompt != 0 {
				if st.PromptTokens != tt.wantPrompt || st.CompletionTokens != tt.wantComp {
					t.Errorf("tokens %d/%d, want %d/%d", st.PromptTokens, st.CompletionTokens, tt.wantPrompt, tt.wantComp)
				}
				return
			}
			if st.PromptTokens < 100 || st.CompletionTokens < 3 {
				t.Errorf("estimated tokens %d/%d, want about 140/5", st.PromptTokens, st.CompletionTokens)
			}
		})
	}
}

func TestCacheMakesARepeatRunFree(t *testing.T) {
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: fmt.Sprintf("answer to %s at %.1f", r.Last(), r.Temperature), PromptTokens: 5, CompletionTokens: 3}
	})
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "graph", "llm-cache.sqlite")
	prompts := []string{"alpha", "beta", "gamma", "beta"}

	run := func(opts ...llms.CallOption) ([]string, Stats) {
		c := newTestClient(t, srv, WithCache(path))
		var out []string
		for _, p := range prompts {
			a, err := c.Call(context.Background(), p, opts...)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		return out, c.Stats()
	}

	first, st1 := run()
	if st1.Calls != 3 || st1.CacheHits != 1 || srv.Count() != 3 {
		t.Fatalf("first run: calls %d hits %d requests %d, want 3 1 3", st1.Calls, st1.CacheHits, srv.Count())
	}
	second, st2 := run()
	if st2.Calls != 0 || st2.CacheHits != 4 || srv.Count() != 3 {
		t.Fatalf("second run: calls %d hits %d requests %d, want 0 4 3", st2.Calls, st2.CacheHits, srv.Count())
	}
	if st2.PromptTokens != 0 {
		t.Errorf("cache hits charged %d prompt tokens", st2.PromptTokens)
	}
	for i := range first {
		if first[i] != second[i] {
			t.Errorf("prompt %q: cached answer %q, first answer %q", prompts[i], second[i], first[i])
		}
	}
	// Another temperature is another request.
	if _, st := run(llms.WithTemperature(0.7)); st.Calls != 3 {
		t.Errorf("changed temperature: %d calls, want 3", st.Calls)
	}
}

func TestCacheKeyCoversModelMessagesAndParameters(t *testing.T) {
	msgs := func(texts ...string) []llms.MessageContent {
		var m []llms.MessageContent
		for i, s := range texts {
			role := llms.ChatMessageTypeHuman
			if i%2 == 1 {
				role = llms.ChatMessageTypeAI
			}
			m = append(m, llms.TextParts(role, s))
		}
		return m
	}
	const at = "https://a.example/v1"
	base, _ := chatKey("openai", at, "m", msgs("a", "b", "c"), llms.CallOptions{})
	tests := []struct {
		name     string
		provider string
		endpoint string
		model    string
		msgs     []llms.MessageContent
		opts     llms.CallOptions
		same     bool
	}{
		{"identical", "openai", at, "m", msgs("a", "b", "c"), llms.CallOptions{}, true},
		{"streaming callback ignored", "openai", at, "m", msgs("a", "b", "c"),
			llms.CallOptions{StreamingFunc: func(context.Context, []byte) error { return nil }}, true},
		{"provider", "ollama", at, "m", msgs("a", "b", "c"), llms.CallOptions{}, false},
		{"model", "openai", at, "m2", msgs("a", "b", "c"), llms.CallOptions{}, false},
		{"endpoint", "openai", "https://b.example/v1", "m", msgs("a", "b", "c"), llms.CallOptions{}, false},
		{"earlier message", "openai", at, "m", msgs("x", "b", "c"), llms.CallOptions{}, false},
		{"history length", "openai", at, "m", msgs("a", "b"), llms.CallOptions{}, false},
		{"temperature", "openai", at, "m", msgs("a", "b", "c"), llms.CallOptions{Temperature: 0.2}, false},
		{"max tokens", "openai", at, "m", msgs("a", "b", "c"), llms.CallOptions{MaxTokens: 100}, false},
		{"stop words", "openai", at, "m", msgs("a", "b", "c"), llms.CallOptions{StopWords: []string{"##"}}, false},
		{"json mode", "openai", at, "m", msgs("a", "b", "c"), llms.CallOptions{JSONMode: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, ok := chatKey(tt.provider, tt.endpoint, tt.model, tt.msgs, tt.opts)
			if !ok {
				t.Fatal("key not computed")
			}
			if (k == base) != tt.same {
				t.Errorf("key equal to base = %v, want %v", k == base, tt.same)
			}
		})
	}
}

func TestConcurrencyLimit(t *testing.T) {
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "ok", Delay: 20 * time.Millisecond}
	})
	defer srv.Close()
	c := newTestClient(t, srv, WithConcurrency(3))
	var wg sync.WaitGroup
	for i := range 15 {
		wg.Go(func() {
			if _, err := c.Call(context.Background(), fmt.Sprint("q", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if p := srv.PeakInFlight(); p > 3 || p < 1 {
		t.Errorf("server saw %d requests at once, want at most 3", p)
	}
	if st := c.Stats(); st.Calls != 15 || srv.Count() != 15 {
		t.Errorf("calls %d requests %d, want 15 15", st.Calls, srv.Count())
	}
}

func TestBucket(t *testing.T) {
	now := time.Unix(0, 0)
	b := newBucket(60) // one a second, bursts of 6
	b.now = func() time.Time { return now }
	b.last = now
	for i := range 6 {
		if d := b.reserve(1); d != 0 {
			t.Fatalf("request %d within the burst waits %v", i+1, d)
		}
	}
	if d := b.reserve(1); d != time.Second {
		t.Fatalf("7th request waits %v, want 1s", d)
	}
	now = now.Add(10 * time.Second) // refills, but only up to the burst
	if d := b.reserve(7); d != time.Second {
		t.Fatalf("7 after a long pause waits %v, want 1s", d)
	}

	tpm := newBucket(600) // 10 tokens a second, bursts of 60
	tpm.now = b.now
	tpm.last = now
	if d := tpm.reserve(200); d != 14*time.Second {
		t.Fatalf("a 200-token prompt waits %v, want 14s of debt", d)
	}
	tpm.debit(10)
	if d := tpm.reserve(0); d != 15*time.Second {
		t.Fatalf("after 10 completion tokens the next waits %v, want 15s", d)
	}
	if newBucket(0) != nil {
		t.Fatal("no limit should be a nil bucket")
	}
}

func TestRPMLimitWaits(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed("ok"))
	defer srv.Close()
	c := newTestClient(t, srv, WithRPM(60))
	// A stopped clock and a recorded wait: the limiter's arithmetic, not the machine's speed.
	now := time.Now()
	c.eng.rpm.now = func() time.Time { return now }
	c.eng.rpm.last = now
	var waited []time.Duration
	c.eng.rpm.waitFn = func(ctx context.Context, d time.Duration) error {
		waited = append(waited, d)
		return nil
	}
	for i := range 8 {
		if _, err := c.Call(context.Background(), fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	// A burst of 6, then one a second.
	if !slices.Equal(waited, []time.Duration{time.Second, 2 * time.Second}) {
		t.Errorf("limiter waits %v, want [1s 2s] after a burst of 6", waited)
	}
	if srv.Count() != 8 {
		t.Errorf("server saw %d requests, want 8", srv.Count())
	}
}

func TestWrapReadsStatusFromErrorText(t *testing.T) {
	// A model built elsewhere, without the recording HTTP client.
	srv := llmtest.NewServer(llmtest.Script(llmtest.Reply{Status: 429, Error: "busy"}, llmtest.Reply{Content: "ok"}))
	defer srv.Close()
	m, err := openai.New(openai.WithToken(testKey), openai.WithBaseURL(srv.OpenAIBaseURL()), openai.WithModel("x"),
		openai.WithHTTPClient(http.DefaultClient))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Wrap(m, "openai", "x", WithBackoff(time.Millisecond, time.Millisecond), WithSecrets(testKey))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Call(context.Background(), "q")
	if err != nil || got != "ok" {
		t.Fatalf("Call = %q, %v", got, err)
	}
	if st := c.Stats(); st.Retries != 1 {
		t.Errorf("Retries = %d, want 1", st.Retries)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header, value string
		want          time.Duration
	}{
		{"Retry-After", "3", 3 * time.Second},
		{"Retry-After", "0.5", 500 * time.Millisecond},
		{"Retry-After", now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second},
		{"Retry-After", "soon", 0},
		{"Retry-After", "-1", 0},
		{"Retry-After-Ms", "250", 250 * time.Millisecond},
	}
	for _, tt := range tests {
		h := http.Header{}
		h.Set(tt.header, tt.value)
		if got := parseRetryAfter(h, now); got != tt.want {
			t.Errorf("%s: %s = %v, want %v", tt.header, tt.value, got, tt.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in       string
		min, max int
	}{
		{"", 0, 0},
		{"hello world", 2, 4},
		{strings.Repeat("word ", 100), 100, 140},
		{"知识图谱", 4, 4},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got < tt.min || got > tt.max {
			t.Errorf("EstimateTokens(%.20q) = %d, want %d..%d", tt.in, got, tt.min, tt.max)
		}
	}
}
