package retrieve

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// maxEmbedWait bounds the wait for one embedding at query time. Embedding
// a question is one short request that a working endpoint answers in well
// under a second, a local model loading from disk in a few; one that has
// not answered in 15 s is stuck, not slow. Waiting longer would only
// spend the query's deadline on a path it can do without: full-text and
// graph search answer without vectors.
const maxEmbedWait = 15 * time.Second

// EmbedWait is how long an embedding made under ctx may take before the
// query goes on without it: maxEmbedWait, or a quarter of the time left
// before ctx's deadline when that is less, so that a hung embedder leaves
// most of a short deadline to the keywords and the answer, which are
// model calls that take longer and that the query cannot do without.
func EmbedWait(ctx context.Context) time.Duration {
	w := maxEmbedWait
	if d, ok := ctx.Deadline(); ok {
		w = min(w, time.Until(d)/4)
	}
	return max(w, 0)
}

// EmbedWaitError is an embedding that did not come back within its wait
// (EmbedWait) while the context it was made under was still live.
type EmbedWaitError struct {
	Wait time.Duration
	Err  error // what the embedder returned when the wait cut it
}

func (e *EmbedWaitError) Error() string {
	return fmt.Sprintf("no answer within %s: %v", roundWait(e.Wait), e.Err)
}

func (e *EmbedWaitError) Unwrap() error { return e.Err }

// errEmbedWait is the cause of a context ended by WithinEmbedWait.
var errEmbedWait = errors.New("embedding wait over")

// WithinEmbedWait runs embed under ctx bounded by EmbedWait(ctx). When
// that wait, not ctx, ended it, the error is an *EmbedWaitError wrapping
// embed's.
func WithinEmbedWait(ctx context.Context, embed func(ctx context.Context) error) error {
	wait := EmbedWait(ctx)
	wctx, cancel := context.WithTimeoutCause(ctx, wait, errEmbedWait)
	defer cancel()
	err := embed(wctx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(wctx), errEmbedWait) {
		return &EmbedWaitError{Wait: wait, Err: err}
	}
	return err
}

// roundWait shows a wait the way a user would write it (15s, 480ms), not
// to the nanosecond a deadline's remainder gives.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}
