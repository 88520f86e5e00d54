package sqlite

import (
	"context"
	"fmt"
)

// KeepAllTerms makes full-text queries keep the terms most rows hold, as
// FTS5's BM25 ranks with every term: the reference pruning is measured
// against.
func (s *Store) KeepAllTerms(keep bool) { s.allTerms = keep }

// LimitPages caps the database at its current size plus extra pages, so
// that a write needing more fails with SQLITE_FULL as on a full disk.
// A negative extra lifts the cap.
func (s *Store) LimitPages(ctx context.Context, extra int64) error {
	limit := int64(1<<32 - 2)
	if extra >= 0 {
		if err := s.wdb.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&limit); err != nil {
			return err
		}
		limit += extra
	}
	_, err := s.wdb.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, limit))
	return err
}

// PassageFileUse says how many PassageGraph calls the passage graph file
// answered and how many found it missing, stale or damaged.
func (s *Store) PassageFileUse() (answered, declined int64) {
	return s.pg.answered.Load(), s.pg.declined.Load()
}

// WithoutPassageFile makes a reader answer PassageGraph from statements
// only.
func (s *Store) WithoutPassageFile() { s.pg = nil }

// PassageFileBuilds says how many times this writer built the file.
func (s *Store) PassageFileBuilds() int64 { return s.ann.pgBuilds.Load() }
