package pipeline

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Drain gives a run two contexts. The run's own context (cancelled on the
// first SIGINT or SIGTERM, say) means "take no new files"; Work, which
// documents are processed under, is cancelled only when the timeout
// passes after that, or at Abort. Cancelling Work rolls in-flight
// documents back: the store commits a document whole or not at all.
//
// A run waiting for a model is different: its documents may need many
// minutes of calls to finish, so once the run's context ends, Work is
// cancelled as soon as a model call is in flight, which ends the calls
// at once.
type Drain struct {
	work   context.Context
	cancel context.CancelFunc
	busy   func() bool // a model call is in flight; nil: never
	done   chan struct{}

	mu       sync.Mutex
	timedOut bool
	waiting  bool // work was cancelled while model calls were in flight
	aborted  bool
	signal   os.Signal // the signal that aborted, if one did
}

// drainPoll is how often a stopping run looks for model calls in flight.
const drainPoll = 100 * time.Millisecond

// NewDrain follows ctx, the run's context: timeout after it ends (or as
// soon as busy reports a model call in flight) Work is cancelled. Close
// releases it.
func NewDrain(ctx context.Context, timeout time.Duration, busy func() bool) *Drain {
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d := &Drain{work: work, cancel: cancel, busy: busy, done: make(chan struct{})}
	go d.run(ctx.Done(), timeout)
	return d
}

func (d *Drain) run(stop <-chan struct{}, timeout time.Duration) {
	defer close(d.done)
	var expired, poll <-chan time.Time
	for {
		select {
		case <-d.work.Done():
			return
		case <-stop:
			stop = nil
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
			if d.busy != nil {
				if d.busy() {
					d.stopWaiting()
					return
				}
				tk := time.NewTicker(drainPoll)
				defer tk.Stop()
				poll = tk.C
			}
		case <-poll:
			if d.busy() {
				d.stopWaiting()
				return
			}
		case <-expired:
			d.mu.Lock()
			d.timedOut = true
			d.mu.Unlock()
			d.cancel()
			return
		}
	}
}

// stopWaiting cancels work because model calls are in flight.
func (d *Drain) stopWaiting() {
	d.mu.Lock()
	d.waiting = true
	d.mu.Unlock()
	d.cancel()
}

// Work is the context documents are processed under.
func (d *Drain) Work() context.Context { return d.work }

// Done is closed once the drain has stopped following the run: Work is
// cancelled, or the run's context ended with Work cancelled for it.
func (d *Drain) Done() <-chan struct{} { return d.done }

// Abort cancels Work now (a second signal: documents in flight are rolled
// back).
func (d *Drain) Abort() {
	d.mu.Lock()
	d.aborted = true
	d.mu.Unlock()
	d.cancel()
}

// Close cancels Work; call it when the run is over.
func (d *Drain) Close() { d.cancel() }

// Why says why Work was cancelled: the timeout ran out, model calls were
// in flight when the run's context ended, or Abort.
func (d *Drain) Why() (timedOut, waiting, aborted bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.timedOut, d.waiting, d.aborted
}

// AbortOnSecond follows sigs, the signals that stop the run, until the
// drain is over: the first is the run's own (its context ends, and
// documents in flight may finish), the second aborts, rolling them back,
// and then hears it in aborted (nil: nothing more).
func (d *Drain) AbortOnSecond(sigs <-chan os.Signal, aborted func(os.Signal)) {
	signals := 0
	for {
		select {
		case <-d.Done():
			return
		case sig := <-sigs:
			if signals++; signals < 2 {
				continue
			}
			d.mu.Lock()
			d.signal = sig
			d.mu.Unlock()
			d.Abort()
			if aborted != nil {
				aborted(sig)
			}
			return
		}
	}
}

// NotifySignals has SIGINT and SIGTERM followed by AbortOnSecond (the
// first is also the run's, which the caller turns into ending its
// context); stop releases them, once the run is over.
func (d *Drain) NotifySignals(aborted func(os.Signal)) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go d.AbortOnSecond(sigs, aborted)
	return func() { signal.Stop(sigs) }
}

// AbortSignal is the signal AbortOnSecond aborted on, nil before one.
func (d *Drain) AbortSignal() os.Signal {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.signal
}

// Settle is err, the error of a run under Work, as a user should see it:
// a run the drain stopped (its timeout ran out, or model calls were in
// flight when it ended) stopped cleanly, so err becomes nil and note says
// what happened to the documents in flight.
func (d *Drain) Settle(err error) (settled error, note string) {
	timedOut, waiting, _ := d.Why()
	switch {
	case err == nil:
		return nil, ""
	case waiting && errors.Is(err, context.Canceled):
		return nil, "stopped while waiting for the model: the calls in flight were cancelled, and the documents in flight were rolled back and will be resumed on the next run"
	case timedOut && errors.Is(err, context.Canceled):
		return nil, "shutdown timeout reached: documents in flight were rolled back and will be resumed on the next run"
	}
	return err, ""
}
