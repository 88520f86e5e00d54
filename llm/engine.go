package llm

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// Stats are a Client's or Embedder's counters since it was built.
type Stats struct {
	Calls            int64         // calls sent to the provider (cache hits excluded, retries not counted again)
	CacheHits        int64         // calls answered from the cache
	Retries          int64         // attempts after a call's first
	Failures         int64         // calls that failed for good
	PromptTokens     int64         // as reported by the provider, else estimated
	CompletionTokens int64         // as reported by the provider, else estimated
	RetryWait        time.Duration // total backoff slept before retries
}

// Add returns the sum of two Stats, for summaries over several clients.
func (s Stats) Add(o Stats) Stats {
	return Stats{
		Calls: s.Calls + o.Calls, CacheHits: s.CacheHits + o.CacheHits,
		Retries: s.Retries + o.Retries, Failures: s.Failures + o.Failures,
		PromptTokens: s.PromptTokens + o.PromptTokens, CompletionTokens: s.CompletionTokens + o.CompletionTokens,
		RetryWait: s.RetryWait + o.RetryWait,
	}
}

type counters struct {
	calls, cacheHits, retries, failures atomic.Int64
	promptTokens, completionTokens      atomic.Int64
	retryWait                           atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Calls: c.calls.Load(), CacheHits: c.cacheHits.Load(), Retries: c.retries.Load(),
		Failures: c.failures.Load(), PromptTokens: c.promptTokens.Load(),
		CompletionTokens: c.completionTokens.Load(), RetryWait: time.Duration(c.retryWait.Load()),
	}
}

// CallError is the error of a call that failed for good. Its text names the
// provider, the model and the cause, with secrets removed.
type CallError struct {
	Provider, Model string
	Attempts        int
	Status          int  // last HTTP status, 0 when none was received
	Temporary       bool // the last failure was transient: the retry budget ran out
	msg             string
	ctxErr          error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("llm %s:%s: %d attempt(s): %s", e.Provider, e.Model, e.Attempts, e.msg)
}

// Unwrap exposes context.Canceled or context.DeadlineExceeded when the
// caller's context ended the call; the provider's own error is not exposed
// because its text may hold secrets.
func (e *CallError) Unwrap() error { return e.ctxErr }

// engine is what every provider call goes through: the concurrency limit,
// the rate limits, the per-attempt deadline and the retries.
type engine struct {
	provider, model string
	sem             chan struct{}
	rpm, tpm        *bucket
	cfg             config
	red             redactor
	stats           counters
	act             *activity
	sleep           func(ctx context.Context, d time.Duration) error
}

func newEngine(provider, model string, cfg config) *engine {
	return &engine{
		provider: provider,
		model:    model,
		sem:      make(chan struct{}, cfg.concurrency),
		rpm:      newBucket(cfg.rpm),
		tpm:      newBucket(cfg.tpm),
		cfg:      cfg,
		red:      redactor{secrets: cfg.secrets},
		act:      newActivity(),
		sleep:    sleep,
	}
}

// run performs one call: attempt runs until it succeeds, fails permanently
// or exhausts the retry budget. tokens is the prompt's estimated size, for
// the tokens-per-minute limit. The call keeps its concurrency slot while it
// backs off, so a provider that is pushing back sees fewer requests, not more.
func (e *engine) run(ctx context.Context, tokens int, attempt func(ctx context.Context) error) error {
	select {
	case e.sem <- struct{}{}:
	case <-ctx.Done():
		return e.fail(ctx, 0, failure{}, ctx.Err())
	}
	defer func() { <-e.sem }()
	e.stats.calls.Add(1)
	id := e.act.begin()
	defer e.act.end(id)

	for n := 1; ; n++ {
		if err := e.rpm.wait(ctx, 1); err != nil {
			return e.fail(ctx, n-1, failure{}, err)
		}
		if err := e.tpm.wait(ctx, float64(tokens)); err != nil {
			return e.fail(ctx, n-1, failure{}, err)
		}
		rec := &attemptRecord{sent: e.act.sent}
		actx := withRecorder(ctx, rec)
		cancel := func() {}
		if e.cfg.timeout > 0 {
			actx, cancel = context.WithTimeout(actx, e.cfg.timeout)
		}
		started := time.Now()
		err := attempt(actx)
		f := failure{}
		if err != nil {
			f = classify(ctx, actx, err, rec, e.cfg.timeout)
		}
		cancel()
		if err == nil {
			e.act.attempt(started, rec.endpoint(), "")
			return nil
		}
		if ctx.Err() == nil {
			// A call its caller gave up on says nothing about the model.
			e.act.attempt(started, rec.endpoint(), e.describe(f, err))
		}
		if ctx.Err() != nil || !f.retryable || n > e.cfg.retries {
			return e.fail(ctx, n, f, err)
		}
		d := e.backoff(n, f.retryAfter)
		e.stats.retries.Add(1)
		e.stats.retryWait.Add(int64(d))
		if l := e.cfg.logger; l != nil {
			msg := err.Error()
			if f.detail != "" {
				msg = f.detail
			}
			l.LogAttrs(ctx, slog.LevelWarn, "llm call failed, retrying",
				slog.String("provider", e.provider), slog.String("model", e.model),
				slog.String("reason", f.reason), slog.Int("attempt", n), slog.Duration("wait", d.Round(time.Millisecond)),
				slog.String("error", e.red.redact(msg)))
		}
		e.act.backoff(1)
		err = e.sleep(ctx, d)
		e.act.backoff(-1)
		if err != nil {
			return e.fail(ctx, n, f, err)
		}
	}
}

// backoff is the wait before retry number n (1-based): exponential with
// jitter, or the server's Retry-After (capped) plus a little jitter so that
// callers told the same instant do not return together.
func (e *engine) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		if retryAfter > e.cfg.maxRetryAfter {
			retryAfter = e.cfg.maxRetryAfter
		}
		return retryAfter + jitter(retryAfter/10)
	}
	d := e.cfg.backoffBase
	for i := 1; i < n && d < e.cfg.backoffMax; i++ {
		d *= 2
	}
	if d > e.cfg.backoffMax {
		d = e.cfg.backoffMax
	}
	// Equal jitter: at least half the step, so retries still back off.
	return d/2 + jitter(d/2)
}

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d + 1)
}

// describe is a failed attempt's cause as Waits shows it: the reason and
// the detail or error, secrets removed.
func (e *engine) describe(f failure, err error) string {
	msg := err.Error()
	if f.detail != "" {
		msg = f.detail
	}
	msg = e.red.redact(msg)
	if f.reason != "" && f.reason != "error" {
		msg = f.reason + ": " + msg
	}
	return msg
}

// waits is what the engine's calls are doing now (see Waits).
func (e *engine) waits() Waits { return e.act.waits(e.provider + ":" + e.model) }

func (e *engine) fail(ctx context.Context, attempts int, f failure, err error) error {
	e.stats.failures.Add(1)
	ce := &CallError{
		Provider: e.provider, Model: e.model, Attempts: attempts,
		Status: f.status, Temporary: f.retryable,
	}
	if ctx.Err() != nil {
		ce.ctxErr = ctx.Err()
	}
	ce.msg = e.describe(f, err)
	return ce
}
