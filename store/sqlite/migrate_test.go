package sqlite_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/ann"
	"github.com/docgraph/docgraph/store/sqlite"

	_ "modernc.org/sqlite"
)

// testdata/schema2-corpus.db.gz is the store docgraph wrote before schema
// version 3 (commit ae7c49d, `ingest testdata/corpus`, offline defaults):
// vectors in the rows, text ids everywhere, fragments as text.

// unpackSchema2 writes the version 2 store into dir and returns its path.
func unpackSchema2(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open("testdata/schema2-corpus.db.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "graph.db")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func offlineOptions() (store.Options, embedstore.Embedder) {
	emb := embedstore.NewHash()
	return store.Options{Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()}, Merger: pipeline.NewMerger(emb)}, emb
}

func exportOf(t *testing.T, st graphbuild.ExportSource) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := graphbuild.WriteJSONL(context.Background(), &b, st, graphbuild.ExportOptions{Mentions: true}); err != nil {
		t.Fatal(err)
	}
	// The fixture was written from another checkout: paths compare from
	// the corpus folder on.
	return corpusPath.ReplaceAllString(b.String(), `"testdata/corpus/`)
}

var corpusPath = regexp.MustCompile(`"[^"]*/testdata/corpus/`)

// TestUpgradeSchema2 opens a store the previous docgraph wrote and checks
// that it is upgraded in place to exactly what this docgraph writes for the
// same files: the same graph, the same searches, its old sidecar caches
// gone, a smaller file, and writes and deletes that keep working.
func TestUpgradeSchema2(t *testing.T) {
	ctx := context.Background()
	old := unpackSchema2(t, t.TempDir())
	for _, suffix := range []string{".vec-entities", ".mentions"} {
		if err := os.WriteFile(old+suffix, []byte("an old cache"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.Stat(old)

	opts, emb := offlineOptions()
	// A reader cannot upgrade, and says how to.
	if _, err := sqlite.Open(ctx, old, store.Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "run ingest on it once") {
		t.Fatalf("read-only open of a version 2 store: %v", err)
	}
	up, err := sqlite.Open(ctx, old, opts)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	defer up.Close()
	for _, suffix := range []string{".vec-entities", ".mentions"} {
		if _, err := os.Stat(old + suffix); err == nil {
			t.Errorf("the old cache %s is still there", suffix)
		}
	}
	if after, _ := os.Stat(old); after.Size() >= before.Size() {
		t.Errorf("the upgraded file has %d bytes, the old one %d", after.Size(), before.Size())
	}

	// The same files ingested by this docgraph, under the same paths.
	t.Chdir("../..")
	fresh, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "graph.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	p, err := pipeline.Offline(pipeline.Settings{}, emb, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ingest(ctx, []string{"testdata/corpus"}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	a, b := exportOf(t, up), exportOf(t, fresh)
	if a != b {
		t.Fatalf("upgraded and fresh stores differ:\n%s", firstDiff(a, b))
	}
	if strings.Count(a, "\n") < 400 {
		t.Fatalf("export has only %d lines", strings.Count(a, "\n"))
	}
	sa, _ := up.Stats(ctx)
	sb, _ := fresh.Stats(ctx)
	if sa.Entities != sb.Entities || sa.Relations != sb.Relations || sa.Mentions != sb.Mentions || sa.Chunks != sb.Chunks {
		t.Errorf("stats: upgraded %+v, fresh %+v", sa, sb)
	}
	q, _ := emb.EmbedQuery(ctx, "Which language did Ken Thompson design at Google?")
	for _, st := range []*sqlite.Store{up, fresh} {
		if rel, err := st.SearchRelations(ctx, q, 5); err != nil || len(rel) != 5 {
			t.Fatalf("SearchRelations: %v, %v", rel, err)
		}
	}
	ra, _ := up.SearchRelations(ctx, q, 5)
	rb, _ := fresh.SearchRelations(ctx, q, 5)
	ta, _ := up.SearchChunksText(ctx, "Unix Bell Labs", 3)
	tb, _ := fresh.SearchChunksText(ctx, "Unix Bell Labs", 3)
	if ids(ra) != ids(rb) || chunkIDs(ta) != chunkIDs(tb) || len(ta) == 0 {
		t.Errorf("searches differ: %s / %s; %s / %s", ids(ra), ids(rb), chunkIDs(ta), chunkIDs(tb))
	}

	// Writes and deletes go on as in a fresh store.
	docs, _ := up.Documents(ctx)
	for _, st := range []*sqlite.Store{up, fresh} {
		if err := st.DeleteDocument(ctx, docs[0].ID); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := exportOf(t, up), exportOf(t, fresh); a != b {
		t.Fatalf("after a delete, upgraded and fresh stores differ:\n%s", firstDiff(a, b))
	}
	checkIntegrity(t, old)
}

// TestUpgradeSchema1 upgrades a store of the first layout (external
// content FTS indexes of the raw text, documents without file keys,
// warnings or leases): CJK text becomes searchable and documents read back.
func TestUpgradeSchema1(t *testing.T) {
	ctx := context.Background()
	path := unpackSchema2(t, t.TempDir())
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE chunks_fts`, `DROP TABLE entities_fts`,
		`CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='chunks', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE entities_fts USING fts5(name, description, content='entities', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2')`,
		`INSERT INTO chunks_fts(chunks_fts) VALUES('rebuild')`, `INSERT INTO entities_fts(entities_fts) VALUES('rebuild')`,
		`ALTER TABLE documents DROP COLUMN lease_owner`, `ALTER TABLE documents DROP COLUMN lease_until`,
		`ALTER TABLE documents DROP COLUMN warnings`, `ALTER TABLE documents DROP COLUMN file_key`,
		`UPDATE meta SET value = '1' WHERE key = 'schema_version'`, `DELETE FROM meta WHERE key = 'fts'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	opts, _ := offlineOptions()
	s, err := sqlite.Open(ctx, path, opts)
	if err != nil {
		t.Fatalf("upgrade a version 1 store: %v", err)
	}
	defer s.Close()
	docs, err := s.Documents(ctx)
	if err != nil || len(docs) != 10 {
		t.Fatalf("documents after the upgrade: %d, %v", len(docs), err)
	}
	if hits, err := s.SearchChunksText(ctx, "Bletchley Park", 3); err != nil || len(hits) == 0 {
		t.Errorf("text search after the upgrade: %v, %v", hits, err)
	}
	if ents, err := s.SearchEntitiesText(ctx, "Turing", 3); err != nil || len(ents) == 0 {
		t.Errorf("entity text search after the upgrade: %v, %v", ents, err)
	}
	checkIntegrity(t, path)
}

func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check: %q, %v", res, err)
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n  " + al[i] + "\n  " + bl[i]
		}
	}
	return "lengths " + strconv.Itoa(len(al)) + " and " + strconv.Itoa(len(bl))
}

func ids(hs []store.RelationHit) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return strings.Join(out, ",")
}

func chunkIDs(hs []store.ChunkHit) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.ID)
	}
	return strings.Join(out, ",")
}

// TestUpgradedStoreSkipsEmptyIndexFile: the upgrade copies vectors that
// the new vector log does not list, so an index file that lacks them (an
// empty one, as a build creates it first) is passed over for an exact
// scan, and searches still find every vector. A search that trusted the
// log found nothing while the file was being built.
func TestUpgradedStoreSkipsEmptyIndexFile(t *testing.T) {
	ctx := context.Background()
	old := unpackSchema2(t, t.TempDir())
	opts, emb := offlineOptions()
	up, err := sqlite.Open(ctx, old, opts)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if err := up.Close(); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"chunks", "entities", "relations"} {
		path := old + ".ann-" + kind
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		w, err := ann.OpenWriter(ctx, path, ann.Options{Dim: emb.Dimension()})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ro := opts
	ro.ReadOnly = true
	r, err := sqlite.Open(ctx, old, ro)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q, _ := emb.EmbedQuery(ctx, "Which language did Ken Thompson design at Google?")
	if rel, err := r.SearchRelations(ctx, q, 5); err != nil || len(rel) != 5 {
		t.Errorf("SearchRelations beside an empty index file: %v, %v", rel, err)
	}
	if ch, err := r.SearchChunks(ctx, q, 3); err != nil || len(ch) != 3 {
		t.Errorf("SearchChunks beside an empty index file: %v, %v", ch, err)
	}
}
