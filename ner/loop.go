package ner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/prompts"
)

// Variant is the order of a gleaning round in loop-NER (HuixiangDou2,
// Algorithm 2).
type Variant string

const (
	// VariantBase asks for the missed records first and the judge after:
	// it always gleans at least once, and found more entities and edges and
	// answered better in the paper's comparison.
	VariantBase Variant = "base"
	// VariantTrial asks the judge first and gleans only on a "yes".
	VariantTrial Variant = "trial"
)

// ParseVariant reads "base" or "trial", e.g. from a command-line flag.
func ParseVariant(s string) (Variant, error) {
	switch v := Variant(strings.ToLower(strings.TrimSpace(s))); v {
	case VariantBase, VariantTrial:
		return v, nil
	}
	return "", fmt.Errorf("loop-ner variant %q: want base or trial", s)
}

// Loop is the LLM extractor: one extraction request, then gleaning rounds
// in the same conversation until the round limit, a "no" from the judge,
// or the context budget stops it. Safe for concurrent use.
type Loop struct {
	model         llms.Model
	gleaning      int
	variant       Variant
	entityTypes   []string
	language      string
	contextTokens int
	count         func(string) int
	callOpts      []llms.CallOption
	stats         loopCounters
	unusableLimit int

	// startMu guards the run of unusable answers at the start: the count
	// before any usable answer, and the error that stopped the loop.
	startMu       sync.Mutex
	startUnusable int
	sawUsable     bool
	stopped       *UnusableAnswersError
}

var _ Extractor = (*Loop)(nil)

// LoopOption configures a Loop.
type LoopOption func(*Loop)

// WithGleaning sets the most gleaning rounds after the first extraction
// (default 1; 0 extracts once).
func WithGleaning(n int) LoopOption {
	return func(l *Loop) {
		if n >= 0 {
			l.gleaning = n
		}
	}
}

// WithVariant chooses VariantBase (default) or VariantTrial; anything else means base.
func WithVariant(v Variant) LoopOption {
	return func(l *Loop) {
		if v == VariantTrial {
			l.variant = VariantTrial
		} else {
			l.variant = VariantBase
		}
	}
}

// WithEntityTypes sets the entity types the prompt allows (default prompts.DefaultEntityTypes).
func WithEntityTypes(types ...string) LoopOption {
	return func(l *Loop) { l.entityTypes = types }
}

// WithLanguage sets the language of the descriptions (default English).
func WithLanguage(lang string) LoopOption {
	return func(l *Loop) { l.language = lang }
}

// WithContextTokens is the model's context budget (default 32768): a round
// whose conversation, plus room for an answer as long as the first, would
// exceed it is skipped.
func WithContextTokens(n int) LoopOption {
	return func(l *Loop) {
		if n > 0 {
			l.contextTokens = n
		}
	}
}

// WithTokenCounter counts tokens for the context budget, e.g. with
// splitter's tokenizer (default llm.EstimateTokens).
func WithTokenCounter(count func(string) int) LoopOption {
	return func(l *Loop) {
		if count != nil {
			l.count = count
		}
	}
}

// WithUnusableLimit is how many consecutive unusable answers (no record in
// the extraction format) at the start, before any usable one, stop the
// loop with an UnusableAnswersError (default 5; 0 never stops). Once a
// usable answer came, unusable ones are only counted.
func WithUnusableLimit(n int) LoopOption {
	return func(l *Loop) {
		if n >= 0 {
			l.unusableLimit = n
		}
	}
}

// WithCallOptions are passed to every model call (default temperature 0).
func WithCallOptions(opts ...llms.CallOption) LoopOption {
	return func(l *Loop) { l.callOpts = opts }
}

// NewLoop returns a loop-NER extractor asking model; pass an llm.Client so
// that the calls are limited, retried, cached and counted.
func NewLoop(model llms.Model, opts ...LoopOption) *Loop {
	l := &Loop{
		model:         model,
		gleaning:      1,
		variant:       VariantBase,
		contextTokens: 32768,
		count:         llm.EstimateTokens,
		callOpts:      []llms.CallOption{llms.WithTemperature(0)},
		unusableLimit: 5,
	}
	for _, o := range opts {
		o(l)
	}
	return l
}

// loopVersion changes whenever the prompts or the parsing change what the
// loop extracts, so that stored extractions can be told apart.
const loopVersion = "loop-v1"

// Name identifies the extractor, every option that changes its output and
// the model, e.g. "loop-v1(base,gleaning=1):openai:gpt-4o-mini".
func (l *Loop) Name() string {
	opts := []string{string(l.variant), fmt.Sprintf("gleaning=%d", l.gleaning)}
	if len(l.entityTypes) > 0 {
		opts = append(opts, "types="+strings.Join(l.entityTypes, "|"))
	}
	if l.language != "" {
		opts = append(opts, "lang="+l.language)
	}
	n := loopVersion + "(" + strings.Join(opts, ",") + ")"
	if m := l.modelName(); m != "" {
		n += ":" + m
	}
	return n
}

