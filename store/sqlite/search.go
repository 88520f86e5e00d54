package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"docgraph/store"
)

// generation is the store's write counter as this moment's snapshot sees it.
func (s *Store) generation(ctx context.Context) (int64, error) {
	return readGeneration(ctx, s.rdb)
}

// snapshot begins a read-only transaction and reads the write counter in
// it, so what the caller then reads is labelled with exactly the state it
// holds. The caller rolls tx back.
func snapshot(ctx context.Context, db *sql.DB) (*sql.Tx, int64, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	g, err := readGeneration(ctx, tx)
	if err != nil {
		tx.Rollback()
		return nil, 0, fmt.Errorf("read generation: %w", err)
	}
	return tx, g, nil
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

// vectorSearch brings idx up to date and returns its top k for vec.
func (s *Store) vectorSearch(ctx context.Context, idx *vecIndex, vec []float32, k int, skip func(string) bool) ([]scored, error) {
	if s.emb.Dimension > 0 && len(vec) != s.emb.Dimension {
		return nil, fmt.Errorf("query vector has dimension %d, the store holds %s vectors of dimension %d", len(vec), s.emb.Name, s.emb.Dimension)
	}
	gen, err := s.generation(ctx)
	if err != nil {
		return nil, fmt.Errorf("read generation: %w", err)
	}
	if err := idx.ensure(ctx, s.rdb, gen); err != nil {
		return nil, fmt.Errorf("load vectors: %w", err)
	}
	return idx.search(vec, k, skip), nil
}

// SearchChunks returns the k chunks of done documents nearest to vec by cosine.
func (s *Store) SearchChunks(ctx context.Context, vec []float32, k int) ([]store.ChunkHit, error) {
	if k <= 0 {
		return nil, nil
	}
	hidden := map[string]bool{}
	if err := collect(ctx, s.rdb, hidden, `SELECT id FROM documents WHERE status <> 'done'`); err != nil {
		return nil, fmt.Errorf("sqlite store %s: search chunks: %w", s.path, err)
	}
	var skip func(string) bool
	if len(hidden) > 0 {
		skip = func(doc string) bool { return hidden[doc] }
	}
	top, err := s.vectorSearch(ctx, s.chunkVecs, vec, k, skip)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: search chunks: %w", s.path, err)
	}
	ids := make([]string, len(top))
	for i, t := range top {
		ids[i] = t.id
	}
	byID := map[string]store.ChunkHit{}
	// The unary + keeps SQLite from driving the join by the status index
	// (every done document); the chunk ids are the selective side.
	err = s.byIDs(ctx, `SELECT `+chunkColumns+`, d.path, d.title FROM chunks c JOIN documents d ON d.id = c.doc_id
		WHERE +d.status = 'done' AND c.id IN `, ids, func(rows *sql.Rows) error {
		var h store.ChunkHit
		var err error
		h.Chunk, err = scanChunk(rows, &h.DocPath, &h.DocTitle)
		byID[h.ID] = h
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: search chunks: %w", s.path, err)
	}
	out := make([]store.ChunkHit, 0, len(top))
	for _, t := range top {
		if h, ok := byID[t.id]; ok {
			h.Score = t.score
			out = append(out, h)
		}
	}
	return out, nil
}

// SearchEntities returns the k entities nearest to vec by cosine.
func (s *Store) SearchEntities(ctx context.Context, vec []float32, k int) ([]store.EntityHit, error) {
	if k <= 0 {
		return nil, nil
	}
	top, err := s.vectorSearch(ctx, s.entityVecs, vec, k, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: search entities: %w", s.path, err)
	}
	ids := make([]string, len(top))
	for i, t := range top {
		ids[i] = t.id
	}
	ents, err := s.Entities(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.Entity, len(ents))
	for _, e := range ents {
		byID[e.ID] = e
	}
	out := make([]store.EntityHit, 0, len(top))
	for _, t := range top {
		if e, ok := byID[t.id]; ok {
			out = append(out, store.EntityHit{Entity: e, Score: t.score})
		}
	}
	return out, nil
}

// SearchRelations returns the k relations nearest to vec by cosine.
func (s *Store) SearchRelations(ctx context.Context, vec []float32, k int) ([]store.RelationHit, error) {
	if k <= 0 {
		return nil, nil
	}
	top, err := s.vectorSearch(ctx, s.relationVecs, vec, k, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: search relations: %w", s.path, err)
	}
	ids := make([]string, len(top))
	for i, t := range top {
		ids[i] = t.id
	}
	rels, err := s.Relations(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]store.Relation, len(rels))
	for _, r := range rels {
		byID[r.ID] = r
	}
	out := make([]store.RelationHit, 0, len(top))
	for _, t := range top {
		if r, ok := byID[t.id]; ok {
			out = append(out, store.RelationHit{Relation: r, Score: t.score})
		}
	}
	return out, nil
}

// SearchChunksText ranks chunks of done documents by BM25 over their text.
// Scores are -bm25, so positive and higher is better.
func (s *Store) SearchChunksText(ctx context.Context, query string, k int) ([]store.ChunkHit, error) {
	q := ftsQuery(query)
	if q == "" || k <= 0 {
		return nil, nil
	}
	rows, err := s.rdb.QueryContext(ctx, `
		SELECT `+chunkColumns+`, d.path, d.title, -bm25(chunks_fts)
		FROM chunks_fts JOIN chunks c ON c.seq = chunks_fts.rowid JOIN documents d ON d.id = c.doc_id
		WHERE chunks_fts MATCH ? AND d.status = 'done'
		ORDER BY bm25(chunks_fts), c.id LIMIT ?`, q, k)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: text search chunks for %q: %w", s.path, query, err)
	}
	defer rows.Close()
	var out []store.ChunkHit
	for rows.Next() {
		var h store.ChunkHit
		if h.Chunk, err = scanChunk(rows, &h.DocPath, &h.DocTitle, &h.Score); err != nil {
			return nil, fmt.Errorf("sqlite store %s: text search chunks for %q: %w", s.path, query, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: text search chunks for %q: %w", s.path, query, err)
	}
	return out, nil
}

// SearchEntitiesText ranks entities by BM25 over name and description, a
// name hit weighing as much as several description hits.
func (s *Store) SearchEntitiesText(ctx context.Context, query string, k int) ([]store.EntityHit, error) {
	q := ftsQuery(query)
	if q == "" || k <= 0 {
		return nil, nil
	}
	rows, err := s.rdb.QueryContext(ctx, `
		SELECT `+entityColumns+`, -bm25(entities_fts, 5.0, 1.0)
		FROM entities_fts JOIN entities e ON e.seq = entities_fts.rowid
		WHERE entities_fts MATCH ?
		ORDER BY bm25(entities_fts, 5.0, 1.0), e.id LIMIT ?`, q, k)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: text search entities for %q: %w", s.path, query, err)
	}
	defer rows.Close()
	var out []store.EntityHit
	for rows.Next() {
		var h store.EntityHit
		if h.Entity, err = scanEntity(rows, &h.Score); err != nil {
			return nil, fmt.Errorf("sqlite store %s: text search entities for %q: %w", s.path, query, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: text search entities for %q: %w", s.path, query, err)
	}
	return out, nil
}
