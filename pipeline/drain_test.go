package pipeline

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDrain: Work outlives the run's context until the timeout, a model
// call in flight or Abort cancels it, and Why says which.
func TestDrain(t *testing.T) {
	tests := []struct {
		name                       string
		timeout                    time.Duration
		busy                       func() bool
		abort                      bool
		timedOut, waiting, aborted bool
	}{
		{name: "timeout", timeout: time.Millisecond, timedOut: true},
		{name: "model call in flight", timeout: time.Hour, busy: func() bool { return true }, waiting: true},
		{name: "abort", timeout: time.Hour, busy: func() bool { return false }, abort: true, aborted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, stop := context.WithCancel(context.Background())
			d := NewDrain(run, tt.timeout, tt.busy)
			defer d.Close()
			if d.Work().Err() != nil {
				t.Fatal("work cancelled before the run's context ended")
			}
			stop()
			if tt.abort {
				select {
				case <-d.Work().Done():
					t.Fatal("work cancelled by the end of the run's context alone")
				case <-time.After(50 * time.Millisecond):
				}
				d.Abort()
			}
			select {
			case <-d.Done():
			case <-time.After(time.Minute):
				t.Fatal("the drain did not end")
			}
			if d.Work().Err() == nil {
				t.Error("work not cancelled")
			}
			if to, w, a := d.Why(); to != tt.timedOut || w != tt.waiting || a != tt.aborted {
				t.Errorf("Why = %v, %v, %v; want %v, %v, %v", to, w, a, tt.timedOut, tt.waiting, tt.aborted)
			}
		})
	}
}

// TestDrainSecondSignal: the first signal is the run's own, the second
// aborts, and Settle then reports the run as it ended.
func TestDrainSecondSignal(t *testing.T) {
	d := NewDrain(context.Background(), time.Hour, nil)
	defer d.Close()
	sigs := make(chan os.Signal, 2)
	heard := make(chan os.Signal, 1)
	go d.AbortOnSecond(sigs, func(s os.Signal) { heard <- s })
	sigs <- os.Interrupt
	select {
	case <-d.Work().Done():
		t.Fatal("work cancelled by the first signal")
	case <-time.After(50 * time.Millisecond):
	}
	if d.AbortSignal() != nil {
		t.Fatal("aborted on the first signal")
	}
	sigs <- syscall.SIGTERM
	select {
	case s := <-heard:
		if s != syscall.SIGTERM || d.AbortSignal() != syscall.SIGTERM {
			t.Errorf("aborted on %v (AbortSignal %v), want SIGTERM", s, d.AbortSignal())
		}
	case <-time.After(time.Minute):
		t.Fatal("the second signal did not abort")
	}
	if d.Work().Err() == nil {
		t.Error("work not cancelled by the second signal")
	}
}

func TestDrainSettle(t *testing.T) {
	other := errors.New("store gone")
	tests := []struct {
		name    string
		timeout time.Duration
		busy    func() bool
		err     error
		want    error
		note    string
	}{
		{name: "no error", timeout: time.Millisecond},
		{name: "timeout", timeout: time.Millisecond, err: context.Canceled, note: "shutdown timeout reached"},
		{name: "waiting for the model", timeout: time.Hour, busy: func() bool { return true }, err: context.Canceled, note: "stopped while waiting for the model"},
		{name: "other failure", timeout: time.Millisecond, err: other, want: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, stop := context.WithCancel(context.Background())
			d := NewDrain(run, tt.timeout, tt.busy)
			defer d.Close()
			stop()
			<-d.Done()
			err, note := d.Settle(tt.err)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) || !strings.HasPrefix(note, tt.note) || (tt.note == "") != (note == "") {
				t.Errorf("Settle(%v) = %v, %q; want %v, %q...", tt.err, err, note, tt.want, tt.note)
			}
		})
	}
}
