package llm

import (
	"log/slog"
	"time"
)

// Option configures a Client or an Embedder.
type Option func(*config)

type config struct {
	concurrency   int
	rpm, tpm      int
	timeout       time.Duration
	retries       int
	backoffBase   time.Duration
	backoffMax    time.Duration
	maxRetryAfter time.Duration
	cachePath     string
	apiKey        string
	baseURL       string
	// endpoint is the base URL the model is reached at once New or
	// NewEmbedder has resolved it (option, environment or the provider's
	// default); for Wrap and WrapEmbedder it is baseURL.
	endpoint    string
	secrets     []string
	logger      *slog.Logger
	batchSize   int
	maxResponse int64 // 0: DefaultMaxAnswerBytes for a Client, embeddingCap for an Embedder
}

func defaultConfig() config {
	return config{
		concurrency:   4,
		timeout:       3 * time.Minute,
		retries:       4,
		backoffBase:   time.Second,
		backoffMax:    time.Minute,
		maxRetryAfter: 5 * time.Minute,
		batchSize:     64,
	}
}

// WithConcurrency limits how many calls are in flight at once (default 4).
func WithConcurrency(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.concurrency = n
		}
	}
}

// WithRPM limits requests per minute, retries included (default unlimited).
func WithRPM(n int) Option { return func(c *config) { c.rpm = n } }

// WithTPM limits tokens per minute: prompt tokens are estimated from the
// prompt before each request and completion tokens charged after it
// (default unlimited).
func WithTPM(n int) Option { return func(c *config) { c.tpm = n } }

// WithTimeout bounds each attempt of a call (default 3 minutes, 0 for none); an attempt
// that runs out of time is retried like a server error.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithRetries sets how many times a failed call is retried after its first
// attempt when the failure is transient: 429, 408, 5xx, timeouts, network
// errors (default 4).
func WithRetries(n int) Option {
	return func(c *config) {
		if n >= 0 {
			c.retries = n
		}
	}
}

// WithBackoff sets the exponential backoff between retries: base, doubled
// each retry with jitter, capped at max (default 1s and 1m). A server's
// Retry-After overrides it, up to 5 minutes.
func WithBackoff(base, max time.Duration) Option {
	return func(c *config) {
		c.backoffBase, c.backoffMax = base, max
	}
}

// WithCache stores responses in the SQLite file at path (created if absent),
// so that repeating a request to the same endpoint (base URL, without its
// credentials) with the same provider, model, messages and parameters costs
// no call. Without it nothing is cached.
func WithCache(path string) Option { return func(c *config) { c.cachePath = path } }

// WithAPIKey sets the provider's API key instead of its environment variable.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithBaseURL sets the provider's endpoint instead of its environment
// variable. For Wrap and WrapEmbedder, which do not build the model, it
// only names the endpoint in cache keys: give it when the same model name
// may be served from more than one place.
func WithBaseURL(url string) Option { return func(c *config) { c.baseURL = url } }

// WithSecrets names strings that must never appear in errors or logs; the
// API key a Client is built with is always one of them.
func WithSecrets(s ...string) Option {
	return func(c *config) { c.secrets = append(c.secrets, s...) }
}

// WithLogger logs retries and cache trouble (default: silent).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithBatchSize sets how many texts an Embedder sends per request (default 64).
func WithBatchSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.batchSize = n
		}
	}
}

// DefaultMaxAnswerBytes bounds the body of one model response, streamed or
// not. An answer is at most tens of thousands of tokens, a few hundred KB
// even as a stream of JSON events; a server that sends more is broken or
// hostile, and reading it whole would hold it all in memory.
const DefaultMaxAnswerBytes = 8 << 20

// embeddingCapPerText bounds the response of an embedding request per text
// in it: a vector of 8192 floats as JSON is under 200 KB.
const embeddingCapPerText = 256 << 10

// WithMaxResponseBytes bounds each HTTP response body from the provider
// (default DefaultMaxAnswerBytes for a Client, 256 KiB a text in the batch
// for an Embedder); a larger one fails the call, without retries.
func WithMaxResponseBytes(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxResponse = n
		}
	}
}

// responseCap is the body limit for a Client (embedding: false) or an
// Embedder.
func (c *config) responseCap(embedding bool) int64 {
	switch {
	case c.maxResponse > 0:
		return c.maxResponse
	case embedding:
		return max(DefaultMaxAnswerBytes, int64(c.batchSize)*embeddingCapPerText)
	}
	return DefaultMaxAnswerBytes
}
