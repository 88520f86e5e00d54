package llm

import (
	"fmt"
	"sync"
	"time"
)

// Waits is what a client's calls are doing right now, for a progress line
// that shows a user what a run is waiting for, and for a watchdog that
// stops a run whose model has stopped answering.
type Waits struct {
	Model    string // provider:model
	Endpoint string // where the last attempt went, without credentials or query; "" before one
	InFlight int    // calls started and not finished, those backing off included
	Retrying int    // calls sleeping before a retry
	// Oldest is the age of the oldest call in flight.
	Oldest time.Duration
	// LastError is the last failed attempt's cause, secrets removed.
	LastError string
	// Failing is how long the model has been failing: since the start of
	// the first failed attempt after the last answer; 0 when the last
	// attempt to end was answered.
	Failing time.Duration
	// FailedAttempts counts the failed attempts since the last answer.
	FailedAttempts int
}

// Stalled is an error when the model has answered nothing for window
// while its calls failed (timeouts, refusals, server errors), nil
// otherwise or when window is 0. A slow model whose calls still end in
// answers is never stalled: each answer restarts the clock.
func (w Waits) Stalled(window time.Duration) error {
	if window <= 0 || w.FailedAttempts == 0 || w.Failing < window {
		return nil
	}
	return &StallError{Model: w.Model, Endpoint: w.Endpoint, Window: window, Failing: w.Failing,
		FailedAttempts: w.FailedAttempts, LastError: w.LastError}
}

// StallError stops a run whose model answered nothing for the stall window.
type StallError struct {
	Model, Endpoint string
	Window, Failing time.Duration
	FailedAttempts  int
	LastError       string
}

func (e *StallError) Error() string {
	at := ""
	if e.Endpoint != "" {
		at = " at " + e.Endpoint
	}
	return fmt.Sprintf("no answer from %s%s for %s (stall window %s): %d failed attempts, the last: %s",
		e.Model, at, e.Failing.Round(time.Second), e.Window, e.FailedAttempts, e.LastError)
}

// idleReset is the pause in calls after which earlier failures no longer
// count towards a stall. Within a run calls follow each other in
// milliseconds; a minute without any is a watched folder at rest.
const idleReset = time.Minute

// activity tracks an engine's calls for Waits.
type activity struct {
	mu       sync.Mutex
	now      func() time.Time
	next     uint64
	calls    map[uint64]time.Time // start of each call in flight
	retrying int
	endpoint string
	lastErr  string
	// failingSince is when the first failed attempt since the last answer
	// began; zero when the last attempt to end was answered.
	failingSince time.Time
	failed       int
	idleSince    time.Time // when the last call ended with none left
}

func newActivity() *activity {
	return &activity{now: time.Now, calls: map[uint64]time.Time{}}
}

// begin notes a call's start and returns its id for end.
func (a *activity) begin() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if len(a.calls) == 0 && !a.idleSince.IsZero() && now.Sub(a.idleSince) > idleReset {
		// Failures from before a pause say little about the model now (a
		// watched folder may be quiet for hours), so the clock restarts.
		a.failingSince, a.failed = time.Time{}, 0
	}
	a.next++
	a.calls[a.next] = now
	return a.next
}

func (a *activity) end(id uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.calls, id)
	if len(a.calls) == 0 {
		a.idleSince = a.now()
	}
}

// attempt notes one attempt's outcome: started is when it began, err its
// redacted cause ("" for an answer).
func (a *activity) attempt(started time.Time, endpoint, err string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if endpoint != "" {
		a.endpoint = endpoint
	}
	if err == "" {
		a.failingSince, a.failed = time.Time{}, 0
		return
	}
	a.lastErr = err
	a.failed++
	if a.failingSince.IsZero() || started.Before(a.failingSince) {
		a.failingSince = started
	}
}

// sent notes where a request went as it leaves.
func (a *activity) sent(endpoint string) {
	a.mu.Lock()
	a.endpoint = endpoint
	a.mu.Unlock()
}

func (a *activity) backoff(delta int) {
	a.mu.Lock()
	a.retrying += delta
	a.mu.Unlock()
}

func (a *activity) waits(model string) Waits {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	w := Waits{Model: model, Endpoint: a.endpoint, InFlight: len(a.calls), Retrying: a.retrying,
		LastError: a.lastErr, FailedAttempts: a.failed}
	for _, t := range a.calls {
		w.Oldest = max(w.Oldest, now.Sub(t))
	}
	if !a.failingSince.IsZero() {
		w.Failing = now.Sub(a.failingSince)
	}
	return w
}
