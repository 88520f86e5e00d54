package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"docgraph/store"
)

const (
	documentColumns        = `id, path, title, hash, format, fingerprint, status, error, size, mod_time, updated_at, chunks, file_key, warnings, lease_owner, lease_until`
	documentColumnsNoLease = `id, path, title, hash, format, fingerprint, status, error, size, mod_time, updated_at, chunks, file_key, warnings, '', 0`
)

// docSelect is the column list this store's document reads select.
func (s *Store) docSelect() string {
	if s.docColumns != "" {
		return s.docColumns
	}
	return documentColumns
}

func scanDocument(sc interface{ Scan(...any) error }) (store.Document, error) {
	var d store.Document
	var status, warnings string
	var mod, upd, lease int64
	err := sc.Scan(&d.ID, &d.Path, &d.Title, &d.Hash, &d.Format, &d.Fingerprint, &status, &d.Error, &d.Size, &mod, &upd, &d.Chunks, &d.FileKey, &warnings, &d.LeaseOwner, &lease)
	d.Status = store.Status(status)
	d.ModTime, d.UpdatedAt, d.LeaseUntil = fromUnixNano(mod), fromUnixNano(upd), fromUnixNano(lease)
	if err == nil {
		d.Warnings = decodeWarnings(warnings)
	}
	return d, err
}

// decodeWarnings reads the warnings column; a value it cannot read counts
// as none, since warnings only inform.
func decodeWarnings(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}

// encodeWarnings is the warnings column of a document.
func encodeWarnings(w []string) string {
	if len(w) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(w)
	return string(b)
}

// Document returns one document by id.
func (s *Store) Document(ctx context.Context, id string) (*store.Document, error) {
	d, err := scanDocument(s.rdb.QueryRowContext(ctx, `SELECT `+s.docSelect()+` FROM documents WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: document %s: %w", s.path, id, err)
	}
	return &d, nil
}

// DocumentByPath returns the document at path. While a new version is being
// ingested two rows can share a path; the done one wins, then the newest.
func (s *Store) DocumentByPath(ctx context.Context, path string) (*store.Document, error) {
	d, err := scanDocument(s.rdb.QueryRowContext(ctx, `SELECT `+s.docSelect()+` FROM documents WHERE path = ?
		ORDER BY status = 'done' DESC, updated_at DESC, id LIMIT 1`, path))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: document at %s: %w", s.path, path, err)
	}
	return &d, nil
}

// Documents lists every document by path.
func (s *Store) Documents(ctx context.Context) ([]store.Document, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+s.docSelect()+` FROM documents ORDER BY path, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: documents: %w", s.path, err)
	}
	defer rows.Close()
	var out []store.Document
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store %s: documents: %w", s.path, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: documents: %w", s.path, err)
	}
	return out, nil
}

