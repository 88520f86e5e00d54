package llm

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/llm/llmtest"
)

var _ embedstore.Embedder = (*Embedder)(nil)

func TestEmbedder(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed(""))
	defer srv.Close()
	srv.Dim = 12
	texts := []string{"graph", "retrieval", "augmented", "generation", "graph"}

	tests := []struct {
		name     string
		spec     string
		opts     []Option
		wantPath string
		wantReqs int // after the probe, for the five texts
	}{
		// Batches of two over five texts: 3 requests.
		{"openai", "openai:text-embedding-3-small", []Option{WithBaseURL(srv.OpenAIBaseURL()), WithBatchSize(2)}, "/v1/embeddings", 3},
		// langchaingo's ollama client sends one request per text.
		{"ollama", "ollama:nomic-embed-text", []Option{WithBaseURL(srv.URL)}, "/api/embed", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache.sqlite")
			opts := append([]Option{WithAPIKey(testKey), WithCache(cache)}, tt.opts...)
			start := srv.Count()
			e, err := NewEmbedder(context.Background(), tt.spec, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if e.Dimension() != 12 || e.Name() != tt.spec {
				t.Fatalf("Dimension %d Name %q, want 12 %q", e.Dimension(), e.Name(), tt.spec)
			}
			vecs, err := e.EmbedDocuments(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vecs {
				if !slices.Equal(v, srv.Vector(texts[i])) {
					t.Errorf("vector %d for %q differs from the server's", i, texts[i])
				}
			}
			reqs := srv.Requests()[start:]
			if len(reqs) != 1+tt.wantReqs || reqs[0].Path != tt.wantPath {
				t.Fatalf("%d requests to %s, want %d to %s", len(reqs), reqs[0].Path, 1+tt.wantReqs, tt.wantPath)
			}
			e.Close()

			// A second embedder over the same cache: no request at all, probe included.
			mid := srv.Count()
			e2, err := NewEmbedder(context.Background(), tt.spec, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer e2.Close()
			q, err := e2.EmbedQuery(context.Background(), "retrieval")
			if err != nil {
				t.Fatal(err)
			}
			if srv.Count() != mid || !slices.Equal(q, srv.Vector("retrieval")) {
				t.Errorf("cached run made %d requests; vector ok = %v", srv.Count()-mid, slices.Equal(q, srv.Vector("retrieval")))
			}
			if st := e2.Stats(); st.Calls != 0 || st.CacheHits != 2 {
				t.Errorf("cached run stats %+v, want 0 calls 2 hits", st)
			}
		})
	}
}

func TestEmbedderRetriesAndFailsCleanly(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script(
		llmtest.Reply{}, // the probe
		llmtest.Reply{Status: 429, RetryAfter: "0.01"},
		llmtest.Reply{},
		llmtest.Reply{Status: 401, Error: "bad key"},
	))
	defer srv.Close()
	e, err := NewEmbedder(context.Background(), "openai:emb", WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL()),
		WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(context.Background(), "a"); err != nil {
		t.Fatalf("429 then success: %v", err)
	}
	_, err = e.EmbedQuery(context.Background(), "b")
	if err == nil {
		t.Fatal("401 should fail")
	}
	st := e.Stats()
	if st.Calls != 3 || st.Retries != 1 || st.Failures != 1 {
		t.Errorf("stats %+v, want 3 calls 1 retry 1 failure", st)
	}
}

func TestNewEmbedderRejectsAnthropic(t *testing.T) {
	_, err := NewEmbedder(context.Background(), "anthropic:claude")
	if err == nil {
		t.Fatal("anthropic has no embeddings; want an error")
	}
}
