package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

func ftsDoc(id, text, entity string) *store.DocumentWrite {
	chunk := id + ":0000"
	return &store.DocumentWrite{
		Document: store.Document{ID: id, Path: id + ".md", Title: id, Status: store.StatusDone, Chunks: 1},
		Chunks:   []store.Chunk{{ID: chunk, DocID: id, Text: text, Tokens: 10, End: len(text), Embedding: storetest.Embedder().Vector(text)}},
		Entities: []store.EntityMention{{EntityID: graphbuild.EntityID(entity), ChunkID: chunk, Name: entity, Type: "other", Description: text}},
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
	if _, err := s.wdb.ExecContext(ctx, `UPDATE meta SET value = ? WHERE key = 'schema_version'`, schemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(ctx, path, storetest.Options()); err == nil {
		s.Close()
		t.Fatalf("opened a schema version %d store", schemaVersion+1)
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
