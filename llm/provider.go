package llm

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Spec names a model: provider and model, written "provider:model". The
// model part may itself hold colons ("ollama:qwen2.5:7b").
type Spec struct {
	Provider string // "openai", "ollama" or "anthropic"
	Model    string
}

func (s Spec) String() string { return s.Provider + ":" + s.Model }

// ParseSpec reads "provider:model".
func ParseSpec(spec string) (Spec, error) {
	p, m, ok := strings.Cut(strings.TrimSpace(spec), ":")
	p = strings.ToLower(strings.TrimSpace(p))
	m = strings.TrimSpace(m)
	if !ok || p == "" || m == "" {
		return Spec{}, fmt.Errorf("llm spec %q: want provider:model, e.g. openai:gpt-4o-mini or ollama:qwen2.5", spec)
	}
	switch p {
	case "openai", "ollama", "anthropic":
		return Spec{Provider: p, Model: m}, nil
	}
	return Spec{}, fmt.Errorf("llm spec %q: unknown provider %q (want openai, ollama or anthropic)", spec, p)
}

// New builds the chat model that spec names and wraps it in a Client.
//
//   - openai:MODEL uses OPENAI_API_KEY and OPENAI_BASE_URL, so any
//     OpenAI-compatible server works (vLLM, llama.cpp server, LM Studio,
//     DeepSeek...). With a base URL and no key, a placeholder key is sent,
//     since local servers ignore it and langchaingo insists on one.
//   - ollama:MODEL uses OLLAMA_HOST (default 127.0.0.1:11434).
//   - anthropic:MODEL uses ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL if set).
//
// WithAPIKey and WithBaseURL override the environment.
func New(spec string, opts ...Option) (*Client, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	model, err := buildModel(s, &cfg, newHTTPClient(cfg.concurrency, cfg.responseCap(false)))
	if err != nil {
		return nil, err
	}
	return newClient(model, s.Provider, s.Model, cfg)
}

// buildModel constructs the langchaingo model; it records the API key it
// uses in cfg.secrets so that it is redacted from errors and logs.
func buildModel(s Spec, cfg *config, hc *http.Client) (llms.Model, error) {
	switch s.Provider {
	case "openai":
		o, err := openaiOptions(s, cfg, hc)
		if err != nil {
			return nil, err
		}
		o = append(o, openai.WithModel(s.Model))
		m, err := openai.New(o...)
		if err != nil {
			return nil, fmt.Errorf("llm %s: %s", s, cfg.redactor().redact(err.Error()))
		}
		return m, nil
	case "ollama":
		o, err := ollamaOptions(s, cfg, hc)
		if err != nil {
			return nil, err
		}
		m, err := ollama.New(o...)
		if err != nil {
			return nil, fmt.Errorf("llm %s: %s", s, cfg.redactor().redact(err.Error()))
		}
		return m, nil
	case "anthropic":
		key := firstNonEmpty(cfg.apiKey, os.Getenv("ANTHROPIC_API_KEY"))
		if key == "" {
			return nil, fmt.Errorf("llm %s: ANTHROPIC_API_KEY is not set", s)
		}
		cfg.secrets = append(cfg.secrets, key)
		o := []anthropic.Option{anthropic.WithModel(s.Model), anthropic.WithToken(key), anthropic.WithHTTPClient(hc)}
		cfg.endpoint = anthropicDefaultBase
		if base := firstNonEmpty(cfg.baseURL, os.Getenv("ANTHROPIC_BASE_URL")); base != "" {
			o = append(o, anthropic.WithBaseURL(base))
			cfg.endpoint = base
		}
		m, err := anthropic.New(o...)
		if err != nil {
			return nil, fmt.Errorf("llm %s: %s", s, cfg.redactor().redact(err.Error()))
		}
		return m, nil
	}
	return nil, fmt.Errorf("llm %s: unknown provider", s)
}

// placeholderKey is sent to OpenAI-compatible local servers that need no key.
const placeholderKey = "not-needed"

// The endpoints langchaingo uses when none is given; they name the model's
// server in cache keys.
const (
	openaiDefaultBase    = "https://api.openai.com/v1"
	anthropicDefaultBase = "https://api.anthropic.com/v1"
)

func openaiOptions(s Spec, cfg *config, hc *http.Client) ([]openai.Option, error) {
	base := firstNonEmpty(cfg.baseURL, os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_BASE"))
	key := firstNonEmpty(cfg.apiKey, os.Getenv("OPENAI_API_KEY"))
	switch {
	case key != "":
		cfg.secrets = append(cfg.secrets, key)
	case base != "":
		key = placeholderKey
	default:
		return nil, fmt.Errorf("llm %s: OPENAI_API_KEY is not set (for a local OpenAI-compatible server set OPENAI_BASE_URL)", s)
	}
	o := []openai.Option{openai.WithToken(key), openai.WithHTTPClient(hc)}
	cfg.endpoint = openaiDefaultBase
	if base != "" {
		if _, err := url.Parse(base); err != nil {
			return nil, fmt.Errorf("llm %s: base URL: %w", s, err)
		}
		o = append(o, openai.WithBaseURL(base))
		cfg.endpoint = base
	}
	return o, nil
}

func ollamaOptions(s Spec, cfg *config, hc *http.Client) ([]ollama.Option, error) {
	o := []ollama.Option{ollama.WithModel(s.Model), ollama.WithHTTPClient(hc)}
	// Without a URL langchaingo reads OLLAMA_HOST itself; it is read here
	// the same way, so that the cache key names the server asked.
	cfg.endpoint = ollamaHost(os.Getenv("OLLAMA_HOST")).String()
	if cfg.baseURL != "" {
		u, err := url.Parse(cfg.baseURL)
		if err != nil {
			return nil, fmt.Errorf("llm %s: base URL: %w", s, err)
		}
		o = append(o, ollama.WithServerURL(u.String()))
		cfg.endpoint = u.String()
	}
	return o, nil
}

// ollamaHost is the server URL langchaingo's Ollama client makes of
// OLLAMA_HOST (its ollamaclient.NewClient): scheme http unless given, and
// 127.0.0.1:11434 unless a host and port (or a bare IP) are given.
func ollamaHost(env string) *url.URL {
	scheme, hostport, ok := strings.Cut(env, "://")
	if !ok {
		scheme, hostport = "http", env
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", "11434"
		if ip := net.ParseIP(strings.Trim(env, "[]")); ip != nil {
			host = ip.String()
		}
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
}

func (c *config) redactor() redactor { return redactor{secrets: c.secrets} }

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

// errNoEmbeddings is returned for providers without an embeddings API.
var errNoEmbeddings = errors.New("provider has no embeddings API in langchaingo (use openai or ollama)")
