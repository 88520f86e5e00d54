package retrieve

import (
	"context"

	"github.com/docgraph/docgraph/retrieve/internal/calls"
)

// ModelCallHook hears each model call a retrieval or an answer makes
// under a context from WithModelCallHook: what the call asks the model
// for ("keywords", "logic form", "logic form's pre-check", "Cypher
// query", "answer", "model-only answer", "choice of paths") when it
// starts; the function it returns, if not nil, is called when it ends.
type ModelCallHook func(what string) (end func())

// WithModelCallHook has the model calls made under the returned context
// reported to h, so that a caller whose deadline ran out can say what it
// was waiting for.
func WithModelCallHook(ctx context.Context, h ModelCallHook) context.Context {
	return calls.WithHook(ctx, calls.Hook(h))
}
