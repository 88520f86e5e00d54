package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/pipeline"
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
	// so the next run reads it again even though nothing moved. Its time
	// is set ahead, so that it stays "just now" however slow the runs.
	write(t, babbage, babbageText+"\nHe also built a calculator.\n")
	ahead := time.Now().Add(time.Hour)
	if err := os.Chtimes(babbage, ahead, ahead); err != nil {
		t.Fatal(err)
	}
	run("after a fresh edit", 1, 1)
	run("fresh edit, next run", 1, 2)
}

// Prune deletes only documents under the run's own paths: another
// folder's documents, and a folder that is gone (an unmounted drive), are
// left alone.
func TestPruneStaysUnderTheRunsPaths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(t, filepath.Join(a, "ada.md"), adaText)
	write(t, filepath.Join(b, "babbage.md"), babbageText)
	p, st := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8})
	if _, err := p.Ingest(ctx, []string{a, b}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		t.Helper()
		docs, err := st.Documents(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(docs)
	}
	if err := os.Remove(filepath.Join(b, "babbage.md")); err != nil {
		t.Fatal(err)
	}
	if sum, err := p.Ingest(ctx, []string{a}, pipeline.Options{Prune: true}); err != nil || sum.Deleted != 0 || count() != 2 {
		t.Fatalf("prune of a/ deleted %v (%v); b/'s document must stay", sum, err)
	}
	// b/ itself gone: as if its drive were not mounted.
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	if sum, err := p.Ingest(ctx, []string{a, b}, pipeline.Options{Prune: true}); err != nil || sum.Deleted != 0 || count() != 2 {
		t.Fatalf("prune with b/ missing deleted %d documents (%v)", sum.Deleted, err)
	}
	if err := os.MkdirAll(b, 0o755); err != nil {
		t.Fatal(err)
	}
	if sum, err := p.Ingest(ctx, []string{b}, pipeline.Options{Prune: true}); err != nil || sum.Deleted != 1 || count() != 1 {
		t.Fatalf("prune of b/ after its file went: %+v, %v", sum, err)
	}
}

// A file that failed to load for a reason in its bytes (here: empty) is
// not read again while it stays the same, and is still reported failed;
// once the file is fixed it is read and added.
func TestFilesThatFailedInTheirBytesAreNotReadAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	empty := filepath.Join(docs, "empty.md")
	write(t, empty, "")
	setMTime(t, empty, time.Hour)
	p, st := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8})

	run := func(what string, wantRead, wantFailed, wantAdded int) *pipeline.Summary {
		t.Helper()
		sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.FilesRead != wantRead || sum.Failed != wantFailed || sum.Added != wantAdded {
			t.Fatalf("%s: read %d, failed %d, added %d; want %d, %d, %d (%+v)",
				what, sum.FilesRead, sum.Failed, sum.Added, wantRead, wantFailed, wantAdded, sum.Failures)
		}
		return sum
	}
	run("first run", 1, 1, 0)
	sum := run("re-run", 0, 1, 0)
	if got := sum.Failures[0].Error; !strings.Contains(got, "empty") || !strings.Contains(got, "not read again") {
		t.Errorf("failure of a file not read again = %q; want the stored cause and why it was not read", got)
	}
	d, err := st.DocumentByPath(ctx, empty)
	if err != nil || d.Status != "failed" {
		t.Fatalf("row of the empty file: %+v, %v", d, err)
	}

	write(t, empty, adaText)
	setMTime(t, empty, 30*time.Minute)
	run("after the file is fixed", 1, 0, 1)
}

// A copy of another file is stored once; its row remembers the copy's key,
// so a re-run reads neither file. When the original goes, the copy is read
// again and takes the document over.
func TestCopiesAreNotReadAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	orig, copied := filepath.Join(docs, "a.md"), filepath.Join(docs, "b.md")
	write(t, orig, adaText)
	setMTime(t, orig, time.Hour)
	twin := filepath.Join(dir, "twins")
	for _, name := range []string{"x.md", "y.md", "z.md"} {
		write(t, filepath.Join(twin, name), babbageText)
		setMTime(t, filepath.Join(twin, name), time.Hour)
	}
	p, st := newPipeline(t, filepath.Join(dir, "g.db"), pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8})

	run := func(what string, wantRead, wantAdded, wantDuplicate, wantRenamed int) {
		t.Helper()
		sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if sum.FilesRead != wantRead || sum.Added != wantAdded || sum.Duplicate != wantDuplicate || sum.Renamed != wantRenamed || sum.Failed != 0 {
			t.Fatalf("%s: read %d, added %d, duplicate %d, renamed %d, failed %d; want %d, %d, %d, %d",
				what, sum.FilesRead, sum.Added, sum.Duplicate, sum.Renamed, sum.Failed, wantRead, wantAdded, wantDuplicate, wantRenamed)
		}
	}
	// Copies in one run, built concurrently: one is added, the others are
	// duplicates of it (not built and written again).
	sum, err := p.Ingest(ctx, []string{twin}, pipeline.Options{})
	if err != nil || sum.Added != 1 || sum.Duplicate != 2 {
		t.Fatalf("three identical files in one run: %+v, %v", sum, err)
	}
	run("first run", 1, 1, 0, 0)
	write(t, copied, adaText)
	setMTime(t, copied, time.Hour)
	run("with a copy", 1, 0, 1, 0)
	run("re-run", 0, 0, 1, 0)
	stats, err := st.Stats(ctx)
	if err != nil || stats.ByStatus["done"] != 2 || stats.ByStatus["duplicate"] != 3 {
		t.Fatalf("stats after a copy: %+v, %v", stats, err)
	}

	if err := os.Remove(orig); err != nil {
		t.Fatal(err)
	}
	run("original gone", 1, 0, 0, 1)
	d, err := st.DocumentByPath(ctx, copied)
	if err != nil || d.Status != "done" {
		t.Fatalf("the copy after its original is gone: %+v, %v", d, err)
	}
	run("after the takeover", 0, 0, 0, 0)
}
