package llm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/docgraph/docgraph/llm/llmtest"
)

// BenchmarkThroughput measures LLM calls per second through the Client at
// concurrency 16 against a server that answers every call after 100 ms.
// The ideal is 16/0.1 s = 160 calls/s; the same run also measures plain
// HTTP requests fired by 16 goroutines, the best this machine can do.
func BenchmarkThroughput(b *testing.B) {
	const (
		calls       = 320
		concurrency = 16
		delay       = 100 * time.Millisecond
	)
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "ok", Delay: delay, PromptTokens: 10, CompletionTokens: 1}
	})
	defer srv.Close()
	ideal := float64(concurrency) / delay.Seconds()

	var wrapped, raw float64
	for b.Loop() {
		c, err := New("openai:bench", WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL()),
			WithConcurrency(concurrency), WithRPM(100_000), WithTPM(10_000_000))
		if err != nil {
			b.Fatal(err)
		}
		wrapped = fire(b, calls, calls, func(i int) error {
			// Distinct prompts: every call reaches the server.
			_, err := c.Call(context.Background(), fmt.Sprintf("prompt %d", i))
			return err
		})
		c.Close()

		hc := newHTTPClient(concurrency, DefaultMaxAnswerBytes)
		raw = fire(b, calls, concurrency, func(i int) error {
			body := fmt.Sprintf(`{"model":"bench","messages":[{"role":"user","content":"raw %d"}]}`, i)
			resp, err := hc.Post(srv.OpenAIBaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				return err
			}
			return resp.Body.Close()
		})
	}
	b.ReportMetric(wrapped, "calls/s")
	b.ReportMetric(ideal, "ideal_calls/s")
	b.ReportMetric(100*wrapped/ideal, "%_of_ideal")
	b.ReportMetric(raw, "raw_http_calls/s")
	b.ReportMetric(100*wrapped/raw, "%_of_raw")
}

// fire runs n calls of f on the given number of goroutines and returns calls per second.
func fire(b *testing.B, n, goroutines int, f func(i int) error) float64 {
	b.Helper()
	work := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range goroutines {
		wg.Go(func() {
			for i := range work {
				if err := f(i); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkOverhead compares a call through the Client with the same call
// made directly with langchaingo's openai client against an instant
// server; the difference is the wrapper's own cost per call. The cache hit
// case shows the price of answering from SQLite.
func BenchmarkOverhead(b *testing.B) {
	srv := llmtest.NewServer(llmtest.Fixed("ok"))
	defer srv.Close()
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, strings.Repeat("a typical prompt ", 200))}

	b.Run("direct", func(b *testing.B) {
		m, err := openai.New(openai.WithToken(testKey), openai.WithBaseURL(srv.OpenAIBaseURL()),
			openai.WithModel("bench"), openai.WithHTTPClient(&http.Client{Transport: newHTTPClient(4, DefaultMaxAnswerBytes).Transport.(*recordingTransport).base}))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := m.GenerateContent(context.Background(), msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client", func(b *testing.B) {
		c, err := New("openai:bench", WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL()), WithRPM(1_000_000_000), WithTPM(1_000_000_000))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.GenerateContent(context.Background(), msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache_hit", func(b *testing.B) {
		c, err := New("openai:bench", WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL()), WithCache(b.TempDir()+"/c.sqlite"))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.GenerateContent(context.Background(), msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// instantModel answers at once, in process: it isolates the Client's own
// cost (limits, retry bookkeeping, token estimate, counters) from HTTP.
type instantModel struct{}

func (instantModel) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: "ok"}}}, nil
}

func (m instantModel) Call(ctx context.Context, p string, o ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, p, o...)
}

// BenchmarkWrapperOnly is the Client's own overhead per call, without HTTP,
// with the rate limiters on; "bare" is the in-process model alone.
func BenchmarkWrapperOnly(b *testing.B) {
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, strings.Repeat("a typical prompt ", 200))}
	b.Run("bare", func(b *testing.B) {
		var m instantModel
		for b.Loop() {
			m.GenerateContent(context.Background(), msgs)
		}
	})
	b.Run("client", func(b *testing.B) {
		c, _ := Wrap(instantModel{}, "test", "instant", WithRPM(1_000_000_000), WithTPM(1_000_000_000))
		for b.Loop() {
			if _, err := c.GenerateContent(context.Background(), msgs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
