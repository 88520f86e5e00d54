// Package llm reaches language models and embedding models through langchaingo,
// with the limits, retries, response cache and counters every call needs.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/tmc/langchaingo/llms"
)

// Client wraps a langchaingo model so that every call goes through the
// concurrency limit, the rate limits, the per-attempt timeout, the retries
// and the response cache, and is counted. It is itself an llms.Model, so
// everything downstream takes an llms.Model. Safe for concurrent use.
type Client struct {
	model    llms.Model
	provider string
	endpoint string // cacheEndpoint of the base URL, for cache keys
	name     string
	eng      *engine
	cache    *cache
}

var _ llms.Model = (*Client)(nil)

// Wrap puts a Client around an existing model. provider and model name the
// model in the cache key and in errors, with the base URL WithBaseURL gives
// (none: the key has no endpoint). Retry-After and HTTP statuses are only
// seen precisely for models built by New, whose HTTP client records them;
// for others they are read from the error text.
func Wrap(model llms.Model, provider, modelName string, opts ...Option) (*Client, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	cfg.endpoint = cfg.baseURL
	return newClient(model, provider, modelName, cfg)
}

func newClient(model llms.Model, provider, modelName string, cfg config) (*Client, error) {
	c := &Client{
		model:    model,
		provider: provider,
		endpoint: cacheEndpoint(cfg.endpoint),
		name:     modelName,
		eng:      newEngine(provider, modelName, cfg),
	}
	if cfg.cachePath != "" {
		ch, err := openCache(cfg.cachePath)
		if err != nil {
			return nil, err
		}
		c.cache = ch
	}
	return c, nil
}

// Name is the client's spec, "provider:model".
func (c *Client) Name() string { return c.provider + ":" + c.name }

// Stats returns the counters so far.
func (c *Client) Stats() Stats { return c.eng.stats.snapshot() }

// Close releases the response cache.
func (c *Client) Close() error {
	if c.cache == nil {
		return nil
	}
	return c.cache.close()
}

// Call implements llms.Model for a single text prompt.
func (c *Client) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, options...)
}

// GenerateContent implements llms.Model: it answers from the cache when it
// can and otherwise calls the model under the client's limits and retries.
// A streaming callback on a cache hit receives the whole answer at once;
// on a retried call it may see the start of a failed attempt's answer.
func (c *Client) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	opts, model := c.callOptions(options)

	var key string
	if c.cache != nil {
		if k, ok := chatKey(c.provider, c.endpoint, model, messages, opts); ok {
			key = k
			if resp, ok := c.cached(ctx, key); ok {
				c.eng.stats.cacheHits.Add(1)
				usageFrom(ctx).cacheHit()
				if opts.StreamingFunc != nil && len(resp.Choices) > 0 {
					if err := opts.StreamingFunc(ctx, []byte(resp.Choices[0].Content)); err != nil {
						return nil, fmt.Errorf("llm %s: streaming cached answer: %w", c.Name(), err)
					}
				}
				return resp, nil
			}
		}
	}

	est := EstimateMessageTokens(messages)
	top, wantLP := wantsLogProbs(opts)
	wantLP = wantLP && c.SupportsLogProbs() && opts.StreamingFunc == nil
	var resp *llms.ContentResponse
	var streamed atomic.Bool
	if user := opts.StreamingFunc; user != nil {
		options = append(options[:len(options):len(options)], llms.WithStreamingFunc(func(ctx context.Context, chunk []byte) error {
			if len(chunk) > 0 {
				streamed.Store(true)
			}
			return user(ctx, chunk)
		}))
	}
	u := usageFrom(ctx)
	u.begin()
	err := c.eng.run(ctx, est, func(ctx context.Context) error {
		u.attempt()
		lp := attachLogProbs(ctx, wantLP, top)
		r, err := c.model.GenerateContent(ctx, messages, options...)
		if err == nil && (r == nil || len(r.Choices) == 0) {
			err = errors.New("empty response")
		}
		if err == nil {
			lp.into(r.Choices[0])
		}
		if err == nil && opts.StreamingFunc != nil {
			err = c.unfinishedStream(r.Choices[0])
		}
		if err != nil && streamed.Load() {
			err = errStreamBroken{err}
		}
		resp = r
		return err
	})
	if err != nil {
		u.end(ctx, 0, 0, false)
		return nil, err
	}

	prompt, completion := usage(resp, est)
	u.end(ctx, prompt, completion, true)
	c.eng.stats.promptTokens.Add(int64(prompt))
	c.eng.stats.completionTokens.Add(int64(completion))
	c.eng.tpm.debit(float64(completion))

	if key != "" {
		c.store(ctx, key, model, resp)
	}
	return resp, nil
}

