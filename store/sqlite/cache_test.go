package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/store"
)

// TestWriterCacheFollowsTheDatabase: the writer's page cache is the
// database's size, between the bounds, counting the pages still in the
// WAL, and setting it works inside the group's transaction, where the
// writer sets it.
func TestWriterCacheFollowsTheDatabase(t *testing.T) {
	for _, c := range []struct{ size, want int64 }{
		{0, 128 << 20}, {100 << 20, 128 << 20}, {300 << 20, 300 << 20}, {2 << 30, 512 << 20},
	} {
		if got := writerCacheFor(c.size); got != c.want {
			t.Errorf("writerCacheFor(%d) = %d, want %d", c.size, got, c.want)
		}
	}
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "g.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cacheAfterSizing := func() (cache, size int64) {
		t.Helper()
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := s.sizeWriterCache(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&cache); err != nil {
			t.Fatal(err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT p.page_count * s.page_size FROM pragma_page_count() p, pragma_page_size() s`).Scan(&size); err != nil {
			t.Fatal(err)
		}
		return -cache << 10, size
	}
	if cache, _ := cacheAfterSizing(); cache != minWriterCache {
		t.Errorf("a new store's writer cache = %d bytes, want the minimum %d", cache, minWriterCache)
	}
	// With the bounds lowered, the cache is the database's size, which
	// grows with pages committed to the WAL and not yet checkpointed.
	defer func(lo, hi int64) { minWriterCache, maxWriterCache = lo, hi }(minWriterCache, maxWriterCache)
	minWriterCache, maxWriterCache = 4096, 1<<30
	_, before := cacheAfterSizing()
	if _, err := s.wdb.ExecContext(ctx, `CREATE TABLE filler(b BLOB); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 500) INSERT INTO filler SELECT zeroblob(4000) FROM n`); err != nil {
		t.Fatal(err)
	}
	cache, size := cacheAfterSizing()
	if size < before+400*4096 || cache != size {
		t.Errorf("after 2 MB committed to the WAL: cache %d bytes for a database of %d (was %d); want the cache to be the size, grown", cache, size, before)
	}
}
