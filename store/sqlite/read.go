package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/docgraph/docgraph/store"
)

const documentColumns = `id, path, title, hash, format, fingerprint, status, error, size, mod_time, updated_at, chunks, file_key, warnings, lease_owner, lease_until`

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
	d, err := scanDocument(s.rdb.QueryRowContext(ctx, `SELECT `+documentColumns+` FROM documents WHERE id = ?`, id))
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
	d, err := scanDocument(s.rdb.QueryRowContext(ctx, `SELECT `+documentColumns+` FROM documents WHERE path = ?
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
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+documentColumns+` FROM documents ORDER BY path, id`)
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
		{&st.Mentions, `SELECT count(*) FROM entity_mentions WHERE n = 0`},
	} {
		if err := tx.QueryRowContext(ctx, c.query).Scan(c.dst); err != nil {
			return nil, fmt.Errorf("sqlite store %s: stats: %w", s.path, err)
		}
	}
	return st, nil
}

// chunkColumns selects a chunk with its vector (c: chunks, v: vectors).
const chunkColumns = `c.id, c.doc_id, c.idx, c.text, c.tokens, c.start_off, c.end_off, v.vec`

// chunkVector joins a chunk's vector.
const chunkVector = ` LEFT JOIN vectors v ON v.kind = 0 AND v.id = c.seq`

func scanChunk(sc interface{ Scan(...any) error }, extra ...any) (store.Chunk, error) {
	var c store.Chunk
	var blob []byte
	err := sc.Scan(append([]any{&c.ID, &c.DocID, &c.Index, &c.Text, &c.Tokens, &c.Start, &c.End, &blob}, extra...)...)
	if err == nil {
		c.Embedding, err = decodeVec(blob)
	}
	return c, err
}

// Chunks returns the chunks with these ids, in the order asked; missing ids are skipped.
func (s *Store) Chunks(ctx context.Context, ids []string) ([]store.Chunk, error) {
	byID := map[string]store.Chunk{}
	err := s.byIDs(ctx, `SELECT `+chunkColumns+` FROM json_each(?) j CROSS JOIN chunks c ON c.id = j.value`+chunkVector, jsonList(unique(ids)), func(rows *sql.Rows) error {
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
	rows, err := s.rdb.QueryContext(ctx, `SELECT `+chunkColumns+` FROM chunks c`+chunkVector+` WHERE c.doc_id = ? ORDER BY c.idx`, docID)
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

// entityColumns selects an entity with its vector (e: entities, k: its
// counts, v: vectors); entityColumnsNoVector the same with a null vector,
// for a snapshot that stores no entity vectors (see kindVectors).
const (
	entityFields          = `e.id, e.name, e.type, e.description, k.mentions`
	entityColumns         = entityFields + `, v.vec`
	entityColumnsNoVector = entityFields + `, NULL`
)

// entityVector joins an entity's counts and vector, entityCounts its
// counts alone.
const (
	entityVector = entityCounts + ` LEFT JOIN vectors v ON v.kind = 1 AND v.id = e.seq`
	entityCounts = ` JOIN entity_counts k ON k.seq = e.seq`
)

func scanEntity(sc interface{ Scan(...any) error }, extra ...any) (store.Entity, error) {
	var e store.Entity
	var id int64
	var blob []byte
	err := sc.Scan(append([]any{&id, &e.Name, &e.Type, &e.Description, &e.Mentions, &blob}, extra...)...)
	e.ID = entityName(id)
	if err == nil {
		e.Embedding, err = decodeVec(blob)
	}
	return e, err
}

// Entities returns the entities with these ids, in the order asked; missing ids are skipped.
func (s *Store) Entities(ctx context.Context, ids []string) ([]store.Entity, error) {
	byID := map[string]store.Entity{}
	err := s.byIDs(ctx, `SELECT `+entityColumns+` FROM json_each(?) j CROSS JOIN entities e ON e.id = j.value`+entityVector,
		intList(keysOf(ids, 'e')), func(rows *sql.Rows) error {
			e, err := scanEntity(rows)
			byID[e.ID] = e
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: entities: %w", s.path, err)
	}
	out := inOrder(ids, byID)
	if err := s.entityVectors(ctx, out); err != nil {
		return nil, fmt.Errorf("sqlite store %s: entities: %w", s.path, err)
	}
	return out, nil
}

// entityVectors makes the vectors of entities the store keeps none of.
func (s *Store) entityVectors(ctx context.Context, es []store.Entity) error {
	if s.reembed == nil {
		return nil
	}
	var idx []int
	var missing []store.Entity
	for i, e := range es {
		if e.Embedding == nil {
			idx = append(idx, i)
			missing = append(missing, e)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	vecs, err := s.reembed.EntityVectors(ctx, missing)
	if err != nil {
		return fmt.Errorf("entity vectors: %w", err)
	}
	for k, i := range idx {
		es[i].Embedding = vecs[k]
	}
	return nil
}

// relationVectors makes the vectors of relations the store keeps none of.
func (s *Store) relationVectors(ctx context.Context, rs []store.Relation) error {
	if s.reembed == nil {
		return nil
	}
	var idx []int
	var missing []store.Relation
	for i, r := range rs {
		if r.Embedding == nil {
			idx = append(idx, i)
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	vecs, err := s.reembed.RelationVectors(ctx, missing)
	if err != nil {
		return fmt.Errorf("relation vectors: %w", err)
	}
	for k, i := range idx {
		rs[i].Embedding = vecs[k]
	}
	return nil
}

// relationColumns selects a relation with its vector (r: relations, v:
// vectors); relationColumnsNoVector the same with a null vector and no
// join, for a snapshot that stores no relation vectors.
const (
	relationFields          = `r.id, r.source, r.target, r.type, r.keywords, r.description, r.weight`
	relationColumns         = relationFields + `, v.vec`
	relationColumnsNoVector = relationFields + `, NULL`
)

const relationVector = ` LEFT JOIN vectors v ON v.kind = 2 AND v.id = r.seq`

func scanRelation(sc interface{ Scan(...any) error }, extra ...any) (store.Relation, error) {
	var r store.Relation
	var id, src, tgt int64
	var blob []byte
	err := sc.Scan(append([]any{&id, &src, &tgt, &r.Type, &r.Keywords, &r.Description, &r.Weight, &blob}, extra...)...)
	r.ID, r.SourceID, r.TargetID = relationName(id), entityName(src), entityName(tgt)
	if err == nil {
		r.Embedding, err = decodeVec(blob)
	}
	return r, err
}

// Relations returns the relations with these ids, in the order asked; missing ids are skipped.
func (s *Store) Relations(ctx context.Context, ids []string) ([]store.Relation, error) {
	byID := map[string]store.Relation{}
	err := s.byIDs(ctx, `SELECT `+relationColumns+` FROM json_each(?) j CROSS JOIN relations r ON r.id = j.value`+relationVector,
		intList(keysOf(ids, 'r')), func(rows *sql.Rows) error {
			r, err := scanRelation(rows)
			byID[r.ID] = r
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations: %w", s.path, err)
	}
	out := inOrder(ids, byID)
	if err := s.relationVectors(ctx, out); err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations: %w", s.path, err)
	}
	return out, nil
}

// RelationsOf returns the relations touching any of the entities, heaviest
// first; limit <= 0 means all.
func (s *Store) RelationsOf(ctx context.Context, entityIDs []string, limit int) ([]store.Relation, error) {
	keys := keysOf(entityIDs, 'e')
	if len(keys) == 0 {
		return nil, nil
	}
	list := intList(keys)
	q := `SELECT ` + relationColumns + ` FROM relations r` + relationVector + ` WHERE r.id IN (
			SELECT x.id FROM json_each(?1) j CROSS JOIN relations x ON x.source = j.value
			UNION SELECT x.id FROM json_each(?1) j CROSS JOIN relations x ON x.target = j.value)
		ORDER BY r.weight DESC, r.id`
	args := []any{list}
	if limit > 0 {
		q += ` LIMIT ?2`
		args = append(args, limit)
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations of %d entities: %w", s.path, len(keys), err)
	}
	defer rows.Close()
	var out []store.Relation
	for rows.Next() {
		r, err := scanRelation(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite store %s: relations of %d entities: %w", s.path, len(keys), err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations of %d entities: %w", s.path, len(keys), err)
	}
	if err := s.relationVectors(ctx, out); err != nil {
		return nil, fmt.Errorf("sqlite store %s: relations of %d entities: %w", s.path, len(keys), err)
	}
	return out, nil
}

// MentionsOf returns the MENTIONED_IN edges of the entities, ordered by
// entity then chunk; limit <= 0 means all.
func (s *Store) MentionsOf(ctx context.Context, entityIDs []string, limit int) ([]store.Mention, error) {
	keys := keysOf(entityIDs, 'e')
	if len(keys) == 0 {
		return nil, nil
	}
	q := `SELECT m.entity, c.id, c.doc_id FROM json_each(?) j CROSS JOIN entity_mentions m ON m.entity = j.value
		CROSS JOIN chunks c ON c.seq = m.chunk WHERE m.n = 0 ORDER BY m.entity, c.id`
	args := []any{intList(keys)}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	out, err := s.mentions(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: mentions of %d entities: %w", s.path, len(keys), err)
	}
	return out, nil
}

// EntitiesOfChunks returns the MENTIONED_IN edges into the chunks, ordered by chunk then entity.
func (s *Store) EntitiesOfChunks(ctx context.Context, chunkIDs []string) ([]store.Mention, error) {
	ids := unique(chunkIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := s.mentions(ctx, `SELECT m.entity, c.id, c.doc_id FROM json_each(?) j CROSS JOIN chunks c ON c.id = j.value
		CROSS JOIN entity_mentions m ON m.chunk = c.seq WHERE m.n = 0 ORDER BY c.id, m.entity`, jsonList(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: entities of %d chunks: %w", s.path, len(ids), err)
	}
	return out, nil
}

// mentions runs a query of entity key, chunk id, document id.
func (s *Store) mentions(ctx context.Context, q string, args ...any) ([]store.Mention, error) {
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Mention
	for rows.Next() {
		var m store.Mention
		var e int64
		if err := rows.Scan(&e, &m.ChunkID, &m.DocID); err != nil {
			return nil, err
		}
		m.EntityID = entityName(e)
		out = append(out, m)
	}
	return out, rows.Err()
}

// byIDs runs a query whose one parameter is a JSON list and scans every row.
func (s *Store) byIDs(ctx context.Context, query, list string, scan func(*sql.Rows) error) error {
	return byIDs(ctx, s.rdb, query, list, scan)
}

func byIDs(ctx context.Context, q querier, query, list string, scan func(*sql.Rows) error) error {
	if list == "[]" {
		return nil
	}
	rows, err := q.QueryContext(ctx, query, list)
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
