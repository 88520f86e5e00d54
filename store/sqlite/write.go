package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"docgraph/store"
)

// change collects what one write transaction touched, so the derived rows
// (merged entities and relations) and the vector caches can be brought up to
// date from the mentions that remain.
type change struct {
	entities  map[string]bool
	relations map[string]bool
	chunkVecs []vecUpdate
	entVecs   []vecUpdate
	relVecs   []vecUpdate
	// kept counts the entity and relation vectors held for patching the
	// in-memory indexes after commit; past maxVecUpdates none are held and
	// those indexes catch up from the vector log instead (stale says so).
	kept  int
	stale bool
}

// maxVecUpdates bounds the merged vectors one transaction holds until it
// commits: a whole book touches hundreds of thousands of entities and
// relations, whose vectors would otherwise all be in memory at once.
var maxVecUpdates = 16384

// keep returns v to hold for the index patch, or nil once the transaction
// has changed too many vectors to patch (its ids are still logged).
func (ch *change) keep(v []float32) []float32 {
	if ch.stale {
		return nil
	}
	if ch.kept++; ch.kept > maxVecUpdates {
		ch.stale = true
		for _, ups := range [][]vecUpdate{ch.entVecs, ch.relVecs} {
			for i := range ups {
				ups[i].vec = nil
			}
		}
		return nil
	}
	return v
}

func newChange() *change {
	return &change{entities: map[string]bool{}, relations: map[string]bool{}}
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
// so that other processes' in-memory graphs, which hold document paths,
// reload.
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
	}
	for _, m := range w.Relations {
		if m.RelationID == "" || m.SourceID == "" || m.TargetID == "" || !chunks[m.ChunkID] {
			return fmt.Errorf("relation mention %s (%s -> %s) names chunk %q, which is not in the document, or lacks an id", m.RelationID, m.SourceID, m.TargetID, m.ChunkID)
		}
	}
	return nil
}

// inTx runs fn in the single write transaction, bumps the write generation,
// commits, and only then lets the vector caches see the change. A database
// another process keeps busy past the busy timeout is tried again, with
// backoff, within the retry budget.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx, *change) error) error {
	return s.retrying(ctx, func() error { return s.tryTx(ctx, fn) })
}

