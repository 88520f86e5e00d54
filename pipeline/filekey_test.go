package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"docgraph/pipeline"
)

// setMTime puts a file's modification time in the past, as if it had been
// written a while before the run.
func setMTime(t *testing.T, path string, ago time.Duration) time.Time {
	t.Helper()
	when := time.Now().Add(-ago).Truncate(time.Second)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
	return when
}

func TestUnchangedFilesAreNotRead(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	ada, babbage := filepath.Join(docs, "ada.md"), filepath.Join(docs, "sub", "babbage.md")
	write(t, ada, adaText)
	write(t, babbage, babbageText)
	old := setMTime(t, ada, time.Hour)
	setMTime(t, babbage, time.Hour)
	p, _ := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8})

	run := func(what string, wantRead, wantUnchanged int) *pipeline.Summary {
		t.Helper()
		sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.FilesRead != wantRead || sum.Unchanged != wantUnchanged || sum.Failed != 0 {
			t.Fatalf("%s: read %d files, %d unchanged, %d failed; want %d read, %d unchanged",
				what, sum.FilesRead, sum.Unchanged, sum.Failed, wantRead, wantUnchanged)
		}
		return sum
	}
	run("first run", 2, 0)
	run("re-run over unchanged files", 0, 2)

	// Touched, not changed: read once, found unchanged, then trusted again.
	setMTime(t, ada, 30*time.Minute)
	run("after touch", 1, 2)
	run("after touch, again", 0, 2)

	// Same size, same time, other content, written by rename (a new
	// inode): the key no longer matches, so it is read and updated.
	same := []byte(adaText)
	copy(same[2:], "Eva")
	tmp := ada + ".tmp"
	if err := os.WriteFile(tmp, same, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, ada); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(ada, old, old); err != nil {
		t.Fatal(err)
	}
	sum := run("after replacing by rename", 1, 1)
	if sum.Updated != 1 {
		t.Fatalf("a replaced file should be updated: %+v", sum)
	}

	// A file changed just now is not trusted yet: its key is not stored,
	// so the next run reads it again even though nothing moved.
	write(t, babbage, babbageText+"\nHe also built a calculator.\n")
	run("after a fresh edit", 1, 1)
	run("fresh edit, next run", 1, 2)
}
