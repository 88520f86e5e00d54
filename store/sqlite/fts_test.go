package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"docgraph/graphbuild"
	"docgraph/store"
	"docgraph/store/storetest"
)

func ftsDoc(id, text, entity string) *store.DocumentWrite {
	chunk := id + ":0000"
	return &store.DocumentWrite{
		Document: store.Document{ID: id, Path: id + ".md", Title: id, Status: store.StatusDone, Chunks: 1},
		Chunks:   []store.Chunk{{ID: chunk, DocID: id, Text: text, Tokens: 10, End: len(text), Embedding: storetest.Embedder().Vector(text)}},
		Entities: []store.EntityMention{{EntityID: graphbuild.EntityID(entity), ChunkID: chunk, Name: entity, Type: "other", Description: text}},
	}
}

// TestMigrateSchema1 opens a store laid out as schema version 1 (external
// content FTS indexes of the raw text) and checks that it is migrated: CJK
// text becomes searchable, English stays so, and later deletes and writes
// keep the rebuilt index exact.
func TestMigrateSchema1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*store.DocumentWrite{
		ftsDoc("zh", "稻花香2号的亲本为松粳9号。", "稻花香2号"),
		ftsDoc("en", "The Rhine rises in the Swiss Alps.", "Rhine"),
	} {
		if err := s.WriteDocument(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	// Turn it into a version 1 store, as the previous docgraph left them.
	for _, q := range []string{
		`DROP TABLE chunks_fts`, `DROP TABLE entities_fts`,
		`CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE entities_fts USING fts5(name, description, content='entities', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2')`,
		`INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')`, `INSERT INTO entities_fts(entities_fts) VALUES('rebuild')`,
		`UPDATE meta SET value = '1' WHERE key = 'schema_version'`, `DELETE FROM meta WHERE key = 'fts'`,
	} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if hits, _ := s.SearchChunksText(ctx, "稻花香的亲本", 5); len(hits) != 0 {
		t.Fatalf("the version 1 layout already finds Chinese words: %v", hits)
	}
	s.Close()

	s, err = Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatalf("open a version 1 store: %v", err)
	}
	defer s.Close()
	var version, fts string
	s.rdb.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version)
	s.rdb.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'fts'`).Scan(&fts)
	if version != "2" || fts != ftsVersion {
		t.Errorf("after migration schema_version %q, fts %q", version, fts)
	}
	for q, want := range map[string]string{"稻花香的亲本": "zh", "松粳": "zh", "Swiss rising": "en"} {
		hits, err := s.SearchChunksText(ctx, q, 5)
		if err != nil || len(hits) != 1 || hits[0].DocID != want {
			t.Errorf("SearchChunksText(%q) after migration = %v, %v; want document %s", q, hits, err, want)
		}
		ents, err := s.SearchEntitiesText(ctx, q, 5)
		if err != nil || len(ents) != 1 {
			t.Errorf("SearchEntitiesText(%q) after migration = %v, %v", q, ents, err)
		}
	}
	if err := s.DeleteDocument(ctx, "zh"); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteDocument(ctx, ftsDoc("ja", "東京タワーは港区にある。", "東京タワー")); err != nil {
		t.Fatal(err)
	}
	if hits, err := s.SearchChunksText(ctx, "稻花香", 5); err != nil || len(hits) != 0 {
		t.Errorf("deleted document still found: %v, %v", hits, err)
	}
	if hits, err := s.SearchChunksText(ctx, "港区の東京タワー", 5); err != nil || len(hits) != 1 || hits[0].DocID != "ja" {
		t.Errorf("SearchChunksText(港区の東京タワー) = %v, %v", hits, err)
	}
	var bad string
	if err := s.rdb.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&bad); err != nil || bad != "ok" {
		t.Errorf("integrity_check: %q, %v", bad, err)
	}
}

// TestRefuseNewerSchema keeps a store of a later layout from being written
// by this version.
func TestRefuseNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "graph.db")
	s, err := Open(ctx, path, storetest.Options())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.wdb.ExecContext(ctx, `UPDATE meta SET value = '3' WHERE key = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(ctx, path, storetest.Options()); err == nil {
		s.Close()
		t.Fatal("opened a schema version 3 store")
	}
}

func TestFTSQueryCJK(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`Rhine's "mouth" AND`, `"rhine" OR "s" OR "mouth" OR "and"`},
		{"稻花香的亲本", `"稻花" OR "花香" OR "香的" OR "的亲" OR "亲本"`},
		{"Go语言", `"go" OR "语言"`},
		{`*:()`, ``},
	} {
		if got := ftsQuery(c.in); got != c.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
