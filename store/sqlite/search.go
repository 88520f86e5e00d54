package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/docgraph/docgraph/store"
)

// generation is the store's write counter as this moment's snapshot sees it.
func (s *Store) generation(ctx context.Context) (int64, error) {
	return readGeneration(ctx, s.rdb)
}

// readGeneration reads the write counter as q's snapshot sees it; run in
// the transaction that reads the rows, it labels them with exactly the
// state they hold.
func readGeneration(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int64, error) {
	var g int64
	err := q.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'`).Scan(&g)
	return g, err
}

// scored is a row key with a score, higher is better.
type scored struct {
	id    int64
	score float64
}

func sortScored(s []scored) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return s[i].id < s[j].id
	})
}

// checkQuery refuses a query vector of the wrong dimension.
func (s *Store) checkQuery(vec []float32) error {
	if s.emb.Dimension > 0 && len(vec) != s.emb.Dimension {
		return fmt.Errorf("query vector has dimension %d, the store holds %s vectors of dimension %d", len(vec), s.emb.Name, s.emb.Dimension)
	}
	return nil
}

// SearchChunks returns the k chunks of done documents nearest to vec by cosine.
func (s *Store) SearchChunks(ctx context.Context, vec []float32, k int) ([]store.ChunkHit, error) {
	if k <= 0 {
		return nil, nil
	}
	if err := s.checkQuery(vec); err != nil {
		return nil, fmt.Errorf("sqlite store %s: search chunks: %w", s.path, err)
	}
	var out []store.ChunkHit
	err := s.inSnapshot(ctx, func(tx *sql.Tx) error {
		// Chunks of documents that are not done are left out after the
		// search; asking for more covers the usual few.
		for want := k; ; want *= 4 {
			top, exhausted, err := s.vectorSearch(ctx, tx, kindChunk, vec, want)
			if err != nil {
				return err
			}
			hits, err := chunkHits(ctx, tx, top)
			if err != nil {
				return err
			}
			if len(hits) >= k || exhausted || want >= 1<<14 {
				out = hits[:min(k, len(hits))]
				return nil
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: search chunks: %w", s.path, err)
	}
	return out, nil
}

// inSnapshot runs fn in a read transaction: every read of a search sees
// one state of the store, so the rows it reads are those its index hits
// named, never a later document's.
func (s *Store) inSnapshot(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// querier is what reads need of a database or a transaction.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// chunkHits reads the chunks of done documents among top, in its order,
// with their scores.
func chunkHits(ctx context.Context, q querier, top []scored) ([]store.ChunkHit, error) {
	keys := make([]int64, len(top))
	for i, t := range top {
		keys[i] = t.id
	}
	byKey := map[int64]store.ChunkHit{}
	// The unary + keeps SQLite from driving the join by the status index
	// (every done document); the chunk keys are the selective side.
	err := byIDs(ctx, q, `SELECT c.seq, `+chunkColumns+`, d.path, d.title FROM json_each(?) j CROSS JOIN chunks c ON c.seq = j.value
		JOIN documents d ON d.id = c.doc_id`+chunkVector+` WHERE +d.status = 'done'`, intList(keys), func(rows *sql.Rows) error {
		var h store.ChunkHit
		var seq int64
		var err error
		h.Chunk, err = scanChunkKeyed(rows, &seq, &h.DocPath, &h.DocTitle)
		byKey[seq] = h
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]store.ChunkHit, 0, len(top))
	for _, t := range top {
		if h, ok := byKey[t.id]; ok {
			h.Score = t.score
			out = append(out, h)
		}
	}
	return out, nil
}

// scanChunkKeyed is scanChunk for a row that starts with the chunk's seq.
func scanChunkKeyed(sc interface{ Scan(...any) error }, seq *int64, extra ...any) (store.Chunk, error) {
	var c store.Chunk
	var blob []byte
	err := sc.Scan(append([]any{seq, &c.ID, &c.DocID, &c.Index, &c.Text, &c.Tokens, &c.Start, &c.End, &blob}, extra...)...)
	if err == nil {
		c.Embedding, err = decodeVec(blob)
	}
	return c, err
}

// SearchEntities returns the k entities nearest to vec by cosine.
func (s *Store) SearchEntities(ctx context.Context, vec []float32, k int) ([]store.EntityHit, error) {
	if k <= 0 {
		return nil, nil
	}
	if err := s.checkQuery(vec); err != nil {
		return nil, fmt.Errorf("sqlite store %s: search entities: %w", s.path, err)
	}
	var out []store.EntityHit
	err := s.inSnapshot(ctx, func(tx *sql.Tx) error {
		top, _, err := s.vectorSearch(ctx, tx, kindEntity, vec, k)
		if err != nil {
			return err
		}
		keys := make([]int64, len(top))
		for i, t := range top {
			keys[i] = t.id
		}
		bySeq := map[int64]store.Entity{}
		if err := byIDs(ctx, tx, `SELECT e.seq, `+entityColumns+` FROM json_each(?) j CROSS JOIN entities e ON e.seq = j.value`+entityVector,
			intList(keys), func(rows *sql.Rows) error {
				var seq int64
				e, err := scanEntityKeyed(rows, &seq)
				bySeq[seq] = e
				return err
			}); err != nil {
			return err
		}
		for _, t := range top {
			if e, ok := bySeq[t.id]; ok {
				out = append(out, store.EntityHit{Entity: e, Score: t.score})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: search entities: %w", s.path, err)
	}
	ents := make([]store.Entity, len(out))
	for i, h := range out {
		ents[i] = h.Entity
	}
	if err := s.entityVectors(ctx, ents); err != nil {
		return nil, fmt.Errorf("sqlite store %s: search entities: %w", s.path, err)
	}
	for i := range out {
		out[i].Entity = ents[i]
	}
	return out, nil
}

// SearchRelations returns the k relations nearest to vec by cosine.
func (s *Store) SearchRelations(ctx context.Context, vec []float32, k int) ([]store.RelationHit, error) {
	if k <= 0 {
		return nil, nil
	}
	if err := s.checkQuery(vec); err != nil {
		return nil, fmt.Errorf("sqlite store %s: search relations: %w", s.path, err)
	}
	var out []store.RelationHit
	err := s.inSnapshot(ctx, func(tx *sql.Tx) error {
		top, _, err := s.vectorSearch(ctx, tx, kindRelation, vec, k)
		if err != nil {
			return err
		}
		keys := make([]int64, len(top))
		for i, t := range top {
			keys[i] = t.id
		}
		bySeq := map[int64]store.Relation{}
		if err := byIDs(ctx, tx, `SELECT r.seq, `+relationColumns+` FROM json_each(?) j CROSS JOIN relations r ON r.seq = j.value`+relationVector,
			intList(keys), func(rows *sql.Rows) error {
				var seq int64
				r, err := scanRelationKeyed(rows, &seq)
				bySeq[seq] = r
				return err
			}); err != nil {
			return err
		}
		for _, t := range top {
			if r, ok := bySeq[t.id]; ok {
				out = append(out, store.RelationHit{Relation: r, Score: t.score})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: search relations: %w", s.path, err)
	}
	rels := make([]store.Relation, len(out))
	for i, h := range out {
		rels[i] = h.Relation
	}
	if err := s.relationVectors(ctx, rels); err != nil {
		return nil, fmt.Errorf("sqlite store %s: search relations: %w", s.path, err)
	}
	for i := range out {
		out[i].Relation = rels[i]
	}
	return out, nil
}

// SearchChunksText ranks chunks of done documents by BM25 over their text.
// Scores are -bm25, so positive and higher is better.
func (s *Store) SearchChunksText(ctx context.Context, query string, k int) ([]store.ChunkHit, error) {
	if k <= 0 {
		return nil, nil
	}
	q, err := s.prunedQuery(ctx, "chunks_fts", query)
	if err != nil || q == "" {
		return nil, wrapText(s, "chunks", query, err)
	}
	// Rank inside the index first, then read the few rows: joining every
	// match before sorting cost most of the search.
	var out []store.ChunkHit
	err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
		for want := k; ; want *= 4 {
			var top []scored
			rows, err := tx.QueryContext(ctx, `SELECT rowid, -bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts), rowid LIMIT ?`, q, want)
			if err != nil {
				return err
			}
			for rows.Next() {
				var t scored
				if err := rows.Scan(&t.id, &t.score); err != nil {
					rows.Close()
					return err
				}
				top = append(top, t)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			hits, err := chunkHits(ctx, tx, top)
			if err != nil {
				return err
			}
			if len(hits) >= k || len(top) < want || want >= 1<<14 {
				// Ties in score keep chunk-id order, as the search always has.
				sort.SliceStable(hits, func(i, j int) bool {
					return hits[i].Score > hits[j].Score || hits[i].Score == hits[j].Score && hits[i].ID < hits[j].ID
				})
				out = hits[:min(k, len(hits))]
				return nil
			}
		}
	})
	return out, wrapText(s, "chunks", query, err)
}

func wrapText(s *Store, what, query string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sqlite store %s: text search %s for %q: %w", s.path, what, query, err)
}

// SearchEntitiesText ranks entities by BM25 over name and description, a
// name hit weighing as much as several description hits.
func (s *Store) SearchEntitiesText(ctx context.Context, query string, k int) ([]store.EntityHit, error) {
	if k <= 0 {
		return nil, nil
	}
	q, err := s.prunedQuery(ctx, "entities_fts", query)
	if err != nil || q == "" {
		return nil, wrapText(s, "entities", query, err)
	}
	rows, err := s.rdb.QueryContext(ctx, `
		SELECT `+entityColumns+`, t.score FROM (
			SELECT rowid, -bm25(entities_fts, 5.0, 1.0) AS score FROM entities_fts WHERE entities_fts MATCH ?
			ORDER BY bm25(entities_fts, 5.0, 1.0) LIMIT ?) t
		CROSS JOIN entities e ON e.seq = t.rowid`+entityVector+`
		ORDER BY t.score DESC, e.id`, q, k)
	if err != nil {
		return nil, wrapText(s, "entities", query, err)
	}
	defer rows.Close()
	var out []store.EntityHit
	for rows.Next() {
		var h store.EntityHit
		if h.Entity, err = scanEntity(rows, &h.Score); err != nil {
			return nil, wrapText(s, "entities", query, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, wrapText(s, "entities", query, err)
	}
	ents := make([]store.Entity, len(out))
	for i, h := range out {
		ents[i] = h.Entity
	}
	if err := s.entityVectors(ctx, ents); err != nil {
		return nil, wrapText(s, "entities", query, err)
	}
	for i := range out {
		out[i].Entity = ents[i]
	}
	return out, nil
}

// scanEntityKeyed is scanEntity for a row that starts with the entity's seq.
func scanEntityKeyed(sc interface{ Scan(...any) error }, seq *int64) (store.Entity, error) {
	return scanEntity(prefixScanner{sc, seq})
}

// scanRelationKeyed is scanRelation for a row that starts with the relation's seq.
func scanRelationKeyed(sc interface{ Scan(...any) error }, seq *int64) (store.Relation, error) {
	return scanRelation(prefixScanner{sc, seq})
}

// prefixScanner scans a row's first column into first, the rest as asked.
type prefixScanner struct {
	sc    interface{ Scan(...any) error }
	first any
}

func (p prefixScanner) Scan(dest ...any) error { return p.sc.Scan(append([]any{p.first}, dest...)...) }

// Full-text search keeps its cost independent of the corpus by leaving out
// query terms that most rows contain: FTS5 ranks by walking the whole
// posting list of every query term, and a word like "the" or "film" is in
// a large share of every corpus, so its list grows with the corpus while
// its weight in BM25 shrinks towards nothing. A term is common when more
// than commonTerm rows hold it (counted only up to that many, so the count
// costs no more than the limit); the rarest terms are always kept.
const (
	commonTerm = 1500
	keepRarest = 2
)

// prunedQuery is ftsQuery without the query's common terms.
func (s *Store) prunedQuery(ctx context.Context, table, text string) (string, error) {
	terms := queryTerms(text)
	if len(terms) <= keepRarest || s.allTerms {
		return joinTerms(terms), nil
	}
	type counted struct {
		term string
		n    int
	}
	cs := make([]counted, 0, len(terms))
	for _, t := range terms {
		n, err := s.termRows(ctx, table, t)
		if err != nil {
			return "", err
		}
		if n > 0 {
			cs = append(cs, counted{t, n})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].n < cs[j].n })
	var kept []string
	for i, c := range cs {
		if i < keepRarest || c.n <= commonTerm {
			kept = append(kept, c.term)
		}
	}
	return joinTerms(kept), nil
}

// termRows counts the rows of table holding term, up to commonTerm+1.
// Counts are kept (termCache) while the store's generation stands: the
// common terms come back in every query.
func (s *Store) termRows(ctx context.Context, table, term string) (int, error) {
	gen, err := s.generation(ctx)
	if err != nil {
		return 0, err
	}
	key := table + "\x00" + term
	if n, ok := s.terms.get(gen, key); ok {
		return n, nil
	}
	var n int
	// table is one of two constants, never text from a query.
	err = s.rdb.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM `+table+` WHERE `+table+` MATCH ? LIMIT ?)`,
		`"`+term+`"`, commonTerm+1).Scan(&n)
	if err == nil {
		s.terms.put(gen, key, n)
	}
	return n, err
}

// termCache holds term counts for one store generation, at most
// termCacheSize of them.
type termCache struct {
	mu  sync.Mutex
	gen int64
	n   map[string]int
}

const termCacheSize = 50_000

func (c *termCache) get(gen int64, key string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return 0, false
	}
	n, ok := c.n[key]
	return n, ok
}

func (c *termCache) put(gen int64, key string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen || c.n == nil || len(c.n) >= termCacheSize {
		c.gen, c.n = gen, map[string]int{}
	}
	c.n[key] = n
}

// queryTerms are the distinct terms of text as ftsQuery quotes them.
func queryTerms(text string) []string {
	q := ftsQuery(text)
	if q == "" {
		return nil
	}
	var out []string
	for _, t := range strings.Split(q, " OR ") {
		t = strings.Trim(t, `"`)
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func joinTerms(terms []string) string {
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	return strings.Join(quoted, " OR ")
}
