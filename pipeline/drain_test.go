package pipeline

import (
	"context"
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
