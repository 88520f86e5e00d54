package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/llm/llmtest"
)

// waitFor polls c's Waits until ok accepts them or the bound passes.
func waitFor(t *testing.T, c *Client, bound time.Duration, ok func(Waits) bool) Waits {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		w := c.Waits()
		if ok(w) {
			return w
		}
		if time.Now().After(deadline) {
			t.Fatalf("waits never became what the test wants: %+v", w)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWaitsOfAServerThatNeverAnswers(t *testing.T) {
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} })
	defer srv.Close()
	c := newTestClient(t, srv, WithTimeout(50*time.Millisecond), WithRetries(1000))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	for range 3 {
		go func() { _, err := c.Call(ctx, "hello"); done <- err }()
	}
	w := waitFor(t, c, 10*time.Second, func(w Waits) bool { return w.InFlight == 3 && w.FailedAttempts >= 3 })
	if w.Model != "openai:test-model" || !strings.HasPrefix(w.Endpoint, srv.URL) || strings.Contains(w.Endpoint, testKey) {
		t.Errorf("waits name %q at %q, want openai:test-model at %s", w.Model, w.Endpoint, srv.URL)
	}
	if !strings.Contains(w.LastError, "timeout") {
		t.Errorf("last error %q, want a timeout", w.LastError)
	}
	w = waitFor(t, c, 10*time.Second, func(w Waits) bool { return w.Failing >= 200*time.Millisecond })
	err := w.Stalled(200 * time.Millisecond)
	var se *StallError
	if !errors.As(err, &se) || se.Model != "openai:test-model" || !strings.Contains(err.Error(), "timeout") || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("Stalled = %v, want a StallError naming the model, the endpoint and the timeouts", err)
	}
	if w.Stalled(time.Hour) != nil || w.Stalled(0) != nil {
		t.Error("stalled before the window passed, or with no window")
	}
	if w.Oldest < w.Failing-50*time.Millisecond {
		t.Errorf("oldest call %s, want at least the failing spell %s (the calls began it)", w.Oldest, w.Failing)
	}

	cancel()
	for range 3 {
		<-done
	}
	if w := c.Waits(); w.InFlight != 0 || w.Retrying != 0 {
		t.Errorf("after the callers gave up: %+v, want nothing in flight", w)
	}
}

func TestWaitsOfASlowModelThatAnswersNeverStall(t *testing.T) {
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Delay: 60 * time.Millisecond, Content: "ok"}
	})
	defer srv.Close()
	c := newTestClient(t, srv, WithTimeout(5*time.Second))
	for range 5 {
		if _, err := c.Call(context.Background(), "hello"); err != nil {
			t.Fatal(err)
		}
		if err := c.Waits().Stalled(time.Millisecond); err != nil {
			t.Fatalf("a model that answers stalled: %v", err)
		}
	}
}

func TestWaitsAnswerClearsFailures(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Script(
		llmtest.Reply{Status: http.StatusInternalServerError, Error: "boom"},
		llmtest.Reply{Status: http.StatusInternalServerError, Error: "boom"},
		llmtest.Reply{Content: "ok"},
	))
	defer srv.Close()
	c := newTestClient(t, srv)
	if _, err := c.Call(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	w := c.Waits()
	if w.FailedAttempts != 0 || w.Failing != 0 || w.Stalled(time.Nanosecond) != nil {
		t.Errorf("after an answer: %+v, want no failing spell", w)
	}
	if !strings.Contains(w.LastError, "HTTP 500") {
		t.Errorf("last error %q, want the 500 kept for display", w.LastError)
	}
}

func TestActivityIdleRestartsTheStallClock(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newActivity()
	a.now = func() time.Time { return now }
	id := a.begin()
	a.attempt(now, "http://x", "timeout")
	a.end(id)
	now = now.Add(10 * time.Minute)
	if w := a.waits("m"); w.Stalled(5*time.Minute) == nil {
		t.Fatalf("failing for 10 minutes with a 5 minute window: not stalled: %+v", w)
	}
	id = a.begin() // after 10 idle minutes: a new spell
	defer a.end(id)
	if w := a.waits("m"); w.FailedAttempts != 0 || w.Stalled(5*time.Minute) != nil {
		t.Errorf("a call after an idle pause inherits old failures: %+v", w)
	}
}

// TestWaitsNameTheEndpointOfAHangingFirstCall: the endpoint is known as
// the request leaves, before any attempt ends.
func TestWaitsNameTheEndpointOfAHangingFirstCall(t *testing.T) {
	srv := llmtest.NewServer(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} })
	defer srv.Close()
	c := newTestClient(t, srv, WithTimeout(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Call(ctx, "hello"); close(done) }()
	w := waitFor(t, c, 10*time.Second, func(w Waits) bool { return w.InFlight == 1 && w.Endpoint != "" })
	if w.FailedAttempts != 0 || !strings.HasPrefix(w.Endpoint, srv.URL+"/v1/chat/completions") {
		t.Errorf("waits %+v, want the endpoint %s named with no failure yet", w, srv.URL)
	}
	cancel()
	<-done
}
