package retrieve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/retrieve/internal/calls"
)

// AnswerResult is a model's answer with the sources it was given.
type AnswerResult struct {
	Text string `json:"answer"`
	// Sources are the numbered passages of the context; Cited marks those
	// the answer cites.
	Sources []Source `json:"sources"`
}

// Cited returns the cited sources, or all of them when the answer cites none.
func (a *AnswerResult) Cited() []Source {
	var out []Source
	for _, s := range a.Sources {
		if s.Cited {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return a.Sources
	}
	return out
}

// Answer asks the model to answer from the context, citing passages as [n].
// When stream is not nil the answer is written to it as it arrives.
func Answer(ctx context.Context, model llms.Model, c *Context, stream io.Writer) (*AnswerResult, error) {
	msgs, err := c.Messages()
	if err != nil {
		return nil, err
	}
	text, err := Generate(ctx, model, msgs, stream)
	if err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	a := &AnswerResult{Text: text, Sources: append([]Source(nil), c.Sources...)}
	cited := Citations(a.Text)
	for i := range a.Sources {
		a.Sources[i].Cited = cited[a.Sources[i].N]
	}
	return a, nil
}

// ErrNoAnswer is the cause of an answer that is empty or cut off: shown as
// if it were whole, it would be a wrong answer, which is worse than none.
var ErrNoAnswer = errors.New("no usable answer")

// Generate asks the model for an answer to msgs at temperature 0, writing
// it to stream (when not nil) as it arrives. An empty answer, or one the
// model stopped at its output limit, is an error wrapping ErrNoAnswer.
func Generate(ctx context.Context, model llms.Model, msgs []llms.MessageContent, stream io.Writer) (string, error) {
	opts := []llms.CallOption{llms.WithTemperature(0)}
	if stream != nil {
		opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
			_, err := stream.Write(chunk)
			return err
		}))
	}
	end := calls.Start(ctx, "answer")
	resp, err := model.GenerateContent(ctx, msgs, opts...)
	end()
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("%w: the model returned no choices", ErrNoAnswer)
	}
	ch := resp.Choices[0]
	if strings.TrimSpace(ch.Content) == "" {
		return "", fmt.Errorf("%w: the model returned an empty answer", ErrNoAnswer)
	}
	switch strings.ToLower(ch.StopReason) {
	case "length", "max_tokens":
		return "", fmt.Errorf("%w: the answer was cut off at the model's output limit (stop reason %q)", ErrNoAnswer, ch.StopReason)
	}
	return ch.Content, nil
}

var citationGroup = regexp.MustCompile(`\[(\s*\d+(?:\s*[,;]\s*\d+)*\s*)\]`)

// Citations returns the source numbers an answer cites: [2], [1][3] and
// [1, 3] forms.
func Citations(answer string) map[int]bool {
	out := map[int]bool{}
	for _, m := range citationGroup.FindAllStringSubmatch(answer, -1) {
		for _, part := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == ';' || r == ' ' }) {
			if n, err := strconv.Atoi(part); err == nil && n > 0 {
				out[n] = true
			}
		}
	}
	return out
}

// Messages are the chat messages that ask for the answer: the graph
// sections as a system message (when there are any), then the prompt.
func (c *Context) Messages() ([]llms.MessageContent, error) {
	prompt, err := c.Prompt()
	if err != nil {
		return nil, err
	}
	var msgs []llms.MessageContent
	if sys := c.System(); sys != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, sys))
	}
	return append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, prompt)), nil
}
