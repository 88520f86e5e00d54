package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/docgraph/docgraph/store"
)

var _ store.GraphScanner = (*Store)(nil)

// ScanMentions calls fn for every MENTIONED_IN edge into a chunk of a done
// document, each entity-chunk pair once, from one snapshot.
func (s *Store) ScanMentions(ctx context.Context, fn func(store.Mention) error) error {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `
		SELECT m.entity, c.id, c.doc_id
		FROM documents d CROSS JOIN chunks c ON c.doc_id = d.id CROSS JOIN entity_mentions m ON m.chunk = c.seq
		WHERE d.status = 'done' AND m.n = 0`)
	if err != nil {
		return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m store.Mention
		var e int64
		if err := rows.Scan(&e, &m.ChunkID, &m.DocID); err != nil {
			return fmt.Errorf("sqlite store %s: scan mentions: %w", s.path, err)
		}
		m.EntityID = entityName(e)
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
// delete bumps whichever process made it, with the count of documents
// that entered or left 'done' (meta done_moves, kept by triggers), which a
// status change moves: two key reads. A store whose writer has not yet
// added the triggers counts its done documents instead.
func (s *Store) GraphVersion(ctx context.Context) (string, error) {
	v, err := graphVersion(ctx, s.rdb)
	if err != nil {
		return "", fmt.Errorf("sqlite store %s: graph version: %w", s.path, err)
	}
	return v, nil
}

// graphVersion is GraphVersion as snapshot q sees it.
func graphVersion(ctx context.Context, q querier) (string, error) {
	var gen int64
	var moves sql.NullString
	err := q.QueryRowContext(ctx, `SELECT
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'),
		(SELECT value FROM meta WHERE key = 'done_moves')`).Scan(&gen, &moves)
	if err != nil {
		return "", err
	}
	if moves.Valid {
		return strconv.FormatInt(gen, 10) + "/m" + moves.String, nil
	}
	var done int64
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM documents WHERE status = 'done'`).Scan(&done); err != nil {
		return "", err
	}
	return strconv.FormatInt(gen, 10) + "/" + strconv.FormatInt(done, 10), nil
}
