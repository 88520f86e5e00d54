package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/store"
)

// TestWriterCacheFollowsTheFile: the writer's page cache is the database
// file's size, between 128 and 512 MiB, and setting it works inside the
// group's transaction, where the writer sets it.
func TestWriterCacheFollowsTheFile(t *testing.T) {
	for _, c := range []struct{ size, want int64 }{
		{0, 128 << 20}, {100 << 20, 128 << 20}, {300 << 20, 300 << 20}, {2 << 30, 512 << 20},
	} {
		if got := writerCacheFor(c.size); got != c.want {
			t.Errorf("writerCacheFor(%d) = %d, want %d", c.size, got, c.want)
		}
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s, err := Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A sparse file stands for a big store: the cache follows its size.
	if err := os.Truncate(path, 300<<20); err != nil {
		t.Fatal(err)
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := s.sizeWriterCache(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var kib int64
	if err := tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&kib); err != nil {
		t.Fatal(err)
	}
	if kib != -(300 << 10) {
		t.Errorf("cache_size after sizing for a 300 MiB file = %d, want %d (KiB, negative)", kib, -(300 << 10))
	}
}
