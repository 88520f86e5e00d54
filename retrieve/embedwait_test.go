package retrieve

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// hungEmbedder answers nothing until its context ends.
type hungEmbedder struct{}

func (hungEmbedder) Name() string   { return "openai:silent" }
func (hungEmbedder) Dimension() int { return 8 }
func (hungEmbedder) EmbedQuery(ctx context.Context, _ string) ([]float32, error) {
	<-ctx.Done()
	return nil, errors.New("network error: failed to reach API server")
}
func (hungEmbedder) EmbedDocuments(ctx context.Context, _ []string) ([][]float32, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestEmbedWait(t *testing.T) {
	short, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	long, cancel2 := context.WithTimeout(context.Background(), time.Hour)
	defer cancel2()
	for _, tt := range []struct {
		name     string
		ctx      context.Context
		min, max time.Duration
	}{
		{"no deadline", context.Background(), maxEmbedWait, maxEmbedWait},
		{"far deadline", long, maxEmbedWait, maxEmbedWait},
		// A quarter of what is left, which is a little under 2 s by now.
		{"near deadline", short, 0, 500 * time.Millisecond},
	} {
		if w := EmbedWait(tt.ctx); w < tt.min || w > tt.max || w <= 0 {
			t.Errorf("%s: wait %s, want in (%s, %s]", tt.name, w, tt.min, tt.max)
		}
	}
}

// TestEmbedOrWarnHungEmbedder: an embedder that does not answer gives a
// warning saying so once its wait is over, while the query's context
// lives; the query's own end is still an error.
func TestEmbedOrWarnHungEmbedder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // a 0.5 s wait
	defer cancel()
	start := time.Now()
	vec, warning, err := embedOrWarn(ctx, hungEmbedder{}, "Who broke Enigma?")
	if err != nil || vec != nil {
		t.Fatalf("vec %v, err %v; want no vector and no error", vec, err)
	}
	// About 500ms, less what the test took to get there.
	want := regexp.MustCompile(`^embedder openai:silent did not answer within [1-5][0-9]0ms, so vector search is skipped`)
	if !want.MatchString(warning) || strings.Contains(warning, "network error") {
		t.Errorf("warning %q, want it to match %s and leave out the client's error", warning, want)
	}
	if ctx.Err() != nil {
		t.Errorf("the wait used up the query's context (%s)", time.Since(start))
	}

	done, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, warning, err := embedOrWarn(done, hungEmbedder{}, "q"); err == nil || warning != "" {
		t.Errorf("canceled query: warning %q, err %v; want the error", warning, err)
	}
}
