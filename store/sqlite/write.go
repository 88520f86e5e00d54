package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docgraph/docgraph/cjk"
	"github.com/docgraph/docgraph/store"
)

// change collects what one write transaction touched: the count deltas of
// every entity and relation whose mentions it added or removed (so their
// merged rows can be brought up to date without reading all their
// mentions), the mentions it added (a new entity's prefix is all in the
// write), and the vectors it changed, for the vector log.
type change struct {
	ents    map[int64]*entityDelta
	rels    map[int64]*relationDelta
	newEnts map[int64][]store.EntityMention
	newRels map[int64][]store.RelationMention
	vecs    []vecChange
}

// entityDelta is what a write changed of an entity's mention counts.
type entityDelta struct {
	names, types map[string]int
	chunks       int // distinct chunks: rows with n = 0
}

// relationDelta is what a write changed of a relation's mentions.
type relationDelta struct {
	weight float64
	rows   int
}

// vecChange names one vector a write set or removed.
type vecChange struct {
	kind int
	id   int64
}

// Vector kinds, as the vectors and vector_log tables number them.
const (
	kindChunk = iota
	kindEntity
	kindRelation
)

func newChange() *change {
	return &change{ents: map[int64]*entityDelta{}, rels: map[int64]*relationDelta{},
		newEnts: map[int64][]store.EntityMention{}, newRels: map[int64][]store.RelationMention{}}
}

func (ch *change) entity(id int64) *entityDelta {
	d := ch.ents[id]
	if d == nil {
		d = &entityDelta{names: map[string]int{}, types: map[string]int{}}
		ch.ents[id] = d
	}
	return d
}

func (ch *change) relation(id int64) *relationDelta {
	d := ch.rels[id]
	if d == nil {
		d = &relationDelta{}
		ch.rels[id] = d
	}
	return d
}

// WriteDocument replaces the document w.Document.ID and every id in
// w.Replaces by w in one transaction, re-merges every entity and relation
// either version mentions, and marks the document done. On any error,
// including ctx cancellation, the store keeps its previous state.
func (s *Store) WriteDocument(ctx context.Context, w *store.DocumentWrite) error {
	if w == nil {
		return errors.New("sqlite store: write: nil document write")
	}
	return s.writeDocuments(ctx, fmt.Sprintf("write document %s (%s)", w.Document.ID, w.Document.Path), []*store.DocumentWrite{w})
}

// WriteDocuments is WriteDocument for several documents in one transaction:
// all of them are written or none. Their rows share the multi-row inserts
// and the entities and relations they touch are re-merged once, which is
// what makes ingesting many small documents fast. No two writes may name
// the same document or chunk.
func (s *Store) WriteDocuments(ctx context.Context, ws ...*store.DocumentWrite) error {
	switch len(ws) {
	case 0:
		return nil
	case 1:
		return s.WriteDocument(ctx, ws[0])
	}
	return s.writeDocuments(ctx, fmt.Sprintf("write %d documents", len(ws)), ws)
}

func (s *Store) writeDocuments(ctx context.Context, op string, ws []*store.DocumentWrite) error {
	if err := s.validateAll(ws); err != nil {
		return fmt.Errorf("sqlite store %s: %s: %w", s.path, op, err)
	}
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.Document.ID)
		ids = append(ids, w.Replaces...)
	}
	err := s.inTx(ctx, func(tx *sql.Tx, ch *change) error {
		if _, err := s.removeDocuments(ctx, tx, unique(ids), ch); err != nil {
			return err
		}
		if err := s.insertDocuments(ctx, tx, ws, ch); err != nil {
			return err
		}
		return s.reconcile(ctx, tx, ch)
	})
	if err != nil {
		return fmt.Errorf("sqlite store %s: %s: %w", s.path, op, err)
	}
	return nil
}

