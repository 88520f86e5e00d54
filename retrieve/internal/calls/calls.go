// Package calls labels the model calls of a retrieval or an answer with
// what they ask the model for, for a caller that wants to say what it is
// waiting for (query's --deadline message). It is internal so that both
// retrieve and retrieve/paths can label their calls; retrieve exports the
// hook.
package calls

import "context"

// Hook hears a model call start, with what it asks for ("keywords",
// "answer"); the function it returns is called when the call ends.
type Hook func(what string) (end func())

type key struct{}

// WithHook has the calls made under the returned context reported to h.
func WithHook(ctx context.Context, h Hook) context.Context {
	return context.WithValue(ctx, key{}, h)
}

// Start reports a model call asking for what; call the result when it
// ends. Without a hook in ctx it does nothing.
func Start(ctx context.Context, what string) (end func()) {
	h, _ := ctx.Value(key{}).(Hook)
	if h == nil {
		return func() {}
	}
	if end := h(what); end != nil {
		return end
	}
	return func() {}
}
