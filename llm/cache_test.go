package llm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/llm/llmtest"
)

// TestCacheKeyedByEndpoint: two OpenAI-compatible servers serving a model
// of the same name are two models. A cache filled from the first must not
// answer for the second, for chat answers and for embeddings alike.
func TestCacheKeyedByEndpoint(t *testing.T) {
	first := llmtest.NewServer(llmtest.Fixed("answer from the first server"))
	defer first.Close()
	second := llmtest.NewServer(llmtest.Fixed("answer from the second server"))
	defer second.Close()
	first.Dim, second.Dim = 8, 16
	path := filepath.Join(t.TempDir(), "llm-cache.sqlite")
	ctx := context.Background()

	ask := func(srv *llmtest.Server) (string, Stats) {
		t.Helper()
		c := newTestClient(t, srv, WithCache(path))
		a, err := c.Call(ctx, "Who designed Go?")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		return a, c.Stats()
	}
	if a, _ := ask(first); a != "answer from the first server" {
		t.Fatalf("first server: %q", a)
	}
	a, st := ask(second)
	if a != "answer from the second server" || second.Count() != 1 {
		t.Errorf("second server, same model name: answer %q, %d calls, %d cache hits, %d requests received; want its own answer",
			a, st.Calls, st.CacheHits, second.Count())
	}
	// Each endpoint's entries still serve that endpoint.
	if a, st := ask(first); a != "answer from the first server" || st.CacheHits != 1 || first.Count() != 1 {
		t.Errorf("first server again: %q, stats %+v, %d requests; want a cache hit", a, st, first.Count())
	}

	embed := func(srv *llmtest.Server) *Embedder {
		t.Helper()
		e, err := NewEmbedder(ctx, "openai:same-embedder", WithAPIKey(testKey), WithBaseURL(srv.OpenAIBaseURL()), WithCache(path))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	if e := embed(first); e.Dimension() != 8 {
		t.Fatalf("first embedder: dimension %d", e.Dimension())
	}
	asked := second.Count()
	if e := embed(second); e.Dimension() != 16 || second.Count() != asked+1 {
		t.Errorf("second embedder, same model name: dimension %d, %d requests to its server; want 16 from its own probe",
			e.Dimension(), second.Count()-asked)
	}
}

// TestCacheKeepsNoSecretOfTheEndpoint: credentials in the base URL change
// nothing in the key and never reach the cache file.
func TestCacheKeepsNoSecretOfTheEndpoint(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Fixed("ok"))
	defer srv.Close()
	const secret = "pw-0123456789-not-for-the-cache"
	path := filepath.Join(t.TempDir(), "llm-cache.sqlite")
	withUser := strings.Replace(srv.OpenAIBaseURL(), "://", "://alice:"+secret+"@", 1)
	for i, base := range []string{withUser, srv.OpenAIBaseURL()} {
		c, err := New("openai:test-model", WithAPIKey(testKey), WithBaseURL(base), WithCache(path))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(context.Background(), "hello"); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if st := c.Stats(); st.CacheHits != int64(i) {
			t.Errorf("base URL %d: %d cache hits, want %d (credentials are not part of the endpoint)", i, st.CacheHits, i)
		}
	}
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(testKey)) {
			t.Errorf("%s holds a secret in clear", filepath.Base(f))
		}
	}
}

// TestCacheEndpoint: spellings of one server give one endpoint; another
// server, path or API version another; credentials none.
func TestCacheEndpoint(t *testing.T) {
	same := [][]string{
		{"https://api.example.com/v1", "HTTPS://API.Example.com:443/v1/", "https://user:pass@api.example.com/v1#frag"},
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/"},
		{"http://[::1]:11434", "http://[::1]:11434/"},
		{"http://localhost/v1", "http://localhost:80/v1"},
		{"https://x.example/openai?api-version=2024-06-01", "https://x.example/openai?key=secret-1&api-version=2024-06-01",
			"https://x.example/openai?api-version=2024-06-01&api_key=secret-2&sig=abc"},
	}
	seen := map[string]string{}
	for _, group := range same {
		want := cacheEndpoint(group[0])
		for _, u := range group[1:] {
			if got := cacheEndpoint(u); got != want {
				t.Errorf("cacheEndpoint(%q) = %q, want %q as for %q", u, got, want, group[0])
			}
		}
		for _, u := range group {
			for _, secret := range []string{"pass", "secret-1", "secret-2", "frag"} {
				if strings.Contains(cacheEndpoint(u), secret) {
					t.Errorf("cacheEndpoint(%q) = %q keeps %q", u, cacheEndpoint(u), secret)
				}
			}
		}
		if other, dup := seen[want]; dup {
			t.Errorf("%q and %q are different servers but share the endpoint %q", group[0], other, want)
		}
		seen[want] = group[0]
	}
	for _, pair := range [][2]string{
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1"},
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v2"},
		{"http://h.example/v1", "https://h.example/v1"},
		{"https://x.example/openai?api-version=2024-06-01", "https://x.example/openai?api-version=2025-01-01"},
	} {
		if cacheEndpoint(pair[0]) == cacheEndpoint(pair[1]) {
			t.Errorf("%q and %q give one endpoint %q", pair[0], pair[1], cacheEndpoint(pair[0]))
		}
	}
}

// TestCacheEndpointOfEachProvider: the endpoint in the key is the one the
// requests go to, from the option, the environment or the default.
func TestCacheEndpointOfEachProvider(t *testing.T) {
	for _, env := range []string{"OPENAI_BASE_URL", "OPENAI_API_BASE", "OLLAMA_HOST", "ANTHROPIC_BASE_URL"} {
		t.Setenv(env, "")
	}
	t.Setenv("OPENAI_API_KEY", testKey)
	t.Setenv("ANTHROPIC_API_KEY", testKey)
	endpoint := func(spec string, opts ...Option) string {
		t.Helper()
		c, err := New(spec, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.endpoint
	}
	for _, tt := range []struct{ spec, want string }{
		{"openai:m", "https://api.openai.com/v1"},
		{"ollama:m", "http://127.0.0.1:11434"},
		{"anthropic:m", "https://api.anthropic.com/v1"},
	} {
		if got := endpoint(tt.spec); got != tt.want {
			t.Errorf("%s by default: endpoint %q, want %q", tt.spec, got, tt.want)
		}
	}
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("OLLAMA_HOST", "10.0.0.2:8080")
	if got := endpoint("openai:m"); got != "http://127.0.0.1:9/v1" {
		t.Errorf("openai with OPENAI_BASE_URL: %q", got)
	}
	if got := endpoint("ollama:m"); got != "http://10.0.0.2:8080" {
		t.Errorf("ollama with OLLAMA_HOST: %q", got)
	}
	if got := endpoint("openai:m", WithBaseURL("http://127.0.0.1:10/v1")); got != "http://127.0.0.1:10/v1" {
		t.Errorf("openai with WithBaseURL: %q", got)
	}
	w, err := Wrap(nil, "openai", "m")
	if err != nil {
		t.Fatal(err)
	}
	if w.endpoint != "" {
		t.Errorf("Wrap without a base URL: endpoint %q", w.endpoint)
	}
}