// DeleteDocument removes a document with its chunks and mentions, then
// re-merges what it touched: entities and relations only it mentioned go.
func (s *Store) DeleteDocument(ctx context.Context, id string) error {
	err := s.inTx(ctx, func(tx *sql.Tx, ch *change) error {
		found, err := s.removeDocuments(ctx, tx, []string{id}, ch)
		if err != nil {
			return err
		}
		if !found {
			return store.ErrNotFound
		}
		return s.reconcile(ctx, tx, ch)
	})
	if err != nil {
		return fmt.Errorf("sqlite store %s: delete document %s: %w", s.path, id, err)
	}
	return nil
}

// SetStatus records a lifecycle state, creating a bare document row (no
// chunks, so nothing searchable) when the id is new. It settles the row, so
// it clears any lease on it.
func (s *Store) SetStatus(ctx context.Context, doc store.Document, status store.Status, reason string) error {
	switch status {
	case store.StatusPending, store.StatusProcessing, store.StatusDone, store.StatusFailed, store.StatusDuplicate:
	default:
		return fmt.Errorf("sqlite store %s: set status of %s: unknown status %q", s.path, doc.ID, status)
	}
	if doc.ID == "" {
		return fmt.Errorf("sqlite store %s: set status of %s: empty document id", s.path, doc.Path)
	}
	err := s.retrying(ctx, func() error {
		_, err := s.wdb.ExecContext(ctx, `
		INSERT INTO documents(id, path, title, hash, format, fingerprint, status, error, size, mod_time, updated_at, chunks, file_key, warnings)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', ?)
		ON CONFLICT(id) DO UPDATE SET status = excluded.status, error = excluded.error, updated_at = excluded.updated_at,
			lease_owner = '', lease_until = 0`,
			doc.ID, doc.Path, doc.Title, doc.Hash, doc.Format, doc.Fingerprint, string(status), reason,
			doc.Size, unixNano(doc.ModTime), time.Now().UnixNano(), encodeWarnings(doc.Warnings))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite store %s: set status of %s to %s: %w", s.path, doc.ID, status, err)
	}
	return nil
}

// RenameDocument changes a document's path. It moves the write generation,
// so that other processes' caches, which may hold document paths, notice.
func (s *Store) RenameDocument(ctx context.Context, id, path string) error {
	err := s.inTx(ctx, func(tx *sql.Tx, _ *change) error {
		return updateOne(ctx, tx, `UPDATE documents SET path = ?, updated_at = ? WHERE id = ?`, path, time.Now().UnixNano(), id)
	})
	if err != nil {
		return fmt.Errorf("sqlite store %s: rename document %s to %s: %w", s.path, id, path, err)
	}
	return nil
}

// SetFileKey records the file key of a document; it moves no generation,
// as nothing search sees changes.
func (s *Store) SetFileKey(ctx context.Context, id, key string) error {
	err := s.retrying(ctx, func() error {
		return updateOne(ctx, s.wdb, `UPDATE documents SET file_key = ? WHERE id = ?`, key, id)
	})
	if err != nil {
		return fmt.Errorf("sqlite store %s: set file key of %s: %w", s.path, id, err)
	}
	return nil
}

// updateOne runs an UPDATE of one document row, store.ErrNotFound when
// there is no such row.
func updateOne(ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmp.Or(err, store.ErrNotFound)
	}
	return nil
}

// validateAll validates every write and refuses a document or chunk named
// by two of them.
func (s *Store) validateAll(ws []*store.DocumentWrite) error {
	docs, chunks := map[string]bool{}, map[string]bool{}
	for _, w := range ws {
		if w == nil {
			return errors.New("nil document write")
		}
		if err := s.validate(w); err != nil {
			if len(ws) > 1 {
				return fmt.Errorf("document %s (%s): %w", w.Document.ID, w.Document.Path, err)
			}
			return err
		}
		for _, id := range unique(append([]string{w.Document.ID}, w.Replaces...)) {
			if docs[id] {
				return fmt.Errorf("document %s is written or replaced twice in one transaction", id)
			}
			docs[id] = true
		}
		for _, c := range w.Chunks {
			if chunks[c.ID] {
				return fmt.Errorf("chunk id %s appears in two documents", c.ID)
			}
			chunks[c.ID] = true
		}
	}
	return nil
}