func (l *Loop) modelName() string {
	if m, ok := l.model.(interface{ Name() string }); ok {
		return m.Name()
	}
	return ""
}

// LoopStats are a Loop's counters, for the ingest summary.
type LoopStats struct {
	Chunks       int64 // chunks extracted successfully
	Failed       int64 // chunks whose extraction failed
	Calls        int64 // requests to the model (extraction, gleaning, judge), cache hits included
	Rounds       int64 // gleaning rounds run
	ContextSkips int64 // rounds skipped because the conversation would not fit
	JudgeYes     int64
	JudgeNo      int64
	JudgeInvalid int64 // judge answers that were neither yes nor no (gleaning stopped)
	Rejected     int64 // malformed records dropped
	Unusable     int64 // answers with no record in the extraction format
	Entities     int64 // entities returned, after merging rounds
	Relations    int64 // relations returned, after merging rounds
}

type loopCounters struct {
	chunks, failed, calls, rounds, skips atomic.Int64
	judgeYes, judgeNo, judgeInvalid      atomic.Int64
	rejected, entities, relations        atomic.Int64
	unusable                             atomic.Int64
}

// Stats returns the counters so far.
func (l *Loop) Stats() LoopStats {
	s := &l.stats
	return LoopStats{
		Chunks: s.chunks.Load(), Failed: s.failed.Load(), Calls: s.calls.Load(),
		Rounds: s.rounds.Load(), ContextSkips: s.skips.Load(),
		JudgeYes: s.judgeYes.Load(), JudgeNo: s.judgeNo.Load(), JudgeInvalid: s.judgeInvalid.Load(),
		Rejected: s.rejected.Load(), Unusable: s.unusable.Load(), Entities: s.entities.Load(), Relations: s.relations.Load(),
	}
}

// loopConversation is one chunk's message history and its token count.
type loopConversation struct {
	msgs   []llms.MessageContent
	tokens int
}

// add appends a message of the given token count.
func (c *loopConversation) add(role llms.ChatMessageType, text string, tokens int) {
	c.msgs = append(c.msgs, llms.TextParts(role, text))
	c.tokens += tokens + 4 // a few tokens of chat framing per message
}

// Extract implements Extractor.
func (l *Loop) Extract(ctx context.Context, c Chunk) (*Extraction, error) {
	x, err := l.extract(ctx, c)
	if err != nil {
		l.stats.failed.Add(1)
		return nil, fmt.Errorf("loop-ner chunk %s: %w", c.ID, err)
	}
	l.stats.chunks.Add(1)
	l.stats.rejected.Add(int64(x.Rejected))
	l.stats.entities.Add(int64(len(x.Entities)))
	l.stats.relations.Add(int64(len(x.Relations)))
	return x, nil
}

func (l *Loop) extract(ctx context.Context, c Chunk) (*Extraction, error) {
	if strings.TrimSpace(c.Text) == "" {
		return &Extraction{}, nil // nothing to ask about
	}
	data := l.promptData(c)
	first, err := prompts.RenderExtract(data)
	if err != nil {
		return nil, err
	}
	more, err := prompts.RenderContinue(data)
	if err != nil {
		return nil, err
	}
	judge, err := prompts.RenderJudge(data)
	if err != nil {
		return nil, err
	}

	var conv loopConversation
	conv.add(llms.ChatMessageTypeHuman, first, l.count(first))
	answer, err := l.ask(ctx, conv.msgs)
	if err != nil {
		return nil, fmt.Errorf("extract: %w", err)
	}
	// A gleaning answer is expected to be no longer than the first one.
	replyRoom := l.count(answer)
	conv.add(llms.ChatMessageTypeAI, answer, replyRoom)
	x := &Extraction{}
	got := ParseRecords(answer)
	ok, err := l.checkAnswer(x, answer, got, false)
	if !ok {
		l.forget(ctx, conv.msgs[:1])
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		// Gleaning on top of prose asks for more of what never came.
		x.Unusable = true
		x.Rejected = got.Rejected
		return x, nil
	}
	recMerge(x, got)
	// The gleaning request is the same every round: count it once.
	moreTokens := l.count(more)

	for round := 0; round < l.gleaning; round++ {
		if l.variant == VariantTrial {
			ok, err := l.judge(ctx, &conv, judge)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
		}
		if conv.tokens+moreTokens+replyRoom > l.contextTokens {
			l.stats.skips.Add(1)
			break
		}
		conv.add(llms.ChatMessageTypeHuman, more, moreTokens)
		answer, err := l.ask(ctx, conv.msgs)
		if err != nil {
			return nil, fmt.Errorf("gleaning round %d: %w", round+1, err)
		}
		conv.add(llms.ChatMessageTypeAI, answer, l.count(answer))
		got := ParseRecords(answer)
		l.stats.rounds.Add(1)
		ok, err := l.checkAnswer(x, answer, got, true)
		if !ok {
			l.forget(ctx, conv.msgs[:len(conv.msgs)-1])
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			x.Rejected += got.Rejected
			break // the model stopped following the format: more rounds would not help
		}
		recMerge(x, got)

		// Base asks the judge after each round; after the last round there
		// is nothing left to decide, so that question is not asked.
		if l.variant == VariantBase && round+1 < l.gleaning {
			ok, err := l.judge(ctx, &conv, judge)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
		}
	}
	recAddEndpoints(x)
	return x, nil
}

