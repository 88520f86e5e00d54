package neo4j

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"docgraph/store"
)

// session opens a session on the store's database. Sessions share the
// driver's bookmark manager, so a read always sees the writes before it,
// even on a cluster.
func (s *Store) session(ctx context.Context, mode n4j.AccessMode) n4j.SessionWithContext {
	return s.driver.NewSession(ctx, n4j.SessionConfig{
		DatabaseName:    s.database,
		AccessMode:      mode,
		BookmarkManager: s.driver.ExecuteQueryBookmarkManager(),
	})
}

// runner is what a managed transaction and a session have in common.
type runner interface {
	Run(ctx context.Context, cypher string, params map[string]any) (n4j.ResultWithContext, error)
}

// collect runs one statement and returns all of its records.
func collect(ctx context.Context, r runner, stmt statement, params map[string]any) ([]*n4j.Record, error) {
	res, err := r.Run(ctx, string(stmt), params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// exec runs one statement and discards its records.
func exec(ctx context.Context, r runner, stmt statement, params map[string]any) error {
	res, err := r.Run(ctx, string(stmt), params)
	if err != nil {
		return err
	}
	_, err = res.Consume(ctx)
	return err
}

// read runs work in a managed read transaction.
func (s *Store) read(ctx context.Context, op string, work func(tx n4j.ManagedTransaction) error) error {
	sess := s.session(ctx, n4j.AccessModeRead)
	defer sess.Close(context.WithoutCancel(ctx))
	_, err := sess.ExecuteRead(ctx, func(tx n4j.ManagedTransaction) (any, error) {
		return nil, retryable(work(tx))
	})
	return s.fail(op, err)
}

// write runs work in one managed write transaction. The driver retries it
// on transient errors, so work must start from scratch each time.
//
// An error means nothing was written. The driver sends COMMIT with the
// context it was given, and a cancellation landing while the COMMIT is in
// flight would report a failure for a transaction the server may well have
// committed. So the driver gets a context that follows ctx only until work
// has succeeded and ctx is still live; from then on the commit runs to its
// end (bounded by the driver's own timeouts).
func (s *Store) write(ctx context.Context, op string, work func(tx n4j.ManagedTransaction) error) error {
	sess := s.session(ctx, n4j.AccessModeWrite)
	defer sess.Close(context.WithoutCancel(ctx))
	txCtx, detach, release := commitContext(ctx)
	defer release()
	_, err := sess.ExecuteWrite(txCtx, func(tx n4j.ManagedTransaction) (any, error) {
		if err := work(tx); err != nil {
			return nil, retryable(err)
		}
		return nil, detach()
	})
	return s.fail(op, err)
}

// commitContext returns a context that is cancelled with ctx until detach
// is called, and never after. detach fails, leaving the context attached,
// when ctx is already done: the transaction must then roll back. release
// frees the context's resources.
func commitContext(ctx context.Context) (txCtx context.Context, detach func() error, release func()) {
	txCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	detached := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !detached {
			cancel()
		}
	})
	detach = func() error {
		mu.Lock()
		defer mu.Unlock()
		if err := ctx.Err(); err != nil {
			return err
		}
		detached = true
		return nil
	}
	return txCtx, detach, func() { stop(); cancel() }
}

// retryable unwraps a connection failure from the context our code added:
// the driver recognises it (and retries the transaction) only unwrapped.
// Server errors it finds through the chain.
func retryable(err error) error {
	var conn *n4j.ConnectivityError
	if errors.As(err, &conn) {
		return conn
	}
	return err
}

// batches calls fn with consecutive slices of at most size rows.
func batches[T any](rows []T, size int, fn func([]T) error) error {
	for len(rows) > 0 {
		n := min(size, len(rows))
		if err := fn(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// Record decoding. Neo4j returns integers as int64, floats as float64,
// lists as []any and maps as map[string]any; absent properties are nil.

func str(m map[string]any, key string) string {
	v, _ := m[key].(string)
	return v
}

// strs reads a list of strings; nil when empty or absent.
func strs(m map[string]any, key string) []string {
	list, _ := m[key].([]any)
	var out []string
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func integer(m map[string]any, key string) int64 {
	switch v := m[key].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

func float(m map[string]any, key string) float64 {
	switch v := m[key].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	return 0
}

func vector(m map[string]any, key string) []float32 {
	switch v := m[key].(type) {
	case []any:
		if len(v) == 0 {
			return nil
		}
		out := make([]float32, len(v))
		for i, x := range v {
			switch f := x.(type) {
			case float64:
				out[i] = float32(f)
			case int64:
				out[i] = float32(f)
			}
		}
		return out
	case []float64:
		out := make([]float32, len(v))
		for i, f := range v {
			out[i] = float32(f)
		}
		return out
	}
	return nil
}

func timestamp(m map[string]any, key string) time.Time {
	if t, ok := m[key].(time.Time); ok {
		return t.UTC()
	}
	return time.Time{}
}

func recordMap(rec *n4j.Record, key string) map[string]any {
	v, _ := rec.Get(key)
	m, _ := v.(map[string]any)
	return m
}

func recordString(rec *n4j.Record, key string) string {
	v, _ := rec.Get(key)
	s, _ := v.(string)
	return s
}

func recordFloat(rec *n4j.Record, key string) float64 {
	v, _ := rec.Get(key)
	switch f := v.(type) {
	case float64:
		return f
	case int64:
		return float64(f)
	}
	return 0
}

func recordInt(rec *n4j.Record, key string) int64 {
	v, _ := rec.Get(key)
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

// param turns a vector into a Cypher parameter: float64s (what Cypher lists
// hold), and nil for an empty vector so the property is removed rather than
// set to an empty list a vector index would reject.
func param(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

// timeParam stores times in UTC (Neo4j rejects zone abbreviations such as
// "CET") and the zero time as no property.
func timeParam(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// norm is a vector's Euclidean length.
func norm(v []float32) float64 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return math.Sqrt(s)
}

// checkVector rejects a stored vector of the wrong length: it would come
// from another embedder and poison the index.
func (s *Store) checkVector(kind, id string, v []float32) error {
	if len(v) == 0 || s.emb.Dimension == 0 || len(v) == s.emb.Dimension {
		return nil
	}
	return fmt.Errorf("%s %s has a %d-dimensional vector, the store holds %s vectors of dimension %d: %w",
		kind, id, len(v), s.emb.Name, s.emb.Dimension, store.ErrEmbedderMismatch)
}
