package server

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docgraph/docgraph/llm"
)

// TestDeadlineErrorNamesTheStep: the deadline's message names the model
// calls it cut, else the step; an error that is only the expired context
// seen from inside (a store read) is left out, any other is kept.
func TestDeadlineErrorNamesTheStep(t *testing.T) {
	storeErr := fmt.Errorf("entity lookup: sqlite store /tmp/g.db: entities: %w", context.DeadlineExceeded)
	tests := []struct {
		name  string
		model string
		calls []string // model calls the deadline cut
		step  string
		err   error
		want  string
	}{
		{name: "cut call", model: "openai:m", calls: []string{"keywords"}, step: "retrieval", err: storeErr,
			want: "deadline of 2s reached while waiting for the keywords from openai:m (after 0 attempts; raise --deadline, or 0 for none)"},
		{name: "two cut calls", model: "openai:m", calls: []string{"model-only answer", "answer"}, step: "integration", err: storeErr,
			want: "deadline of 2s reached while waiting for the answer and the model-only answer from openai:m (2 calls side by side; raise --deadline, or 0 for none)"},
		{name: "answer cut mid-stream", model: "openai:m", calls: []string{"answer"}, step: "answer", err: &cutAnswer{n: 24, err: storeErr},
			want: "deadline of 2s reached while waiting for the answer from openai:m (after 0 attempts; raise --deadline, or 0 for none): the answer printed above is incomplete (24 bytes)"},
		{name: "store read", model: "openai:m", step: "retrieval", err: storeErr,
			want: "deadline of 2s reached during retrieval (raise --deadline, or 0 for none)"},
		{name: "other error", step: "context assembly", err: errors.New("no tokenizer"),
			want: "deadline of 2s reached during context assembly (raise --deadline, or 0 for none): no tokenizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &progress{model: tt.model, Steps: NewSteps(func() bool { return true })}
			p.Set(tt.step)
			for _, c := range tt.calls {
				p.Call(c)()
			}
			err := p.deadlineError(2*time.Second, &llm.Usage{}, tt.err)
			if err.Error() != tt.want {
				t.Errorf("got  %q\nwant %q", err, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("%v does not unwrap to %v", err, tt.err)
			}
		})
	}
}
