package llm

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tmc/langchaingo/llms"
	_ "modernc.org/sqlite" // the cache's database driver
)

// cacheVersion is part of every key: bump it when the stored form or the key
// recipe changes, and old entries simply stop matching. Version 2 added the
// endpoint to the key.
const cacheVersion = 2

// cache is the persistent response cache: one SQLite file, shared by every
// client and embedder pointed at it (WAL mode lets separate processes share it).
type cache struct {
	db   *sql.DB
	path string
}

func openCache(path string) (*cache, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("llm cache %s: %w", path, err)
		}
	}
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("llm cache %s: %w", path, err)
	}
	// One connection serialises this process's cache traffic, which is tiny
	// next to a model call, and keeps SQLite from reporting busy to itself.
	db.SetMaxOpenConns(1)
	const schema = `CREATE TABLE IF NOT EXISTS llm_cache (
		key      TEXT PRIMARY KEY,
		kind     TEXT NOT NULL,
		provider TEXT NOT NULL,
		model    TEXT NOT NULL,
		value    BLOB NOT NULL,
		created  INTEGER NOT NULL
	)`
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("llm cache %s: create table: %w", path, err)
	}
	return &cache{db: db, path: path}, nil
}

func (c *cache) close() error {
	if err := c.db.Close(); err != nil {
		return fmt.Errorf("llm cache %s: close: %w", c.path, err)
	}
	return nil
}

func (c *cache) get(ctx context.Context, key string) ([]byte, bool, error) {
	var v []byte
	err := c.db.QueryRowContext(ctx, `SELECT value FROM llm_cache WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("llm cache %s: read: %w", c.path, err)
	}
	return v, true, nil
}

func (c *cache) put(ctx context.Context, key, kind, provider, model string, value []byte) error {
	_, err := c.db.ExecContext(ctx,
		`INSERT OR REPLACE INTO llm_cache (key, kind, provider, model, value, created) VALUES (?, ?, ?, ?, ?, ?)`,
		key, kind, provider, model, value, time.Now().Unix())
	if err != nil {
		return fmt.Errorf("llm cache %s: write: %w", c.path, err)
	}
	return nil
}

func (c *cache) remove(ctx context.Context, key string) error {
	if _, err := c.db.ExecContext(ctx, `DELETE FROM llm_cache WHERE key = ?`, key); err != nil {
		return fmt.Errorf("llm cache %s: delete: %w", c.path, err)
	}
	return nil
}

// chatKey hashes everything that decides a chat completion: provider,
// endpoint (cacheEndpoint's form of the base URL: two servers may serve
// different models under one name), model, every message, and the
// generation parameters. Streaming callbacks are left out because they do
// not change the answer. ok is false when the request cannot be serialised
// (then it is simply not cached).
func chatKey(provider, endpoint, model string, messages []llms.MessageContent, o llms.CallOptions) (string, bool) {
	k := struct {
		V                         int
		Provider, Endpoint, Model string
		Messages                  []llms.MessageContent
		CandidateCount            int
		MaxTokens                 int
		Temperature               float64
		StopWords                 []string
		TopK                      int
		TopP                      float64
		Seed                      int
		MinLength                 int
		MaxLength                 int
		N                         int
		RepetitionPenalty         float64
		FrequencyPenalty          float64
		PresencePenalty           float64
		JSONMode                  bool
		Tools                     []llms.Tool
		ToolChoice                any
		Functions                 []llms.FunctionDefinition
		FunctionCall              llms.FunctionCallBehavior
		Metadata                  map[string]any
		ResponseMIMEType          string
	}{
		cacheVersion, provider, endpoint, model, messages,
		o.CandidateCount, o.MaxTokens, o.Temperature, o.StopWords, o.TopK, o.TopP, o.Seed,
		o.MinLength, o.MaxLength, o.N, o.RepetitionPenalty, o.FrequencyPenalty, o.PresencePenalty,
		o.JSONMode, o.Tools, o.ToolChoice, o.Functions, o.FunctionCallBehavior, o.Metadata, o.ResponseMIMEType,
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(b)
	return "chat:" + hex.EncodeToString(sum[:]), true
}

// embedKey hashes one text for one embedding model at one endpoint. The
// embedders send no parameter besides the model and the texts (no
// dimensions), so the endpoint and the model decide the vector.
func embedKey(provider, endpoint, model, text string) string {
	h := sha256.New()
	// Each field ends in NUL, which none of them holds (a URL cannot), so
	// no two field lists run together into the same bytes.
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00", cacheVersion, provider, endpoint, model)
	h.Write([]byte(text))
	return "embed:" + hex.EncodeToString(h.Sum(nil))
}

// credentialParams are query parameters that carry a credential rather than
// choose a server or an API (api-version does): cacheEndpoint leaves them
// out, like the user and password of the URL.
var credentialParams = map[string]bool{
	"key": true, "api-key": true, "api_key": true, "apikey": true, "token": true, "access_token": true,
	"auth": true, "authorization": true, "code": true, "sig": true, "signature": true,
	"password": true, "secret": true, "client_secret": true,
}

// cacheEndpoint is the form of a model's base URL that goes into cache
// keys: where the answers come from, without the credentials that let
// this user in. Scheme and host are lowercased, a default port and a
// trailing slash dropped, the user and password, the fragment and the
// query parameters that carry a key left out, and the others sorted. The
// API key itself is not part of any key either: a rotated key reaches the
// same model, and its answers stay valid. The result is only ever hashed,
// never stored or logged, so a credential that slips through (a parameter
// under a name not listed) costs a cache miss after a rotation, not a leak.
func cacheEndpoint(base string) string {
	base = strings.TrimSpace(base)
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal
	}
	q := u.Query()
	for name := range q {
		if credentialParams[strings.ToLower(name)] {
			delete(q, name)
		}
	}
	out := url.URL{Scheme: scheme, Host: host, Path: strings.TrimRight(u.Path, "/"), RawQuery: q.Encode()}
	return out.String()
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("cached vector has %d bytes, not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
