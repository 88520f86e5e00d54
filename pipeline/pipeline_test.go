package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// newPipeline opens a fresh SQLite store in a temp dir with the offline stages.
func newPipeline(t testing.TB, dbPath string, s pipeline.Settings) (*pipeline.Pipeline, store.Store) {
	t.Helper()
	s.Store = "sqlite://" + dbPath
	return offlinePipeline(t, s, embedstore.NewHash(embedstore.WithDimension(64)))
}

// offlinePipeline opens the store s names with the offline stages and emb;
// the store is closed when the test ends.
func offlinePipeline(t testing.TB, s pipeline.Settings, emb embedstore.Embedder) (*pipeline.Pipeline, store.Store) {
	t.Helper()
	st, err := pipeline.OpenStore(context.Background(), s, emb, pipeline.NewMerger(emb))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := pipeline.Offline(s, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	return p, st
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	adaText     = "# Ada Lovelace\n\nAda Lovelace worked with Charles Babbage on the Analytical Engine. She wrote the first program.\n"
	babbageText = "# Charles Babbage\n\nCharles Babbage designed the Difference Engine in London. Ada Lovelace described his Analytical Engine.\n"
)

func TestIngestIsIncrementalAndRepairs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	write(t, filepath.Join(docs, "ada.md"), adaText)
	write(t, filepath.Join(docs, "sub", "babbage.md"), babbageText)
	write(t, filepath.Join(docs, "empty.txt"), "   \n")
	write(t, filepath.Join(docs, "binary.txt"), "abc\x00\x01\x02def")
	write(t, filepath.Join(docs, ".hidden.md"), "# Hidden\n\nNot ingested.")
	write(t, filepath.Join(docs, "notes.csv"), "a,b") // unsupported in a folder: skipped silently
	write(t, filepath.Join(docs, ".docgraphignore"), "drafts/\n*.tmp.md\n")
	write(t, filepath.Join(docs, "drafts", "wip.md"), "# WIP\n\nIgnored by .docgraphignore.")
	write(t, filepath.Join(docs, "x.tmp.md"), "# Tmp\n\nIgnored too.")
	write(t, filepath.Join(docs, "ada.md~"), "editor backup")

	p, st := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8})
	sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 2 || sum.Failed != 2 {
		t.Fatalf("first run: %+v", sum)
	}
	for _, f := range sum.Failures {
		if !strings.Contains(f.Error, f.Path) && !strings.Contains(f.Error, filepath.Base(f.Path)) {
			t.Errorf("failure does not name its file: %+v", f)
		}
	}
	if sum.Totals.Entities == 0 || sum.Totals.Relations == 0 || sum.Totals.Chunks < 2 {
		t.Fatalf("graph not built: %+v", sum.Totals)
	}
	ada := graphbuild.EntityID("Ada Lovelace")
	ents, err := st.Entities(ctx, []string{ada})
	if err != nil || len(ents) != 1 || ents[0].Mentions < 2 {
		t.Fatalf("Ada Lovelace should be one entity mentioned in both documents: %+v, %v", ents, err)
	}

	// Second run: nothing changes, nothing is re-extracted.
	sum2, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Unchanged != 2 || sum2.Added+sum2.Updated != 0 || sum2.ChunksWritten != 0 {
		t.Fatalf("re-run should change nothing: %+v", sum2)
	}

	// Fix the empty file, change Babbage, delete Ada: update, add, prune.
	write(t, filepath.Join(docs, "empty.txt"), "Grace Hopper built the A-0 System compiler.")
	write(t, filepath.Join(docs, "sub", "babbage.md"), "# Charles Babbage\n\nCharles Babbage held the Lucasian Professorship at Cambridge.\n")
	if err := os.Remove(filepath.Join(docs, "ada.md")); err != nil {
		t.Fatal(err)
	}
	sum3, err := p.Ingest(ctx, []string{docs}, pipeline.Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum3.Added != 1 || sum3.Updated != 1 || sum3.Deleted != 1 || sum3.Failed != 1 {
		t.Fatalf("third run: %+v", sum3)
	}
	if ents, _ := st.Entities(ctx, []string{ada}); len(ents) != 0 {
		t.Fatalf("Ada Lovelace is no longer mentioned anywhere but still stored: %+v", ents)
	}
	if _, err := st.DocumentByPath(ctx, filepath.Join(docs, "empty.txt")); err != nil {
		t.Fatalf("repaired file not stored: %v", err)
	}
	hits, err := st.SearchChunksText(ctx, "Lucasian Professorship", 3)
	if err != nil || len(hits) == 0 || !strings.Contains(hits[0].Text, "Lucasian") {
		t.Fatalf("updated text not searchable: %+v %v", hits, err)
	}
	if hits, _ := st.SearchChunksText(ctx, "Difference Engine", 3); len(hits) != 0 {
		t.Fatalf("old version of babbage.md still searchable: %+v", hits)
	}
}

func TestIngestRenameKeepsGraph(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old, moved := filepath.Join(dir, "a", "ada.md"), filepath.Join(dir, "b", "ada.md")
	write(t, old, adaText)
	p, st := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{})
	if _, err := p.Ingest(ctx, []string{dir}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	sum, err := p.Ingest(ctx, []string{dir}, pipeline.Options{Prune: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Renamed != 1 || sum.Added != 0 || sum.Deleted != 0 {
		t.Fatalf("rename: %+v", sum)
	}
	d, err := st.DocumentByPath(ctx, moved)
	if err != nil || d.Status != store.StatusDone {
		t.Fatalf("moved document: %+v %v", d, err)
	}
}

func TestFingerprintChangeReprocesses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "docs", "ada.md"), adaText)
	db := filepath.Join(dir, "g.db")
	p, st := newPipeline(t, db, pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8})
	if _, err := p.Ingest(ctx, []string{filepath.Join(dir, "docs")}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	p2, _ := newPipeline(t, db, pipeline.Settings{ChunkTokens: 32, ChunkOverlap: 4})
	sum, err := p2.Ingest(ctx, []string{filepath.Join(dir, "docs")}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Updated != 1 {
		t.Fatalf("new chunk size must re-process: %+v", sum)
	}
}

func TestApplyConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "docgraph.yaml")
	write(t, cfg, "chunk-tokens: 100\nchunk_overlap: 7\nconcurrency: 3\n")
	var s pipeline.Settings
	cmdLine := func() *pflagSet { return newFlagSet(&s) }
	fs := cmdLine()
	if err := fs.Parse([]string{"--concurrency", "9"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCGRAPH_CHUNK_OVERLAP", "11")
	if err := pipeline.ApplyConfig(fs, cfg, true); err != nil {
		t.Fatal(err)
	}
	if s.ChunkTokens != 100 || s.ChunkOverlap != 11 || s.Concurrency != 9 {
		t.Fatalf("file < env < flag precedence broken: %+v", s)
	}
	if err := pipeline.ApplyConfig(cmdLine(), filepath.Join(dir, "missing.yaml"), true); err == nil {
		t.Fatal("a required config file that is missing must be an error")
	}
	if err := pipeline.ApplyConfig(cmdLine(), filepath.Join(dir, "missing.yaml"), false); err != nil {
		t.Fatalf("optional missing config: %v", err)
	}
	write(t, cfg, "chunk-tokens: lots\n")
	if err := pipeline.ApplyConfig(cmdLine(), cfg, true); err == nil || !strings.Contains(err.Error(), "chunk-tokens") {
		t.Fatalf("bad value must name the key: %v", err)
	}
}