// validate rejects a write the schema would reject half-way, with a message
// that names the offending row.
func (s *Store) validate(w *store.DocumentWrite) error {
	if w.Document.ID == "" {
		return errors.New("empty document id")
	}
	if s.merger == nil {
		return errors.New("no Merger configured (store.Options.Merger)")
	}
	dim := s.emb.Dimension
	chunks := make(map[string]bool, len(w.Chunks))
	for _, c := range w.Chunks {
		switch {
		case c.ID == "":
			return fmt.Errorf("chunk %d has an empty id", c.Index)
		case chunks[c.ID]:
			return fmt.Errorf("chunk id %s appears twice", c.ID)
		case c.DocID != "" && c.DocID != w.Document.ID:
			return fmt.Errorf("chunk %s belongs to document %s", c.ID, c.DocID)
		case dim > 0 && c.Embedding != nil && len(c.Embedding) != dim:
			return fmt.Errorf("chunk %s has a %d-dimensional vector, the store holds %s vectors of dimension %d", c.ID, len(c.Embedding), s.emb.Name, dim)
		}
		chunks[c.ID] = true
	}
	for _, m := range w.Entities {
		if m.EntityID == "" || !chunks[m.ChunkID] {
			return fmt.Errorf("entity mention %q (%s) names chunk %q, which is not in the document", m.Name, m.EntityID, m.ChunkID)
		}
		if _, ok := canonicalID(m.EntityID, 'e'); !ok {
			return fmt.Errorf("entity mention %q has id %q, not an entity id (graphbuild.EntityID: \"e\" and 16 hex digits)", m.Name, m.EntityID)
		}
	}
	for _, m := range w.Relations {
		if m.RelationID == "" || m.SourceID == "" || m.TargetID == "" || !chunks[m.ChunkID] {
			return fmt.Errorf("relation mention %s (%s -> %s) names chunk %q, which is not in the document, or lacks an id", m.RelationID, m.SourceID, m.TargetID, m.ChunkID)
		}
		_, okR := canonicalID(m.RelationID, 'r')
		_, okS := canonicalID(m.SourceID, 'e')
		_, okT := canonicalID(m.TargetID, 'e')
		if !okR || !okS || !okT {
			return fmt.Errorf("relation mention %s (%s -> %s): not a relation id and two entity ids (graphbuild.RelationID, EntityID)", m.RelationID, m.SourceID, m.TargetID)
		}
	}
	return nil
}

// inTx runs fn in the single write transaction, bumps the write generation,
// logs the vectors it changed, commits, and then lets the ANN indexes catch
// up. A database another process keeps busy past the busy timeout is tried
// again, with backoff, within the retry budget.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx, *change) error) error {
	var gen int64
	err := s.retrying(ctx, func() error {
		var err error
		gen, err = s.tryTx(ctx, fn)
		return err
	})
	if err == nil && s.ann != nil {
		s.ann.written(gen)
	}
	return err
}

// retrying runs one write under the write lock, again while it fails busy.
func (s *Store) retrying(ctx context.Context, write func() error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	err := retryBusy(ctx, s.retryBudget, write, func() { s.retries.Add(1) })
	if err == nil {
		s.commits.Add(1)
	}
	if primaryCode(err) == sqliteFull {
		// The disk (or a size limit) is full: say so in a way a run can
		// stop on, since no other document's write would fit either.
		err = fmt.Errorf("%w: %w", store.ErrDiskFull, err)
	}
	return err
}

// retryBusy runs fn again while it fails busy, until it succeeds, fails
// otherwise, ctx ends or budget is spent; retried hears each new attempt.
func retryBusy(ctx context.Context, budget time.Duration, fn func() error, retried func()) error {
	deadline := time.Now().Add(budget)
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !busy(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		retried()
		if err := store.RetryPause(ctx, attempt); err != nil {
			return err
		}
	}
}

