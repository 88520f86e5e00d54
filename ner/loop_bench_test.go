package ner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
)

// BenchmarkLoopThroughput extracts 160 chunks with one gleaning round each
// (320 LLM calls) through a Client limited to 16 concurrent calls, against
// a server answering every call after 100 ms: the ideal is 160 calls/s.
func BenchmarkLoopThroughput(b *testing.B) {
	const (
		chunks      = 160
		concurrency = 16
		delay       = 100 * time.Millisecond
	)
	answer := strings.TrimSuffix(rec1, "<|COMPLETE|>") + rec2
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: answer, Delay: delay}
	})
	defer srv.Close()
	var perSec float64
	for b.Loop() {
		c, err := llm.New("openai:bench", llm.WithAPIKey("sk-bench-key-0000"), llm.WithBaseURL(srv.OpenAIBaseURL()),
			llm.WithConcurrency(concurrency))
		if err != nil {
			b.Fatal(err)
		}
		l := NewLoop(c, WithGleaning(1))
		start := time.Now()
		extractAll(b, l, chunks, concurrency)
		perSec = float64(c.Stats().Calls) / time.Since(start).Seconds()
		if st := c.Stats(); st.Calls != 2*chunks {
			b.Fatalf("%d calls, want %d", st.Calls, 2*chunks)
		}
		c.Close()
	}
	ideal := float64(concurrency) / delay.Seconds()
	b.ReportMetric(perSec, "calls/s")
	b.ReportMetric(100*perSec/ideal, "%_of_ideal")
}

// BenchmarkLoopOverhead is the loop's own cost per chunk (prompts,
// conversation, parsing, merging, the Client) against an instant server.
func BenchmarkLoopOverhead(b *testing.B) {
	answer := strings.TrimSuffix(rec1, "<|COMPLETE|>") + rec2
	srv := llmtest.NewServer(llmtest.Fixed(answer))
	defer srv.Close()
	c, err := llm.New("openai:bench", llm.WithAPIKey("sk-bench-key-0000"), llm.WithBaseURL(srv.OpenAIBaseURL()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	l := NewLoop(c, WithGleaning(1))
	for b.Loop() {
		if _, err := l.Extract(context.Background(), testChunk); err != nil {
			b.Fatal(err)
		}
	}
}

func extractAll(b *testing.B, l *Loop, n, workers int) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range work {
				c := Chunk{ID: fmt.Sprint(i), Text: fmt.Sprintf("chunk %d: %s", i, testChunk.Text)}
				if _, err := l.Extract(context.Background(), c); err != nil {
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
}
