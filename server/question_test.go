package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/retrieve"
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

func TestCheckAnswerMethods(t *testing.T) {
	ok := retrieve.IntegrateOptions{TauG: 0.5, TauL: 0.5}
	tests := []struct {
		name      string
		modes     []string
		integrate string
		o         retrieve.IntegrateOptions
		model     bool
		want      string // "" for no error
	}{
		{"mix integrated", []string{"mix"}, IntegrateLogits, ok, true, ""},
		{"path integrated", []string{"path"}, IntegrateLogits, ok, true, ""},
		{"naive integrated", []string{"naive"}, IntegrateLogits, ok, true, "works with --mode mix or path, not naive"},
		{"no model to integrate", []string{"mix"}, IntegrateLogits, ok, false, "--integrate logits needs --llm"},
		{"unknown method", []string{"mix"}, "votes", ok, true, `--integrate "votes": unknown method`},
		{"threshold out of range", []string{"mix"}, IntegrateLogits, retrieve.IntegrateOptions{TauG: 0.5, TauL: 1.5}, true, "--tau-l 1.5: a confidence is between 0 and 1"},
		{"logic offline", []string{"logic"}, "", ok, false, "--mode logic needs --llm"},
		{"logic", []string{"logic"}, "", ok, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckAnswerMethods(tt.modes, tt.modes, tt.integrate, tt.o, tt.model)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