func (s *Store) tryTx(ctx context.Context, fn func(*sql.Tx, *change) error) (int64, error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, tempTables); err != nil {
		return 0, fmt.Errorf("temp tables: %w", err)
	}
	ch := newChange()
	if err := fn(tx, ch); err != nil {
		return 0, err
	}
	var gen int64
	if err := tx.QueryRowContext(ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation' RETURNING CAST(value AS INTEGER)`).Scan(&gen); err != nil {
		return 0, fmt.Errorf("bump generation: %w", err)
	}
	if err := logVectors(ctx, tx, gen, ch.vecs); err != nil {
		return 0, fmt.Errorf("log vector changes: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return gen, nil
}

// tempTables stage the rows a write feeds to the full-text indexes, so
// each index gets one statement per write.
const tempTables = `
CREATE TEMP TABLE IF NOT EXISTS chunk_text(seq INTEGER PRIMARY KEY, text TEXT);
CREATE TEMP TABLE IF NOT EXISTS entity_text(seq INTEGER PRIMARY KEY, name TEXT, description TEXT);`

// logVectors records which vectors generation gen changed: the ANN index
// files, maintained after commit, read what to re-index from here.
func logVectors(ctx context.Context, tx *sql.Tx, gen int64, vecs []vecChange) error {
	if len(vecs) == 0 {
		return nil
	}
	b := newBatch(ctx, tx, `INSERT OR IGNORE INTO vector_log(gen, kind, id)`, 3, "")
	for _, v := range vecs {
		if err := b.add(gen, v.kind, v.id); err != nil {
			return err
		}
	}
	return b.flush()
}

// busy reports SQLITE_BUSY (another connection holds the write lock past
// the busy timeout), the one transient failure of a local database.
func busy(err error) bool { return primaryCode(err) == sqliteBusy }

// primaryCode is the primary SQLite result code err carries, 0 for none.
func primaryCode(err error) int {
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return 0
	}
	return coded.Code() & 0xff
}

const sqliteBusy = 5

// sqliteFull is SQLITE_FULL: a write needed a page and there was no room
// (the disk full, or max_page_count reached).
const sqliteFull = 13

// WriteStats reports the write transactions committed and retried since
// the store was opened.
func (s *Store) WriteStats() store.WriteStats {
	return store.WriteStats{Commits: s.commits.Load(), Retries: s.retries.Load()}
}

