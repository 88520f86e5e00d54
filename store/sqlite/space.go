package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/docgraph/docgraph/store"
)

var _ store.SpaceReporter = (*Store)(nil)

// Space says where the store's bytes go: every table and index of the
// database (its pages, from SQLite's dbstat), its free pages, and every
// file of the store (the database, its write-ahead log, the ANN indexes,
// the passage graph file).
func (s *Store) Space(ctx context.Context) ([]store.Space, error) {
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: space: %w", s.path, err)
	}
	defer tx.Rollback()
	kinds := map[string]string{}
	rows, err := tx.QueryContext(ctx, `SELECT name, type FROM sqlite_master`)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: space: %w", s.path, err)
	}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite store %s: space: %w", s.path, err)
		}
		kinds[name] = typ
	}
	rows.Close()
	base := filepath.Base(s.path)
	var out []store.Space
	rows, err = tx.QueryContext(ctx, `SELECT name, sum(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: space: %w", s.path, err)
	}
	for rows.Next() {
		var sp store.Space
		if err := rows.Scan(&sp.Name, &sp.Bytes); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite store %s: space: %w", s.path, err)
		}
		sp.File, sp.Kind = base, kinds[sp.Name]
		switch {
		case strings.HasPrefix(sp.Name, "sqlite_autoindex_"):
			sp.Kind = "index"
		case strings.Contains(sp.Name, "_fts"):
			sp.Kind = "full-text"
		case sp.Kind == "":
			sp.Kind = "table"
		}
		out = append(out, sp)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: space: %w", s.path, err)
	}
	var free, pageSize int64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_size FROM pragma_page_size)`).Scan(&free, &pageSize); err == nil && free > 0 {
		out = append(out, store.Space{Name: "free pages", Kind: "free", File: base, Bytes: free * pageSize})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Bytes > out[j].Bytes || out[i].Bytes == out[j].Bytes && out[i].Name < out[j].Name
	})
	files := []string{s.path, s.path + "-wal", s.path + "-shm"}
	ann, _ := filepath.Glob(s.path + ".ann-*")
	sort.Strings(ann)
	files = append(files, ann...)
	files = append(files, s.path+".pgraph")
	for _, f := range files {
		if info, err := os.Stat(f); err == nil && info.Mode().IsRegular() {
			out = append(out, store.Space{Name: filepath.Base(f), Kind: "file", File: filepath.Base(f), Bytes: info.Size()})
		}
	}
	return out, nil
}
