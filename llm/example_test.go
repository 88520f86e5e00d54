package llm_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
)

// A Client for an OpenAI-compatible server, with limits, retries and a
// cache; a local test server stands in for the real endpoint.
func ExampleNew() {
	srv := llmtest.NewServer(llmtest.Script(
		llmtest.Reply{Status: 429, RetryAfter: "0.01"}, // busy: retried after 10 ms
		llmtest.Reply{Content: "Paris", PromptTokens: 12, CompletionTokens: 1},
	))
	defer srv.Close()

	dir, _ := os.MkdirTemp("", "llm-example")
	defer os.RemoveAll(dir)

	client, err := llm.New("openai:gpt-4o-mini",
		llm.WithBaseURL(srv.OpenAIBaseURL()), // or OPENAI_BASE_URL
		llm.WithAPIKey("sk-example"),         // or OPENAI_API_KEY
		llm.WithConcurrency(16), llm.WithRPM(500), llm.WithTPM(200_000),
		llm.WithTimeout(2*time.Minute), llm.WithRetries(4),
		llm.WithCache(filepath.Join(dir, "llm-cache.sqlite")),
	)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	for range 2 { // the second time comes from the cache
		answer, err := llms.GenerateFromSinglePrompt(context.Background(), client, "Capital of France?")
		if err != nil {
			panic(err)
		}
		fmt.Println(answer)
	}
	st := client.Stats()
	fmt.Printf("calls %d, cache hits %d, retries %d, tokens %d+%d\n",
		st.Calls, st.CacheHits, st.Retries, st.PromptTokens, st.CompletionTokens)
	// Output:
	// Paris
	// Paris
	// calls 1, cache hits 1, retries 1, tokens 12+1
}

func ExampleNewEmbedder() {
	srv := llmtest.NewServer(llmtest.Fixed(""))
	defer srv.Close()

	emb, err := llm.NewEmbedder(context.Background(), "ollama:nomic-embed-text",
		llm.WithBaseURL(srv.URL)) // or OLLAMA_HOST
	if err != nil {
		panic(err)
	}
	defer emb.Close()
	vecs, err := emb.EmbedDocuments(context.Background(), []string{"knowledge", "graph"})
	if err != nil {
		panic(err)
	}
	fmt.Println(emb.Name(), emb.Dimension(), len(vecs))
	// Output: ollama:nomic-embed-text 8 2
}

func ExampleSummarizer_Summarize() {
	srv := llmtest.NewServer(llmtest.Fixed("Acme is a rocket maker founded in 1999 in Ohio."))
	defer srv.Close()
	client, err := llm.New("openai:gpt-4o-mini", llm.WithBaseURL(srv.OpenAIBaseURL()), llm.WithAPIKey("sk-example"))
	if err != nil {
		panic(err)
	}
	s := llm.NewSummarizer(client, llm.WithSummaryContextTokens(4000))
	summary, err := s.Summarize(context.Background(), "entity", "Acme", []string{
		"Acme builds rockets.", "Acme was founded in 1999.", "Acme is based in Ohio.",
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(summary)
	// Output: Acme is a rocket maker founded in 1999 in Ohio.
}