// judge asks whether records remain. The question and its answer stay out of
// the conversation, which keeps later rounds focused on the records; a
// question that does not fit the context budget counts as a skip and a no.
func (l *Loop) judge(ctx context.Context, conv *loopConversation, question string) (bool, error) {
	const answerRoom = 16
	if conv.tokens+l.count(question)+answerRoom > l.contextTokens {
		l.stats.skips.Add(1)
		return false, nil
	}
	msgs := append(conv.msgs[:len(conv.msgs):len(conv.msgs)], llms.TextParts(llms.ChatMessageTypeHuman, question))
	answer, err := l.ask(ctx, msgs)
	if err != nil {
		return false, fmt.Errorf("judge: %w", err)
	}
	yes, ok := ParseJudge(answer)
	switch {
	case !ok:
		l.stats.judgeInvalid.Add(1)
		return false, nil
	case yes:
		l.stats.judgeYes.Add(1)
	default:
		l.stats.judgeNo.Add(1)
	}
	return yes, nil
}

// checkAnswer says whether an answer (got, its parsed records) is in the
// extraction format; an unusable one is counted and described in x. Before
// any usable answer, the unusableLimit-th unusable one in a row stops the
// loop: the error is returned here and by every later call.
func (l *Loop) checkAnswer(x *Extraction, answer string, got *Extraction, gleaning bool) (bool, error) {
	usable := recUsable(answer, got, gleaning)
	l.startMu.Lock()
	defer l.startMu.Unlock()
	if usable {
		l.sawUsable = true
		return true, nil
	}
	l.stats.unusable.Add(1)
	what := "extraction"
	if gleaning {
		what = "gleaning"
	}
	excerpt := recExcerpt(answer)
	x.UnusableAnswers = append(x.UnusableAnswers,
		fmt.Sprintf("unusable answer from %s to the %s prompt: %q", l.modelName(), what, excerpt))
	if l.sawUsable || l.unusableLimit == 0 {
		return false, nil
	}
	l.startUnusable++
	if l.stopped == nil && l.startUnusable >= l.unusableLimit {
		l.stopped = &UnusableAnswersError{Model: l.modelName(), Count: l.startUnusable, Answer: excerpt}
	}
	if l.stopped != nil {
		return false, l.stopped
	}
	return false, nil
}

// forget drops the cached answer to msgs, when the model caches (an
// llm.Client), so that retrying the chunk asks the model again.
func (l *Loop) forget(ctx context.Context, msgs []llms.MessageContent) {
	if f, ok := l.model.(interface {
		Forget(context.Context, []llms.MessageContent, ...llms.CallOption)
	}); ok {
		f.Forget(ctx, msgs, l.callOpts...)
	}
}

// FirstRequest is the prompt of c's first extraction call and the request
// Extract sends with it (messages and call options), for a dry run that
// counts and looks up what a run would send without sending it. ok is false
// for a chunk with no text, about which no call is made.
func (l *Loop) FirstRequest(c Chunk) (prompt string, msgs []llms.MessageContent, opts []llms.CallOption, ok bool, err error) {
	if strings.TrimSpace(c.Text) == "" {
		return "", nil, nil, false, nil
	}
	first, err := prompts.RenderExtract(l.promptData(c))
	if err != nil {
		return "", nil, nil, false, err
	}
	var conv loopConversation
	conv.add(llms.ChatMessageTypeHuman, first, 0)
	return first, conv.msgs, l.callOpts, true, nil
}

// promptData fills the prompts for c, the same for Extract and FirstRequest.
func (l *Loop) promptData(c Chunk) prompts.ExtractData {
	return prompts.ExtractData{EntityTypes: l.entityTypes, Language: l.language, Text: c.Text}
}

// Model is the model the loop asks.
func (l *Loop) Model() llms.Model { return l.model }

// stopErr is the error that stopped the loop, nil while it runs.
func (l *Loop) stopErr() error {
	l.startMu.Lock()
	defer l.startMu.Unlock()
	if l.stopped == nil {
		return nil
	}
	return l.stopped
}

func (l *Loop) ask(ctx context.Context, msgs []llms.MessageContent) (string, error) {
	// A loop stopped for unusable answers makes no more calls: the chunks
	// still queued must not spend the corpus.
	if err := l.stopErr(); err != nil {
		return "", err
	}
	l.stats.calls.Add(1)
	resp, err := l.model.GenerateContent(ctx, msgs, l.callOpts...)
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("the model returned no choices")
	}
	return resp.Choices[0].Content, nil
}

// Gleaning is the most gleaning rounds after a chunk's first extraction.
func (l *Loop) Gleaning() int { return l.gleaning }
