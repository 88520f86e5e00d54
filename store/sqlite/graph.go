package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"docgraph/store"
)

var _ store.GraphScanner = (*Store)(nil)

// ScanMentions calls fn for every MENTIONED_IN edge into a chunk of a done
// document, each entity-chunk pair once. The scan reads one snapshot, from
// the mentions sidecar when it holds that snapshot's state, else from SQL,
// after which it writes the sidecar for the next process.
func (s *Store) ScanMentions(ctx context.Context, fn func(store.Mention) error) error {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
	}
	defer tx.Rollback()
	if s.mentionsFile == "" {
		return s.scanMentionRows(ctx, tx, fn)
	}
	key, err := readMentionKey(ctx, tx)
	if err != nil {
		return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
	}
	if mf, err := loadMentionFile(s.mentionsFile, s.instance, key); err == nil {
		tx.Rollback() // the file holds the snapshot; let the WAL move on
		s.mentionFileHits.Add(1)
		return mf.scan(ctx, s.path, fn)
	}
	w := newMentionWriter(s.mentionsFile, s.instance)
	err = s.scanMentionRows(ctx, tx, func(m store.Mention) error {
		w.add(m)
		return fn(m)
	})
	if err != nil {
		w.abort() // a partial scan is never written
		return err
	}
	tx.Rollback()
	w.finish(key)
	return nil
}

// scanMentionRows is the SQL scan behind ScanMentions.
func (s *Store) scanMentionRows(ctx context.Context, tx *sql.Tx, fn func(store.Mention) error) error {
	// Rows come document by document (the loop runs over documents, then
	// their mentions through entity_mentions_doc), and a repeated pair can
	// only repeat within its document, so a per-document set removes
	// repeats. SQL's DISTINCT over the whole table cost most of the scan.
	rows, err := tx.QueryContext(ctx, `
		SELECT m.entity_id, m.chunk_id, m.doc_id
		FROM documents d CROSS JOIN entity_mentions m ON m.doc_id = d.id
		WHERE d.status = 'done'`)
	if err != nil {
		return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
	}
	defer rows.Close()
	type pair struct{ entity, chunk string }
	seen := map[pair]bool{}
	doc := ""
	for rows.Next() {
		var m store.Mention
		if err := rows.Scan(&m.EntityID, &m.ChunkID, &m.DocID); err != nil {
			return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
		}
		if m.DocID != doc {
			doc = m.DocID
			clear(seen)
		}
		if k := (pair{m.EntityID, m.ChunkID}); seen[k] {
			continue
		} else {
			seen[k] = true
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
	}
	return nil
}

// GraphVersion is the store's write generation, which every write and
// delete bumps whichever process made it, with the number of done documents,
// which a status change moves. Both are index reads.
func (s *Store) GraphVersion(ctx context.Context) (string, error) {
	var gen, done int64
	err := s.rdb.QueryRowContext(ctx, `SELECT
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'),
		(SELECT count(*) FROM documents WHERE status = 'done')`).Scan(&gen, &done)
	if err != nil {
		return "", fmt.Errorf("sqlite store %s: graph version: %w", s.path, err)
	}
	return strconv.FormatInt(gen, 10) + "/" + strconv.FormatInt(done, 10), nil
}