// retrying runs one write under the write lock, again while it fails busy.
func (s *Store) retrying(ctx context.Context, write func() error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	err := retryBusy(ctx, s.retryBudget, write, func() { s.retries.Add(1) })
	if err == nil {
		s.commits.Add(1)
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

func (s *Store) tryTx(ctx context.Context, fn func(*sql.Tx, *change) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ch := newChange()
	if err := fn(tx, ch); err != nil {
		return err
	}
	var gen int64
	if err := tx.QueryRowContext(ctx, `UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation' RETURNING CAST(value AS INTEGER)`).Scan(&gen); err != nil {
		return fmt.Errorf("bump generation: %w", err)
	}
	if err := logVectors(ctx, tx, gen, ch); err != nil {
		return fmt.Errorf("log vector changes: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.chunkVecs.apply(gen-1, gen, ch.chunkVecs)
	// A stale change kept no vectors to patch with: a loaded index stays
	// at the previous generation and catches up from the vector log (or
	// reloads) on its next search.
	if !ch.stale {
		s.entityVecs.apply(gen-1, gen, ch.entVecs)
		s.relationVecs.apply(gen-1, gen, ch.relVecs)
	}
	return nil
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

// WriteStats reports the write transactions committed and retried since
// the store was opened.
func (s *Store) WriteStats() store.WriteStats {
	return store.WriteStats{Commits: s.commits.Load(), Retries: s.retries.Load()}
}

// removeDocuments deletes documents' rows and records what they touched.
// It reports whether any of them existed.
func (s *Store) removeDocuments(ctx context.Context, tx *sql.Tx, ids []string, ch *change) (bool, error) {
	list := jsonList(ids)
	if err := collect(ctx, tx, ch.entities, `SELECT DISTINCT m.entity_id FROM json_each(?) j CROSS JOIN entity_mentions m ON m.doc_id = j.value`, list); err != nil {
		return false, fmt.Errorf("entities of %v: %w", ids, err)
	}
	if err := collect(ctx, tx, ch.relations, `SELECT DISTINCT m.relation_id FROM json_each(?) j CROSS JOIN relation_mentions m ON m.doc_id = j.value`, list); err != nil {
		return false, fmt.Errorf("relations of %v: %w", ids, err)
	}
	gone := map[string]bool{}
	if err := collect(ctx, tx, gone, `SELECT c.id FROM json_each(?) j CROSS JOIN chunks c ON c.doc_id = j.value`, list); err != nil {
		return false, fmt.Errorf("chunks of %v: %w", ids, err)
	}
	for c := range gone {
		ch.chunkVecs = append(ch.chunkVecs, vecUpdate{id: c})
	}
	for _, q := range []string{
		`DELETE FROM entity_mentions WHERE doc_id IN (SELECT value FROM json_each(?))`,
		`DELETE FROM relation_mentions WHERE doc_id IN (SELECT value FROM json_each(?))`,
		`DELETE FROM chunks_fts WHERE rowid IN (SELECT c.seq FROM json_each(?) j CROSS JOIN chunks c ON c.doc_id = j.value)`,
		`DELETE FROM chunks WHERE doc_id IN (SELECT value FROM json_each(?))`,
	} {
		if _, err := tx.ExecContext(ctx, q, list); err != nil {
			return false, fmt.Errorf("remove %v: %w", ids, err)
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id IN (SELECT value FROM json_each(?))`, list)
	if err != nil {
		return false, fmt.Errorf("remove %v: %w", ids, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// insertDocuments writes the document rows, their chunks (and their FTS
// entries) and their mentions, each kind in multi-row inserts shared by all
// documents.
func (s *Store) insertDocuments(ctx context.Context, tx *sql.Tx, ws []*store.DocumentWrite, ch *change) error {
	now := time.Now().UnixNano()
	docs := newBatch(ctx, tx, `INSERT INTO documents(id, path, title, hash, format, fingerprint, status, error, size, mod_time, updated_at, chunks, file_key, warnings)`, 14, "")
	ids := make([]string, 0, len(ws))
	for _, w := range ws {
		d := w.Document
		ids = append(ids, d.ID)
		if err := docs.add(d.ID, d.Path, d.Title, d.Hash, d.Format, d.Fingerprint, string(store.StatusDone), "",
			d.Size, unixNano(d.ModTime), now, len(w.Chunks), d.FileKey, encodeWarnings(d.Warnings)); err != nil {
			return fmt.Errorf("insert documents: %w", err)
		}
	}
	if err := docs.flush(); err != nil {
		return fmt.Errorf("insert documents: %w", err)
	}

	chunks := newBatch(ctx, tx, `INSERT INTO chunks(id, doc_id, idx, text, tokens, start_off, end_off, embedding)`, 8, "")
	for _, w := range ws {
		for _, c := range w.Chunks {
			if err := chunks.add(c.ID, w.Document.ID, c.Index, c.Text, c.Tokens, c.Start, c.End, encodeVector(c.Embedding)); err != nil {
				return fmt.Errorf("insert chunks: %w", err)
			}
			if c.Embedding != nil {
				ch.chunkVecs = append(ch.chunkVecs, vecUpdate{id: c.ID, doc: w.Document.ID, vec: c.Embedding})
			}
		}
	}
	if err := chunks.flush(); err != nil {
		return fmt.Errorf("insert chunks: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(rowid, text) SELECT c.seq, docgraph_fts(c.text) FROM json_each(?) j CROSS JOIN chunks c ON c.doc_id = j.value`, jsonList(ids)); err != nil {
		return fmt.Errorf("index chunk text: %w", err)
	}

	ents := newBatch(ctx, tx, `INSERT INTO entity_mentions(entity_id, chunk_id, doc_id, name, type, description)`, 6, "")
	for _, w := range ws {
		for _, m := range w.Entities {
			if err := ents.add(m.EntityID, m.ChunkID, w.Document.ID, m.Name, m.Type, m.Description); err != nil {
				return fmt.Errorf("insert entity mentions: %w", err)
			}
			ch.entities[m.EntityID] = true
		}
	}
	if err := ents.flush(); err != nil {
		return fmt.Errorf("insert entity mentions: %w", err)
	}

	rels := newBatch(ctx, tx, `INSERT INTO relation_mentions(relation_id, source_id, target_id, type, chunk_id, doc_id, keywords, description, weight)`, 9, "")
	for _, w := range ws {
		for _, m := range w.Relations {
			if err := rels.add(m.RelationID, m.SourceID, m.TargetID, m.Type, m.ChunkID, w.Document.ID, m.Keywords, m.Description, m.Weight); err != nil {
				return fmt.Errorf("insert relation mentions: %w", err)
			}
			ch.relations[m.RelationID] = true
		}
	}
	if err := rels.flush(); err != nil {
		return fmt.Errorf("insert relation mentions: %w", err)
	}
	return nil
}

// reconcilePage is how many touched entities (or relations) reconcile
// merges at a time: their mentions, merged rows and vectors are what it
// holds, so a write touching a whole book's graph (hundreds of thousands
// of entities, millions of mentions) stays within bounded memory.
var reconcilePage = 4096

// reconcile recomputes every touched entity and relation from all of its
// remaining mentions, a page of ids at a time (one MergeEntities and one
// MergeRelations call per page; merges are per id, so paging changes no
// result). A relation exists while it has mentions and both endpoint
// entities exist, so relations of entities that appeared or vanished are
// touched too. Rows whose merged form did not change are not rewritten.
func (s *Store) reconcile(ctx context.Context, tx *sql.Tx, ch *change) error {
	if _, err := tx.ExecContext(ctx, `
		CREATE TEMP TABLE IF NOT EXISTS touched_entities(id TEXT PRIMARY KEY) WITHOUT ROWID;
		CREATE TEMP TABLE IF NOT EXISTS touched_relations(id TEXT PRIMARY KEY) WITHOUT ROWID;
		CREATE TEMP TABLE IF NOT EXISTS fts_dirty(id TEXT PRIMARY KEY) WITHOUT ROWID;`); err != nil {
		return fmt.Errorf("prepare reconcile: %w", err)
	}
	var deleted []string
	appeared := false
	for page := range pages(ch.entities) {
		del, app, err := s.reconcileEntities(ctx, tx, ch, page)
		if err != nil {
			return err
		}
		deleted = append(deleted, del...)
		appeared = appeared || app
	}
	// Relations: those mentioned by the change, those whose endpoint entity
	// vanished, and, when entities appeared, the dangling ones waiting for one.
	// (A relation row can only name entities that existed before this write,
	// so only deleted entities need looking up among the stored relations.)
	if len(deleted) > 0 {
		if err := collect(ctx, tx, ch.relations, `
			SELECT r.id FROM json_each(?) j CROSS JOIN relations r ON r.source_id = j.value
			UNION SELECT r.id FROM json_each(?) j CROSS JOIN relations r ON r.target_id = j.value`, jsonList(deleted), jsonList(deleted)); err != nil {
			return fmt.Errorf("relations of deleted entities: %w", err)
		}
	}
	if appeared {
		if err := collect(ctx, tx, ch.relations, `SELECT id FROM dangling_relations`); err != nil {
			return fmt.Errorf("dangling relations: %w", err)
		}
	}
	for page := range pages(ch.relations) {
		if err := s.reconcileRelations(ctx, tx, ch, page); err != nil {
			return err
		}
	}
	return nil
}

// pages yields the ids of set in sorted pages of at most reconcilePage.
func pages(set map[string]bool) func(func(map[string]bool) bool) {
	return func(yield func(map[string]bool) bool) {
		ids := slices.Sorted(maps.Keys(set))
		for len(ids) > 0 {
			n := min(len(ids), reconcilePage)
			page := make(map[string]bool, n)
			for _, id := range ids[:n] {
				page[id] = true
			}
			if !yield(page) {
				return
			}
			ids = ids[n:]
		}
	}
}

// resetTemp empties the temp tables reconcile works through.
func resetTemp(ctx context.Context, tx *sql.Tx, tables ...string) error {
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, `DELETE FROM temp.`+t); err != nil {
			return fmt.Errorf("reset %s: %w", t, err)
		}
	}
	return nil
}

// reconcileEntities re-merges one page of touched entities. It returns the
// ids it deleted and whether any entity appeared.
func (s *Store) reconcileEntities(ctx context.Context, tx *sql.Tx, ch *change, page map[string]bool) ([]string, bool, error) {
	if err := resetTemp(ctx, tx, "touched_entities", "fts_dirty"); err != nil {
		return nil, false, err
	}
	if err := fill(ctx, tx, "touched_entities", page); err != nil {
		return nil, false, err
	}
	existed := map[string]store.Entity{}
	// Every join in reconcile starts from the few touched ids: CROSS JOIN
	// fixes that loop order. Left to itself the planner, which has no
	// statistics on the temp tables, scanned all entities (or relations)
	// per write, which made ingest quadratic in the graph's size.
	rows, err := tx.QueryContext(ctx, `SELECT `+entityColumns+` FROM temp.touched_entities t CROSS JOIN entities e ON e.id = t.id`)
	if err != nil {
		return nil, false, fmt.Errorf("load touched entities: %w", err)
	}
	for rows.Next() {
		e, err := scanEntity(rows)
		if err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("load touched entities: %w", err)
		}
		existed[e.ID] = e
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("load touched entities: %w", err)
	}
	egroups, err := entityGroups(ctx, tx)
	if err != nil {
		return nil, false, err
	}
	var merged []store.Entity
	if len(egroups) > 0 {
		if merged, err = s.merger.MergeEntities(ctx, egroups); err != nil {
			return nil, false, fmt.Errorf("merge %d entities: %w", len(egroups), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	mentions := chunkCounts(egroups)
	egroups = nil
	flipped, kept, dirty := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var upserts []store.Entity
	appeared := false
	for _, e := range merged {
		if !page[e.ID] {
			return nil, false, fmt.Errorf("merger returned entity %s, which no mention names", e.ID)
		}
		e.Mentions = mentions[e.ID]
		kept[e.ID] = true
		old, ok := existed[e.ID]
		switch {
		case !ok:
			flipped[e.ID] = true
			appeared = true
		case sameEntity(old, e):
			continue
		case old.Name == e.Name && old.Description == e.Description:
		default:
			dirty[e.ID] = true
		}
		upserts = append(upserts, e)
		ch.entVecs = append(ch.entVecs, vecUpdate{id: e.ID, vec: ch.keep(e.Embedding)})
	}
	var deleted []string
	for id := range existed {
		if !kept[id] {
			deleted = append(deleted, id)
			flipped[id] = true
			dirty[id] = true
			ch.entVecs = append(ch.entVecs, vecUpdate{id: id})
		}
	}
	// Out of the FTS index go the old texts of changed and deleted rows...
	if err := fill(ctx, tx, "fts_dirty", dirty); err != nil {
		return nil, false, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM entities_fts WHERE rowid IN
		(SELECT e.seq FROM temp.fts_dirty d CROSS JOIN entities e ON e.id = d.id)`); err != nil {
		return nil, false, fmt.Errorf("unindex entities: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM entities WHERE id IN (SELECT value FROM json_each(?))`, jsonList(deleted)); err != nil {
		return nil, false, fmt.Errorf("delete entities: %w", err)
	}
	up := newBatch(ctx, tx, `INSERT INTO entities(id, name, type, description, mentions, embedding)`, 6,
		` ON CONFLICT(id) DO UPDATE SET name = excluded.name, type = excluded.type, description = excluded.description,
			mentions = excluded.mentions, embedding = excluded.embedding`)
	for _, e := range upserts {
		if err := up.add(e.ID, e.Name, e.Type, e.Description, e.Mentions, encodeVector(e.Embedding)); err != nil {
			return nil, false, fmt.Errorf("upsert entities: %w", err)
		}
	}
	if err := up.flush(); err != nil {
		return nil, false, fmt.Errorf("upsert entities: %w", err)
	}
	// ...and in go the new texts of new and changed rows.
	for id := range flipped {
		if kept[id] {
			dirty[id] = true
		}
	}
	if err := fill(ctx, tx, "fts_dirty", dirty); err != nil {
		return nil, false, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO entities_fts(rowid, name, description)
		SELECT e.seq, docgraph_fts(e.name), docgraph_fts(e.description) FROM temp.fts_dirty d CROSS JOIN entities e ON e.id = d.id`); err != nil {
		return nil, false, fmt.Errorf("index entities: %w", err)
	}
	return deleted, appeared, nil
}

// reconcileRelations re-merges one page of touched relations.
func (s *Store) reconcileRelations(ctx context.Context, tx *sql.Tx, ch *change, page map[string]bool) error {
	if err := resetTemp(ctx, tx, "touched_relations"); err != nil {
		return err
	}
	if err := fill(ctx, tx, "touched_relations", page); err != nil {
		return err
	}
	rexisted := map[string]store.Relation{}
	rows, err := tx.QueryContext(ctx, `SELECT `+relationColumns+` FROM temp.touched_relations t CROSS JOIN relations r ON r.id = t.id`)
	if err != nil {
		return fmt.Errorf("load touched relations: %w", err)
	}
	for rows.Next() {
		r, err := scanRelation(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("load touched relations: %w", err)
		}
		rexisted[r.ID] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load touched relations: %w", err)
	}
	allGroups, err := relationGroups(ctx, tx)
	if err != nil {
		return err
	}
	// A relation is stored only while both endpoints exist; all mentions of
	// one relation share its endpoints, so one check per relation suffices.
	endpoints := map[string]bool{}
	for _, g := range allGroups {
		endpoints[g[0].SourceID], endpoints[g[0].TargetID] = false, false
	}
	ids := slices.Collect(maps.Keys(endpoints))
	if err := collect(ctx, tx, endpoints, `SELECT e.id FROM json_each(?) j CROSS JOIN entities e ON e.id = j.value`, jsonList(ids)); err != nil {
		return fmt.Errorf("relation endpoints: %w", err)
	}
	var rgroups [][]store.RelationMention
	var dangling []string
	for _, g := range allGroups {
		if endpoints[g[0].SourceID] && endpoints[g[0].TargetID] {
			rgroups = append(rgroups, g)
		} else {
			dangling = append(dangling, g[0].RelationID)
		}
	}
	allGroups = nil
	if _, err := tx.ExecContext(ctx, `DELETE FROM dangling_relations WHERE id IN (SELECT value FROM json_each(?))`, jsonList(slices.Collect(maps.Keys(page)))); err != nil {
		return fmt.Errorf("dangling relations: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO dangling_relations(id) SELECT value FROM json_each(?)`, jsonList(dangling)); err != nil {
		return fmt.Errorf("dangling relations: %w", err)
	}
	var rmerged []store.Relation
	if len(rgroups) > 0 {
		if rmerged, err = s.merger.MergeRelations(ctx, rgroups); err != nil {
			return fmt.Errorf("merge %d relations: %w", len(rgroups), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rkept := map[string]bool{}
	rup := newBatch(ctx, tx, `INSERT INTO relations(id, source_id, target_id, type, keywords, description, weight, embedding)`, 8,
		` ON CONFLICT(id) DO UPDATE SET source_id = excluded.source_id, target_id = excluded.target_id, type = excluded.type,
			keywords = excluded.keywords, description = excluded.description, weight = excluded.weight, embedding = excluded.embedding`)
	for _, r := range rmerged {
		if !page[r.ID] {
			return fmt.Errorf("merger returned relation %s, which no mention names", r.ID)
		}
		rkept[r.ID] = true
		if old, ok := rexisted[r.ID]; ok && sameRelation(old, r) {
			continue
		}
		if err := rup.add(r.ID, r.SourceID, r.TargetID, r.Type, r.Keywords, r.Description, r.Weight, encodeVector(r.Embedding)); err != nil {
			return fmt.Errorf("upsert relations: %w", err)
		}
		ch.relVecs = append(ch.relVecs, vecUpdate{id: r.ID, vec: ch.keep(r.Embedding)})
	}
	if err := rup.flush(); err != nil {
		return fmt.Errorf("upsert relations: %w", err)
	}
	var rdeleted []string
	for id := range rexisted {
		if !rkept[id] {
			rdeleted = append(rdeleted, id)
			ch.relVecs = append(ch.relVecs, vecUpdate{id: id})
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM relations WHERE id IN (SELECT value FROM json_each(?))`, jsonList(rdeleted)); err != nil {
		return fmt.Errorf("delete relations: %w", err)
	}
	return nil
}

func sameEntity(a, b store.Entity) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Description == b.Description &&
		a.Mentions == b.Mentions && slices.Equal(a.Embedding, b.Embedding)
}

func sameRelation(a, b store.Relation) bool {
	return a.SourceID == b.SourceID && a.TargetID == b.TargetID && a.Type == b.Type && a.Keywords == b.Keywords &&
		a.Description == b.Description && a.Weight == b.Weight && slices.Equal(a.Embedding, b.Embedding)
}

// entityGroups loads all mentions of the touched entities, grouped by entity
// in a fixed order so merges do not depend on insertion history.
func entityGroups(ctx context.Context, tx *sql.Tx) ([][]store.EntityMention, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT m.entity_id, m.chunk_id, m.name, m.type, m.description
		FROM temp.touched_entities t CROSS JOIN entity_mentions m ON m.entity_id = t.id
		ORDER BY m.entity_id, m.chunk_id, m.seq`)
	if err != nil {
		return nil, fmt.Errorf("load entity mentions: %w", err)
	}
	defer rows.Close()
	var groups [][]store.EntityMention
	for rows.Next() {
		var m store.EntityMention
		if err := rows.Scan(&m.EntityID, &m.ChunkID, &m.Name, &m.Type, &m.Description); err != nil {
			return nil, fmt.Errorf("load entity mentions: %w", err)
		}
		if n := len(groups); n == 0 || groups[n-1][0].EntityID != m.EntityID {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load entity mentions: %w", err)
	}
	return groups, nil
}

// relationGroups loads all mentions of the touched relations, grouped by
// relation in a fixed order.
func relationGroups(ctx context.Context, tx *sql.Tx) ([][]store.RelationMention, error) {
	rows, err := tx.QueryContext(ctx, `
		SELECT m.relation_id, m.source_id, m.target_id, m.type, m.chunk_id, m.keywords, m.description, m.weight
		FROM temp.touched_relations t CROSS JOIN relation_mentions m ON m.relation_id = t.id
		ORDER BY m.relation_id, m.chunk_id, m.seq`)
	if err != nil {
		return nil, fmt.Errorf("load relation mentions: %w", err)
	}
	defer rows.Close()
	var groups [][]store.RelationMention
	for rows.Next() {
		var m store.RelationMention
		if err := rows.Scan(&m.RelationID, &m.SourceID, &m.TargetID, &m.Type, &m.ChunkID, &m.Keywords, &m.Description, &m.Weight); err != nil {
			return nil, fmt.Errorf("load relation mentions: %w", err)
		}
		if n := len(groups); n == 0 || groups[n-1][0].RelationID != m.RelationID {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load relation mentions: %w", err)
	}
	return groups, nil
}

// chunkCounts is Entity.Mentions: distinct chunks per entity.
func chunkCounts(groups [][]store.EntityMention) map[string]int {
	out := make(map[string]int, len(groups))
	for _, g := range groups {
		n := 0
		for i, m := range g {
			// Groups are sorted by chunk id, so repeats are adjacent.
			if i == 0 || g[i-1].ChunkID != m.ChunkID {
				n++
			}
		}
		out[g[0].EntityID] = n
	}
	return out
}

// fill adds ids to a temp table.
func fill(ctx context.Context, tx *sql.Tx, table string, ids map[string]bool) error {
	if len(ids) == 0 {
		return nil
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO temp.`+table+`(id) SELECT value FROM json_each(?)`, jsonList(list)); err != nil {
		return fmt.Errorf("fill %s: %w", table, err)
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
