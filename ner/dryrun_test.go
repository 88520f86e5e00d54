package ner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/llm"
)

// TestLoopFirstRequest: FirstRequest renders exactly the prompt Extract
// sends first, and its request is the one Extract's answer is cached under.
func TestLoopFirstRequest(t *testing.T) {
	srv := newLoopServer(map[string][]string{"extract": {rec1}})
	defer srv.Close()
	c := newLoopClient(t, srv.Server, llm.WithCache(filepath.Join(t.TempDir(), "cache.db")))
	l := NewLoop(c, WithGleaning(0))
	ctx := context.Background()

	prompt, msgs, opts, ok, err := l.FirstRequest(testChunk)
	if err != nil || !ok {
		t.Fatalf("FirstRequest: ok %v, %v", ok, err)
	}
	if hit, err := c.Cached(ctx, msgs, opts...); err != nil || hit {
		t.Fatalf("cold cache: hit %v, %v", hit, err)
	}
	if _, err := l.Extract(ctx, testChunk); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 1 || reqs[0].Messages[0].Content != prompt {
		t.Fatalf("Extract sent %+v, FirstRequest rendered %q", reqs, prompt)
	}
	if hit, err := c.Cached(ctx, msgs, opts...); err != nil || !hit {
		t.Errorf("after Extract: hit %v, %v", hit, err)
	}
	if srv.Count() != 1 {
		t.Errorf("Cached called the model: %d calls", srv.Count())
	}
	if _, _, _, ok, _ := l.FirstRequest(Chunk{ID: "d#1", Text: "  \n"}); ok {
		t.Error("a chunk without text would be asked about")
	}
}