// Stats counts rows in one consistent snapshot.
func (s *Store) Stats(ctx context.Context) (*store.Stats, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: stats: %w", s.path, err)
	}
	defer tx.Rollback()
	st := &store.Stats{ByStatus: map[store.Status]int{}, Embedder: s.emb}
	rows, err := tx.QueryContext(ctx, `SELECT status, count(*) FROM documents GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: stats: %w", s.path, err)
	}
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite store %s: stats: %w", s.path, err)
		}
		st.ByStatus[store.Status(status)] = n
		st.Documents += n
	}
	rows.Close()
	for _, c := range []struct {
		dst   *int
		query string
	}{
		{&st.Chunks, `SELECT count(*) FROM chunks`},
		{&st.Entities, `SELECT count(*) FROM entities`},
		{&st.Relations, `SELECT count(*) FROM relations`},
		{&st.Mentions, `SELECT count(*) FROM (SELECT DISTINCT entity_id, chunk_id FROM entity_mentions)`},
	} {
		if err := tx.QueryRowContext(ctx, c.query).Scan(c.dst); err != nil {
			return nil, fmt.Errorf("sqlite store %s: stats: %w", s.path, err)
		}
	}
	return st, nil
}

const chunkColumns = `c.id, c.doc_id, c.idx, c.text, c.tokens, c.start_off, c.end_off, c.embedding`

func scanChunk(sc interface{ Scan(...any) error }, extra ...any) (store.Chunk, error) {
	var c store.Chunk
	var blob []byte
	err := sc.Scan(append([]any{&c.ID, &c.DocID, &c.Index, &c.Text, &c.Tokens, &c.Start, &c.End, &blob}, extra...)...)
	c.Embedding = decodeVector(blob)
	return c, err
}

// Chunks returns the chunks with these ids, in the order asked; missing ids are skipped.
func (s *Store) Chunks(ctx context.Context, ids []string) ([]store.Chunk, error) {
	byID := map[string]store.Chunk{}
	err := s.byIDs(ctx, `SELECT `+chunkColumns+` FROM chunks c WHERE c.id IN `, ids, func(rows *sql.Rows) error {
		c, err := scanChunk(rows)
		byID[c.ID] = c
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: chunks: %w", s.path, err)
	}
	return inOrder(ids, byID), nil
}

// DocumentChunks returns a document's chunks in order.
func (s *Store) DocumentChunks(ctx context.Context, docID string) ([]store.Chunk, error) {
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+chunkColumns+` FROM chunks c WHERE c.doc_id = ? ORDER BY c.idx`, docID)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: chunks of %s: %w", s.path, docID, err)
	}
	defer rows.Close()
	var out []store.Chunk
	for rows.Next() {
		c, err := scanChunk(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store %s: chunks of %s: %w", s.path, docID, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: chunks of %s: %w", s.path, docID, err)
	}
	return out, nil
}

const entityColumns = `e.id, e.name, e.type, e.description, e.mentions, e.embedding`

func scanEntity(sc interface{ Scan(...any) error }, extra ...any) (store.Entity, error) {
	var e store.Entity
	var blob []byte
	err := sc.Scan(append([]any{&e.ID, &e.Name, &e.Type, &e.Description, &e.Mentions, &blob}, extra...)...)
	e.Embedding = decodeVector(blob)
	return e, err
}

// Entities returns the entities with these ids, in the order asked; missing ids are skipped.
func (s *Store) Entities(ctx context.Context, ids []string) ([]store.Entity, error) {
	byID := map[string]store.Entity{}
	err := s.byIDs(ctx, `SELECT `+entityColumns+` FROM entities e WHERE e.id IN `, ids, func(rows *sql.Rows) error {
		e, err := scanEntity(rows)
		byID[e.ID] = e
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: entities: %w", s.path, err)
	}
	return inOrder(ids, byID), nil
}

const relationColumns = `r.id, r.source_id, r.target_id, r.type, r.keywords, r.description, r.weight, r.embedding`

func scanRelation(sc interface{ Scan(...any) error }) (store.Relation, error) {
	var r store.Relation
	var blob []byte
	err := sc.Scan(&r.ID, &r.SourceID, &r.TargetID, &r.Type, &r.Keywords, &r.Description, &r.Weight, &blob)
	r.Embedding = decodeVector(blob)
	return r, err
}

// Relations returns the relations with these ids, in the order asked; missing ids are skipped.
func (s *Store) Relations(ctx context.Context, ids []string) ([]store.Relation, error) {
	byID := map[string]store.Relation{}
	err := s.byIDs(ctx, `SELECT `+relationColumns+` FROM relations r WHERE r.id IN `, ids, func(rows *sql.Rows) error {
		r, err := scanRelation(rows)
		byID[r.ID] = r
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations: %w", s.path, err)
	}
	return inOrder(ids, byID), nil
}

// RelationsOf returns the relations touching any of the entities, heaviest
// first; limit <= 0 means all.
func (s *Store) RelationsOf(ctx context.Context, entityIDs []string, limit int) ([]store.Relation, error) {
	ids := unique(entityIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	in, args := inList(ids)
	q := `SELECT ` + relationColumns + ` FROM relations r WHERE r.id IN (
			SELECT id FROM relations WHERE source_id IN ` + in + `
			UNION SELECT id FROM relations WHERE target_id IN ` + in + `)
		ORDER BY r.weight DESC, r.id`
	args = append(args, args...)
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations of %d entities: %w", s.path, len(ids), err)
	}
	defer rows.Close()
	var out []store.Relation
	for rows.Next() {
		r, err := scanRelation(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store %s: relations of %d entities: %w", s.path, len(ids), err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations of %d entities: %w", s.path, len(ids), err)
	}
	return out, nil
}

// MentionsOf returns the MENTIONED_IN edges of the entities, ordered by
// entity then chunk; limit <= 0 means all.
func (s *Store) MentionsOf(ctx context.Context, entityIDs []string, limit int) ([]store.Mention, error) {
	ids := unique(entityIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	in, args := inList(ids)
	q := `SELECT DISTINCT entity_id, chunk_id, doc_id FROM entity_mentions WHERE entity_id IN ` + in + ` ORDER BY entity_id, chunk_id`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	out, err := s.mentions(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: mentions of %d entities: %w", s.path, len(ids), err)
	}
	return out, nil
}

// EntitiesOfChunks returns the MENTIONED_IN edges into the chunks, ordered by chunk then entity.
func (s *Store) EntitiesOfChunks(ctx context.Context, chunkIDs []string) ([]store.Mention, error) {
	ids := unique(chunkIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	in, args := inList(ids)
	out, err := s.mentions(ctx, `SELECT DISTINCT entity_id, chunk_id, doc_id FROM entity_mentions WHERE chunk_id IN `+in+` ORDER BY chunk_id, entity_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: entities of %d chunks: %w", s.path, len(ids), err)
	}
	return out, nil
}

func (s *Store) mentions(ctx context.Context, q string, args ...any) ([]store.Mention, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Mention
	for rows.Next() {
		var m store.Mention
		if err := rows.Scan(&m.EntityID, &m.ChunkID, &m.DocID); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// byIDs runs prefix + an id-list subquery and scans every row.
func (s *Store) byIDs(ctx context.Context, prefix string, ids []string, scan func(*sql.Rows) error) error {
	ids = unique(ids)
	if len(ids) == 0 {
		return nil
	}
	in, args := inList(ids)
	rows, err := s.rdb.QueryContext(ctx, prefix+in, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// inList renders an IN operand for any number of ids as one JSON parameter,
// so no list ever meets SQLite's bound-parameter limit.
func inList(ids []string) (string, []any) {
	b, _ := json.Marshal(ids)
	return "(SELECT value FROM json_each(?))", []any{string(b)}
}

func inOrder[T any](ids []string, byID map[string]T) []T {
	out := make([]T, 0, len(byID))
	seen := map[string]bool{}
	for _, id := range ids {
		if v, ok := byID[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, v)
		}
	}
	return out
}
