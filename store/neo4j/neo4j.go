// Package neo4j is docgraph's production graph store: the store contract on a
// Neo4j 5 server, with vector and full-text indexes serving retrieval.
//
// Importing it registers the neo4j, neo4j+s, neo4j+ssc, bolt, bolt+s and
// bolt+ssc URL schemes with store.Open. Credentials come from
// store.Options.Username and Password (or the URL's user info), the database
// from Options.Database (or the URL path); the password never appears in an
// error. Every statement is a constant with parameters (see cypher.go).
package neo4j

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store"
)

func init() {
	store.Register(func(ctx context.Context, u *url.URL, opts store.Options) (store.Store, error) {
		s, err := Open(ctx, u, opts)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return s, nil
	}, "neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc")
}

// DefaultBatchSize bounds the rows sent in one UNWIND statement.
const DefaultBatchSize = 1000

// indexWait bounds how long Open waits for new indexes to come online.
const indexWait = 300 * time.Second

// Store is an open Neo4j graph store. It is safe for concurrent use: each
// call runs in its own session, and writes are managed transactions that
// the driver retries on transient errors (deadlocks, leader switches).
type Store struct {
	driver   n4j.DriverWithContext
	target   string // scheme://host:port, never with credentials
	database string
	merger   store.Merger
	emb      store.EmbedderInfo
	batch    int
	server   serverInfo
	// relVector is whether RELATES embeddings have a vector index; without
	// one (servers before 5.18) SearchRelations scans.
	relVector bool
	// hnswConfig is whether vector indexes are created with docgraph's
	// HNSW settings (servers from 5.23) rather than the server's defaults.
	hnswConfig bool
	// indexes maps "VECTOR Chunk", "FULLTEXT Entity", ... to index names.
	indexes map[string]string
	secrets []string

	retryBudget      time.Duration
	commits, retries atomic.Int64
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.BatchWriter  = (*Store)(nil)
	_ store.BatchClaimer = (*Store)(nil)
	_ store.WriteCounter = (*Store)(nil)
	_ store.GroupLimiter = (*Store)(nil)
)

// serverInfo is what dbms.components reports.
type serverInfo struct {
	Version string // "5.26.0" or a calendar version such as "2025.01.0"
	Edition string // "community" or "enterprise"
}

// Open connects to the Neo4j server named by u, creates the schema if
// needed and checks that the vectors stored there were made by
// opts.Embedder. A store opened with a zero Embedder adopts the stored one.
func Open(ctx context.Context, u *url.URL, opts store.Options) (*Store, error) {
	cfg, err := connConfig(u, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{
		target:   cfg.target,
		database: cfg.database,
		merger:   opts.Merger,
		emb:      opts.Embedder,
		batch:    opts.BatchSize,
		secrets:  cfg.secrets(),

		retryBudget: opts.RetryBudget,
	}
	if s.retryBudget <= 0 {
		s.retryBudget = store.DefaultRetryBudget
	}
	if s.batch <= 0 {
		s.batch = DefaultBatchSize
	}
	if s.emb.Dimension != 0 {
		if err := validDimension(s.emb.Dimension); err != nil {
			return nil, s.fail("open", err)
		}
	}
	auth := n4j.NoAuth()
	if cfg.username != "" {
		auth = n4j.BasicAuth(cfg.username, cfg.password, "")
	}
	s.driver, err = n4j.NewDriverWithContext(cfg.target, auth, func(c *n4j.Config) {
		c.UserAgent = "docgraph"
	})
	if err != nil {
		return nil, s.fail("open", err)
	}
	if err := s.init(ctx); err != nil {
		s.driver.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	if err := s.driver.VerifyConnectivity(ctx); err != nil {
		return s.fail("connect", err)
	}
	info, err := s.serverInfo(ctx)
	if err != nil {
		return s.fail("server version", err)
	}
	s.server = info
	s.relVector = supportsRelationshipVectors(info.Version)
	s.hnswConfig = supportsHNSWConfig(info.Version)
	// Nothing is recorded before every check passed, so a refused open
	// leaves the database as it was (bar idempotent constraints).
	if err := s.ensureConstraints(ctx); err != nil {
		return err
	}
	recorded, err := s.checkEmbedder(ctx)
	if err != nil {
		return err
	}
	if err := s.ensureSearchIndexes(ctx); err != nil {
		return err
	}
	if !recorded && s.emb != (store.EmbedderInfo{}) {
		return s.recordEmbedder(ctx)
	}
	return nil
}

// Embedder reports which embedder's vectors the store holds.
func (s *Store) Embedder() store.EmbedderInfo { return s.emb }

// Database is the database the store uses ("" is the server's default).
func (s *Store) Database() string { return s.database }

// Close releases the driver's connections.
func (s *Store) Close() error {
	if err := s.driver.Close(context.Background()); err != nil {
		return s.fail("close", err)
	}
	return nil
}

// connection is a parsed store URL.
type connection struct {
	target             string
	username, password string
	database           string
}

func (c connection) secrets() []string {
	if c.password == "" {
		return nil
	}
	return []string{c.password, url.QueryEscape(c.password), url.PathEscape(c.password)}
}

// connConfig turns a store URL and options into driver settings. Options
// win over the URL; the driver is given the URL without user info or path,
// so it can never echo them back.
func connConfig(u *url.URL, opts store.Options) (connection, error) {
	var c connection
	switch u.Scheme {
	case "neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc":
	default:
		return c, fmt.Errorf("neo4j store: unsupported scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return c, fmt.Errorf("neo4j store: %s URL has no host (want %s://HOST:7687)", u.Scheme, u.Scheme)
	}
	c.username, c.password = opts.Username, opts.Password
	if c.username == "" && u.User != nil {
		c.username = u.User.Username()
		c.password, _ = u.User.Password()
	}
	c.database = opts.Database
	if c.database == "" {
		c.database = strings.Trim(u.Path, "/")
	}
	t := url.URL{Scheme: u.Scheme, Host: u.Host}
	if strings.HasPrefix(u.Scheme, "neo4j") {
		// Query parameters of routing schemes are the routing context.
		t.RawQuery = u.RawQuery
	}
	c.target = t.String()
	return c, nil
}

// supportsRelationshipVectors reports whether a server version has
// relationship vector indexes (5.18 and later).
func supportsRelationshipVectors(version string) bool {
	return versionAtLeast(version, relVectorMinMajor, relVectorMinMinor)
}

// supportsHNSWConfig reports whether a server version takes the vector
// index settings vector.hnsw.m, vector.hnsw.ef_construction and
// vector.quantization.enabled (5.23 and later).
func supportsHNSWConfig(version string) bool {
	return versionAtLeast(version, hnswMinMajor, hnswMinMinor)
}

// versionAtLeast compares a server version (5.26.0, 5.18.1-aura,
// 2025.06.2) with major.minor; an unreadable version is not.
func versionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	if ma != major {
		return ma > major
	}
	return mi >= minor
}

// fail wraps err for the caller with the store's target and hides secrets.
func (s *Store) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	where := s.target
	if s.database != "" {
		where += " database " + s.database
	}
	return redact(fmt.Errorf("neo4j store %s: %s: %w", where, op, err), s.secrets)
}

// redactedError hides secrets in a message while keeping the error chain
// for errors.Is and errors.As.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, sec := range e.secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, "[redacted]")
		}
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }

func redact(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	var already *redactedError
	if errors.As(err, &already) {
		return err
	}
	return &redactedError{err: err, secrets: secrets}
}