// callOptions applies options and returns them with the model they name,
// the client's own when they name none.
func (c *Client) callOptions(options []llms.CallOption) (llms.CallOptions, string) {
	var opts llms.CallOptions
	for _, o := range options {
		o(&opts)
	}
	if opts.Model != "" {
		return opts, opts.Model
	}
	return opts, c.name
}

// Forget drops the cached answer to the request GenerateContent would make
// with these messages and options, for an answer the caller found unusable
// (not in the format it asked for): a later run asks the model again rather
// than replaying it, as after a fix behind the same model name. Without a
// cache it does nothing; a cache that cannot be written is only logged.
func (c *Client) Forget(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) {
	if c.cache == nil {
		return
	}
	opts, model := c.callOptions(options)
	if key, ok := chatKey(c.provider, c.endpoint, model, messages, opts); ok {
		if err := c.cache.remove(context.WithoutCancel(ctx), key); err != nil {
			c.logCache(ctx, err)
		}
	}
}

// Cached reports whether the cache holds the answer to the request
// GenerateContent would make with these messages and options, without
// calling the model or writing anything (a dry run's estimate). Without a
// cache it is false.
func (c *Client) Cached(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (bool, error) {
	if c.cache == nil {
		return false, nil
	}
	opts, model := c.callOptions(options)
	key, ok := chatKey(c.provider, c.endpoint, model, messages, opts)
	if !ok {
		return false, nil
	}
	_, hit, err := c.cache.get(ctx, key)
	return hit, err
}

// unfinishedStream tells a streamed OpenAI answer that ended before the
// model finished it: every complete stream ends with a finish_reason, so
// one without is cut off (a dropped connection closed cleanly, a proxy
// timeout) or was never a chat stream at all (the client skips lines it
// cannot read, so garbage arrives as an empty answer).
func (c *Client) unfinishedStream(ch *llms.ContentChoice) error {
	if c.provider != "openai" || (ch.StopReason != "" && ch.StopReason != "null") {
		return nil
	}
	if ch.Content == "" {
		return errors.New("the server sent nothing readable as an OpenAI chat completion stream")
	}
	return fmt.Errorf("the answer stream ended after %d bytes, before the model finished (no finish_reason): the answer is cut off", len(ch.Content))
}

func (c *Client) cached(ctx context.Context, key string) (*llms.ContentResponse, bool) {
	b, ok, err := c.cache.get(ctx, key)
	if err != nil {
		c.logCache(ctx, err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	var resp llms.ContentResponse
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Choices) == 0 {
		return nil, false // unreadable entry: ask again and overwrite it
	}
	return &resp, true
}

// store writes an answer to the cache. A cache that cannot be written costs
// a repeated call next time, not this call's answer, so it is only logged.
func (c *Client) store(ctx context.Context, key, model string, resp *llms.ContentResponse) {
	b, err := json.Marshal(resp)
	if err != nil {
		c.logCache(ctx, fmt.Errorf("encode answer: %w", err))
		return
	}
	if err := c.cache.put(ctx, key, "chat", c.provider, model, b); err != nil {
		c.logCache(ctx, err)
	}
}

func (c *Client) logCache(ctx context.Context, err error) {
	if l := c.eng.cfg.logger; l != nil {
		l.LogAttrs(ctx, slog.LevelWarn, "llm cache", slog.String("model", c.Name()), slog.String("error", err.Error()))
	}
}

// usage reads the token counts a provider reports in GenerationInfo
// (OpenAI and Ollama: PromptTokens/CompletionTokens; Anthropic:
// InputTokens/OutputTokens), estimating whatever is missing.
func usage(resp *llms.ContentResponse, promptEstimate int) (prompt, completion int) {
	var info map[string]any
	if len(resp.Choices) > 0 {
		info = resp.Choices[0].GenerationInfo
	}
	prompt = firstInt(info, "PromptTokens", "InputTokens")
	completion = firstInt(info, "CompletionTokens", "OutputTokens")
	if prompt <= 0 {
		prompt = promptEstimate
	}
	if completion <= 0 {
		for _, ch := range resp.Choices {
			completion += EstimateTokens(ch.Content)
		}
	}
	return prompt, completion
}

func firstInt(m map[string]any, keys ...string) int {
	for _, k := range keys {
		switch v := m[k].(type) {
		case int:
			if v > 0 {
				return v
			}
		case int64:
			if v > 0 {
				return int(v)
			}
		case float64: // answers read back from the cache
			if v > 0 {
				return int(v)
			}
		}
	}
	return 0
}

// Waits reports what the client's calls are doing now: how many are in
// flight, the oldest one's age, where they go and how they fail.
func (c *Client) Waits() Waits { return c.eng.waits() }
