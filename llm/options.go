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
	secrets       []string
	logger        *slog.Logger
	batchSize     int
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
// so that repeating a request with the same provider, model, messages and
// parameters costs no call. Without it nothing is cached.
func WithCache(path string) Option { return func(c *config) { c.cachePath = path } }

// WithAPIKey sets the provider's API key instead of its environment variable.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithBaseURL sets the provider's endpoint instead of its environment variable.
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
