package llm

import (
	"context"
	"sync"
)

// Usage counts the chat calls made under one context (WithUsage): one
// query's, when many queries share a Client and its Stats. Safe for
// concurrent use.
type Usage struct {
	mu sync.Mutex
	u  UsageCounts
	// inFlight and attempts describe the calls not yet finished, so that a
	// caller whose deadline ran out can say what it was waiting for.
	inFlight int
	attempts int  // attempts of the latest call
	stopped  bool // the latest call ended because its context did
}

// UsageCounts is what a Usage holds at one moment.
type UsageCounts struct {
	Calls            int64 `json:"calls"` // answered by the provider (cache hits excluded)
	CacheHits        int64 `json:"cache_hits"`
	PromptTokens     int64 `json:"prompt_tokens"`     // as reported by the provider, else estimated
	CompletionTokens int64 `json:"completion_tokens"` // as reported by the provider, else estimated
}

type usageKey struct{}

// WithUsage has every chat call made with the returned context (by a
// Client) counted in u.
func WithUsage(ctx context.Context, u *Usage) context.Context {
	return context.WithValue(ctx, usageKey{}, u)
}

func usageFrom(ctx context.Context) *Usage {
	u, _ := ctx.Value(usageKey{}).(*Usage)
	return u
}

// Counts returns the counts so far (zero for a nil Usage).
func (u *Usage) Counts() UsageCounts {
	if u == nil {
		return UsageCounts{}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.u
}

// Waiting says whether a call is in flight, or the latest one was stopped
// by its context ending, and how many attempts that call made.
func (u *Usage) Waiting() (waiting bool, attempts int) {
	if u == nil {
		return false, 0
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.inFlight > 0 || u.stopped, u.attempts
}

func (u *Usage) begin() {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.inFlight++
	u.attempts, u.stopped = 0, false
	u.mu.Unlock()
}

func (u *Usage) attempt() {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.attempts++
	u.mu.Unlock()
}

func (u *Usage) end(ctx context.Context, prompt, completion int, answered bool) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.inFlight--
	u.stopped = !answered && ctx.Err() != nil
	if answered {
		u.u.Calls++
		u.u.PromptTokens += int64(prompt)
		u.u.CompletionTokens += int64(completion)
	}
}

func (u *Usage) cacheHit() {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.u.CacheHits++
	u.mu.Unlock()
}

// UsageFrom is the Usage WithUsage put in ctx, or nil.
func UsageFrom(ctx context.Context) *Usage { return usageFrom(ctx) }
