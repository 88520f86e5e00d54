package neo4j

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store"
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

// statementHook, when set (by tests and benchmarks), hears every statement
// run through collect and exec, and every commit (as "COMMIT"), with its
// time: round trips and where the time goes.
var statementHook func(cypher string, params map[string]any, d time.Duration)

func observe(cypher string, params map[string]any, start time.Time) {
	if statementHook != nil {
		statementHook(cypher, params, time.Since(start))
	}
}

// collect runs one statement and returns all of its records.
func collect(ctx context.Context, r runner, stmt statement, params map[string]any) ([]*n4j.Record, error) {
	defer observe(string(stmt), params, time.Now())
	res, err := r.Run(ctx, string(stmt), params)
	if err != nil {
		return nil, err
	}
	return res.Collect(ctx)
}

// exec runs one statement and discards its records.
func exec(ctx context.Context, r runner, stmt statement, params map[string]any) error {
	defer observe(string(stmt), params, time.Now())
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

// write runs work in one write transaction and commits it, starting over
// after transient failures (deadlocks, lock timeouts, a lost connection)
// until the store's retry budget is spent; a server that stays unreachable
// for store.UnavailableBudget fails with store.ErrUnavailable. work must
// therefore start from scratch each time.
//
// An error means nothing was written. The commit runs detached from ctx: a
// cancellation landing while the COMMIT is in flight would report a
// failure for a transaction the server may well have committed; it is
// bounded by the retry budget instead.
func (s *Store) write(ctx context.Context, op string, work func(tx runner) error) error {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := s.tryWrite(ctx, work)
		if err == nil {
			s.commits.Add(1)
			return nil
		}
		if ctx.Err() != nil || !n4j.IsRetryable(err) {
			return s.fail(op, err)
		}
		budget := s.retryBudget
		unreachable := isUnreachable(err)
		if unreachable {
			budget = min(budget, store.UnavailableBudget)
		}
		if time.Since(start) >= budget {
			if unreachable {
				err = fmt.Errorf("%w: %w", store.ErrUnavailable, err)
			}
			return s.fail(op, fmt.Errorf("gave up after %d attempts in %s: %w", attempt+1, time.Since(start).Round(time.Millisecond), err))
		}
		s.retries.Add(1)
		if serr := store.RetryPause(ctx, attempt); serr != nil {
			return s.fail(op, serr)
		}
	}
}

// tryWrite is one attempt of write.
func (s *Store) tryWrite(ctx context.Context, work func(tx runner) error) (err error) {
	sess := s.session(ctx, n4j.AccessModeWrite)
	defer sess.Close(context.WithoutCancel(ctx))
	tx, err := sess.BeginTransaction(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
			defer cancel()
			_ = tx.Rollback(rctx)
		}
	}()
	if err := work(tx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.retryBudget)
	defer cancel()
	defer observe("COMMIT", nil, time.Now())
	return tx.Commit(cctx)
}

// rollbackTimeout bounds the rollback of a failed attempt; the server rolls
// back on its own when the connection goes.
const rollbackTimeout = 10 * time.Second

// isUnreachable tells a server that cannot be reached from contention.
func isUnreachable(err error) bool {
	var conn *n4j.ConnectivityError
	return errors.As(err, &conn) || n4j.IsConnectivityError(err)
}

// WriteStats reports the write transactions committed and retried since
// the store was opened.
func (s *Store) WriteStats() store.WriteStats {
	return store.WriteStats{Commits: s.commits.Load(), Retries: s.retries.Load()}
}

// retryable unwraps a connection failure from the context our code added:
// the driver recognises it (and retries a read transaction) only
// unwrapped. Server errors it finds through the chain.
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

// recordList decodes a list of lists column (collected fragments).
func recordList(rec *n4j.Record, key string) [][]any {
	v, _ := rec.Get(key)
	list, _ := v.([]any)
	out := make([][]any, 0, len(list))
	for _, x := range list {
		if row, ok := x.([]any); ok {
			out = append(out, row)
		}
	}
	return out
}

func str(m map[string]any, key string) string         { return asString(m[key]) }
func integer(m map[string]any, key string) int64      { return asInt(m[key]) }
func float(m map[string]any, key string) float64      { return asFloat(m[key]) }
func recordString(rec *n4j.Record, key string) string { v, _ := rec.Get(key); return asString(v) }
func recordInt(rec *n4j.Record, key string) int64     { v, _ := rec.Get(key); return asInt(v) }
func recordFloat(rec *n4j.Record, key string) float64 { v, _ := rec.Get(key); return asFloat(v) }

func asString(v any) string {
	s, _ := v.(string)
	return s
}

func asInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

func asFloat(v any) float64 {
	switch f := v.(type) {
	case float64:
		return f
	case int64:
		return float64(f)
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