// removeDocuments deletes documents' rows and records what their mentions
// contributed, as negative deltas. It reports whether any of them existed.
func (s *Store) removeDocuments(ctx context.Context, tx *sql.Tx, ids []string, ch *change) (bool, error) {
	list := jsonList(ids)
	var seqs []int64
	if err := collectInts(ctx, tx, &seqs, `SELECT c.seq FROM json_each(?) j CROSS JOIN chunks c ON c.doc_id = j.value`, list); err != nil {
		return false, fmt.Errorf("chunks of %v: %w", ids, err)
	}
	if len(seqs) > 0 {
		chunkList := intList(seqs)
		rows, err := tx.QueryContext(ctx, `SELECT m.entity, m.n, m.name, m.type FROM json_each(?) j CROSS JOIN entity_mentions m ON m.chunk = j.value`, chunkList)
		if err != nil {
			return false, fmt.Errorf("entity mentions of %v: %w", ids, err)
		}
		for rows.Next() {
			var id, n int64
			var name, typ string
			if err := rows.Scan(&id, &n, &name, &typ); err != nil {
				rows.Close()
				return false, fmt.Errorf("entity mentions of %v: %w", ids, err)
			}
			d := ch.entity(id)
			d.names[name]--
			if typ != "" {
				d.types[typ]--
			}
			if n == 0 {
				d.chunks--
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return false, fmt.Errorf("entity mentions of %v: %w", ids, err)
		}
		rows, err = tx.QueryContext(ctx, `SELECT m.relation, m.weight FROM json_each(?) j CROSS JOIN relation_mentions m ON m.chunk = j.value`, chunkList)
		if err != nil {
			return false, fmt.Errorf("relation mentions of %v: %w", ids, err)
		}
		for rows.Next() {
			var id int64
			var w float64
			if err := rows.Scan(&id, &w); err != nil {
				rows.Close()
				return false, fmt.Errorf("relation mentions of %v: %w", ids, err)
			}
			d := ch.relation(id)
			d.weight -= mentionWeight(w)
			d.rows--
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return false, fmt.Errorf("relation mentions of %v: %w", ids, err)
		}
		for _, q := range []string{
			`DELETE FROM entity_mentions WHERE chunk IN (SELECT value FROM json_each(?))`,
			`DELETE FROM relation_mentions WHERE chunk IN (SELECT value FROM json_each(?))`,
			`DELETE FROM chunks_fts WHERE rowid IN (SELECT value FROM json_each(?))`,
			`DELETE FROM vectors WHERE kind = 0 AND id IN (SELECT value FROM json_each(?))`,
			`DELETE FROM chunks WHERE seq IN (SELECT value FROM json_each(?))`,
		} {
			if _, err := tx.ExecContext(ctx, q, chunkList); err != nil {
				return false, fmt.Errorf("remove %v: %w", ids, err)
			}
		}
		for _, seq := range seqs {
			ch.vecs = append(ch.vecs, vecChange{kindChunk, seq})
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return false, fmt.Errorf("remove %v: %w", ids, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// mentionWeight is what one mention adds to its relation's weight, as the
// merger counts it.
func mentionWeight(w float64) float64 {
	if w <= 0 {
		return 1
	}
	return w
}

// chunkOrd is a chunk's place in chunk-id order as far as an integer can
// hold it: its id's first 7 bytes. Merges read an entity's mentions in
// chunk-id order; ties (chunks of one document) are broken by the id.
func chunkOrd(id string) int64 {
	var n int64
	for i := 0; i < 7; i++ {
		n <<= 8
		if i < len(id) {
			n |= int64(id[i])
		}
	}
	return n
}

// insertDocuments writes the document rows, their chunks (with their FTS
// entries and vectors) and their mentions, each kind in multi-row inserts
// shared by all documents, and records the mentions' deltas.
func (s *Store) insertDocuments(ctx context.Context, tx *sql.Tx, ws []*store.DocumentWrite, ch *change) error {
	now := time.Now().UnixNano()
	docs := newBatch(ctx, tx, `INSERT OR FAIL INTO documents(id, path, title, hash, format, fingerprint, status, error, size, mod_time, updated_at, chunks, file_key, warnings)`, 14, "")
	for _, w := range ws {
		d := w.Document
		if err := docs.add(d.ID, d.Path, d.Title, d.Hash, d.Format, d.Fingerprint, string(store.StatusDone), "",
			d.Size, unixNano(d.ModTime), now, len(w.Chunks), d.FileKey, encodeWarnings(d.Warnings)); err != nil {
			return fmt.Errorf("insert documents: %w", err)
		}
	}
	if err := docs.flush(); err != nil {
		return fmt.Errorf("insert documents: %w", err)
	}

	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'next_chunk'`).Scan(&next); err != nil {
		return fmt.Errorf("next chunk: %w", err)
	}
	type chunkRef struct {
		seq, ord int64
		text     string
	}
	refs := map[string]chunkRef{}
	chunks := newBatch(ctx, tx, `INSERT OR FAIL INTO chunks(seq, id, doc_id, idx, text, tokens, start_off, end_off, ord)`, 9, "")
	fts := newBatch(ctx, tx, `INSERT OR FAIL INTO temp.chunk_text(seq, text)`, 2, "")
	vecs := newBatch(ctx, tx, `INSERT OR FAIL INTO vectors(kind, id, vec)`, 3, "")
	for _, w := range ws {
		for _, c := range w.Chunks {
			seq := next
			next++
			ref := chunkRef{seq: seq, ord: chunkOrd(c.ID), text: c.Text}
			refs[c.ID] = ref
			if err := chunks.add(seq, c.ID, w.Document.ID, c.Index, c.Text, c.Tokens, c.Start, c.End, ref.ord); err != nil {
				return fmt.Errorf("insert chunks: %w", err)
			}
			if err := fts.add(seq, cjk.IndexText(c.Text)); err != nil {
				return fmt.Errorf("index chunk text: %w", err)
			}
			if c.Embedding != nil {
				if err := vecs.add(kindChunk, seq, encodeVec(c.Embedding)); err != nil {
					return fmt.Errorf("insert chunk vectors: %w", err)
				}
				ch.vecs = append(ch.vecs, vecChange{kindChunk, seq})
			}
		}
	}
	for _, b := range []*batch{chunks, fts, vecs} {
		if err := b.flush(); err != nil {
			return fmt.Errorf("insert chunks: %w", err)
		}
	}
	// One statement feeds the full-text index: FTS5 flushes its pending
	// terms into a new segment at every statement, so a row at a time
	// would make a segment per few rows, and merging them costs more than
	// indexing.
	if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(rowid, text) SELECT seq, text FROM temp.chunk_text`); err != nil {
		return fmt.Errorf("index chunk text: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM temp.chunk_text`); err != nil {
		return fmt.Errorf("index chunk text: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'next_chunk'`, strconv.FormatInt(next, 10)); err != nil {
		return fmt.Errorf("next chunk: %w", err)
	}

	type pair struct{ a, b int64 }
	ents := newBatch(ctx, tx, `INSERT OR FAIL INTO entity_mentions(entity, ord, chunk, n, name, type, frag)`, 7, "")
	for _, w := range ws {
		repeats := map[pair]int64{}
		for _, m := range w.Entities {
			ref := refs[m.ChunkID]
			id, _ := canonicalID(m.EntityID, 'e')
			n := repeats[pair{id, ref.seq}]
			repeats[pair{id, ref.seq}] = n + 1
			if err := ents.add(id, ref.ord, ref.seq, n, m.Name, m.Type, encodeFrag(m.Description, ref.text)); err != nil {
				return fmt.Errorf("insert entity mentions: %w", err)
			}
			d := ch.entity(id)
			d.names[m.Name]++
			if m.Type != "" {
				d.types[m.Type]++
			}
			if n == 0 {
				d.chunks++
			}
			ch.newEnts[id] = append(ch.newEnts[id], m)
		}
	}
	if err := ents.flush(); err != nil {
		return fmt.Errorf("insert entity mentions: %w", err)
	}

	rels := newBatch(ctx, tx, `INSERT OR FAIL INTO relation_mentions(relation, ord, chunk, n, source, target, type, keywords, frag, weight)`, 10, "")
	for _, w := range ws {
		repeats := map[pair]int64{}
		for _, m := range w.Relations {
			ref := refs[m.ChunkID]
			id, _ := canonicalID(m.RelationID, 'r')
			src, _ := canonicalID(m.SourceID, 'e')
			tgt, _ := canonicalID(m.TargetID, 'e')
			n := repeats[pair{id, ref.seq}]
			repeats[pair{id, ref.seq}] = n + 1
			if err := rels.add(id, ref.ord, ref.seq, n, src, tgt, m.Type, m.Keywords, encodeFrag(m.Description, ref.text), m.Weight); err != nil {
				return fmt.Errorf("insert relation mentions: %w", err)
			}
			d := ch.relation(id)
			d.weight += mentionWeight(m.Weight)
			d.rows++
			ch.newRels[id] = append(ch.newRels[id], m)
		}
	}
	if err := rels.flush(); err != nil {
		return fmt.Errorf("insert relation mentions: %w", err)
	}
	return nil
}

func jsonList(ids []string) string {
	if len(ids) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

// batchRows is how many rows one multi-row INSERT carries; per-statement
// overhead, not SQLite, dominates single-row inserts.
const batchRows = 64

// batch accumulates rows for a multi-row INSERT ... VALUES (...), (...).
// Its statements say OR FAIL (or OR IGNORE): a statement that may abort
// half-way (a NOT NULL or UNIQUE constraint's default) keeps a copy of
// every page it changes, to undo itself, and rows on random pages of big
// indexes made that 2.6 of an x4 ingest's 100 CPU s, growing 8x from x1;
// a failing row fails the whole write transaction anyway. (An upsert's
// update part aborts whatever its insert says; see reconcileRelations.)
type batch struct {
	ctx          context.Context
	tx           *sql.Tx
	head, suffix string
	cols         int
	full         *sql.Stmt
	args         []any
}

func newBatch(ctx context.Context, tx *sql.Tx, head string, cols int, suffix string) *batch {
	return &batch{ctx: ctx, tx: tx, head: head, suffix: suffix, cols: cols}
}

func (b *batch) sql(rows int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", b.cols), ", ") + ")"
	return b.head + " VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ") + b.suffix
}

func (b *batch) add(args ...any) error {
	b.args = append(b.args, args...)
	if len(b.args) < b.cols*batchRows {
		return nil
	}
	if b.full == nil {
		st, err := b.tx.PrepareContext(b.ctx, b.sql(batchRows))
		if err != nil {
			return err
		}
		b.full = st
	}
	_, err := b.full.ExecContext(b.ctx, b.args...)
	b.args = b.args[:0]
	return err
}

// flush writes the remaining rows and releases the prepared statement.
func (b *batch) flush() error {
	if b.full != nil {
		defer b.full.Close()
	}
	if len(b.args) == 0 {
		return nil
	}
	_, err := b.tx.ExecContext(b.ctx, b.sql(len(b.args)/b.cols), b.args...)
	b.args = b.args[:0]
	return err
}

// collect adds the single string column of a query's rows to set.
func collect(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, set map[string]bool, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		set[id] = true
	}
	return rows.Err()
}

// collectInts appends the single integer column of a query's rows to out.
func collectInts(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, out *[]int64, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return err
		}
		*out = append(*out, n)
	}
	return rows.Err()
}

func unique(ids []string) []string {
	seen := map[string]bool{}
	out := ids[:0:0]
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

var (
	_ store.GroupSizer = (*Store)(nil)
	_ store.Streamer   = (*Store)(nil)
)

// StreamStarted hears that a stream of writes (a Batcher's run) began:
// the index files wait for its end.
func (s *Store) StreamStarted() { s.ann.stream(1) }

// StreamEnded hears that a stream of writes ended: the index files are
// brought up to date now.
func (s *Store) StreamEnded() { s.ann.stream(-1) }

// Group sizes for a stream of writes, within these bounds. Each
// transaction rewrites the index pages its writes touch (most of them, in
// the indexes keyed by entity and relation ids), so groups that grow with
// the store keep the bytes a bulk ingest writes proportional to what it
// stores; the bounds keep the first groups of a new store from waiting
// long and the last of a big one from holding too much in memory.
const (
	minGroupRows = 20_000
	maxGroupRows = 600_000
	// slowGrowthRows is where groups stop growing by one and a half times
	// the rows stored; past it they are this size, or a quarter of the
	// rows stored once that is more. A group is written on one core;
	// once nothing is left to extract, the other core only links the
	// index drafts of the groups committed before (nodes are drafted
	// only once committed), and with the fast growth alone the last
	// group of an x4 ingest, 44% of it and 13 s of writing, left that
	// core idle. With the bound, x4 ingests in 0.93x the time and 0.79x
	// the peak memory, in three more transactions (written/store
	// 2.5 rather than 2.1); x1's groups stay below it.
	slowGrowthRows = 150_000
)

// groupRows is the preferred size of the next group of a stream into a
// store holding stored rows.
func groupRows(stored int64) int {
	n := min(stored*3/2, max(slowGrowthRows, stored/4))
	return int(min(max(n, minGroupRows), maxGroupRows))
}

// PreferredGroupRows is the size store.Batcher groups a stream of writes
// into (groupRows of the rows stored, read at most once a second).
func (s *Store) PreferredGroupRows() int {
	s.sizeMu.Lock()
	defer s.sizeMu.Unlock()
	if time.Since(s.sizeAt) > time.Second {
		var rows int64
		err := s.rdb.QueryRow(`SELECT
			(SELECT coalesce(max(rowid), 0) FROM entity_mentions) +
			(SELECT coalesce(max(rowid), 0) FROM relation_mentions) +
			(SELECT coalesce(max(seq), 0) FROM chunks)`).Scan(&rows)
		if err == nil {
			s.sizeRows, s.sizeAt = rows, time.Now()
		}
	}
	return groupRows(s.sizeRows)
}
