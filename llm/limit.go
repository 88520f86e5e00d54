package llm

import (
	"context"
	"sync"
	"time"
)

// bucket is a token bucket that lets callers go into debt: a request larger
// than the burst still proceeds, and the debt delays the next ones. That is
// how per-minute provider limits behave, and it means one long prompt can
// never wait forever.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // units per second
	burst  float64
	level  float64
	last   time.Time
	now    func() time.Time
	waitFn func(ctx context.Context, d time.Duration) error
}

// newBucket returns a bucket for perMinute units a minute, or nil (no limit)
// when perMinute is not positive. It starts full, with bursts of a tenth of
// the per-minute limit so that load spreads over the minute.
func newBucket(perMinute int) *bucket {
	if perMinute <= 0 {
		return nil
	}
	burst := float64(perMinute) / 10
	if burst < 1 {
		burst = 1
	}
	return &bucket{
		rate:   float64(perMinute) / 60,
		burst:  burst,
		level:  burst,
		last:   time.Now(),
		now:    time.Now,
		waitFn: sleep,
	}
}

// reserve takes n units now and says how long the caller must wait before
// using them.
func (b *bucket) reserve(n float64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.level += now.Sub(b.last).Seconds() * b.rate
	if b.level > b.burst {
		b.level = b.burst
	}
	b.last = now
	b.level -= n
	if b.level >= 0 {
		return 0
	}
	return time.Duration(-b.level / b.rate * float64(time.Second))
}

// wait blocks until n units are available or ctx ends. A nil bucket never waits.
func (b *bucket) wait(ctx context.Context, n float64) error {
	if b == nil || n <= 0 {
		return nil
	}
	if d := b.reserve(n); d > 0 {
		return b.waitFn(ctx, d)
	}
	return nil
}

// debit takes n units without waiting: for costs known only after a call,
// such as completion tokens, which the next callers then pay for.
func (b *bucket) debit(n float64) {
	if b == nil || n <= 0 {
		return
	}
	b.reserve(n)
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
