package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/docgraph/docgraph/internal/clitest"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
)

// writeNotes writes n small distinct documents into dir.
func writeNotes(t *testing.T, dir string, first, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := first; i < first+n; i++ {
		text := fmt.Sprintf("# Note %d\n\nAda Lovelace%d met Charles Babbage%d in London%d. ", i, i, i, i) +
			strings.Repeat(fmt.Sprintf("The Analytical Engine%d was designed in Cambridge%d by Babbage%d. ", i, i, i), 20)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note%03d.md", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiskFullStopsTheRun: a store that can grow no more (SQLITE_FULL,
// here from max_page_count as from a full disk) stops an ingest run with
// one error naming the store and the full disk, rather than failing every
// remaining document in turn; what was committed before stays, and a run
// once there is room goes on from there.
func TestDiskFullStopsTheRun(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeNotes(t, filepath.Join(dir, "a"), 0, 10)
	writeNotes(t, filepath.Join(dir, "b"), 10, 60)
	opts, emb := offlineOptions()
	db := filepath.Join(dir, "graph.db")
	st, err := sqlite.Open(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := pipeline.Offline(pipeline.Settings{}, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := p.Ingest(ctx, []string{filepath.Join(dir, "a")}, pipeline.Options{}); err != nil || sum.Added != 10 {
		t.Fatalf("first run: %+v, %v", sum, err)
	}

	if err := st.LimitPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	sum, err := p.Ingest(ctx, []string{dir}, pipeline.Options{})
	t.Logf("run on a full store: %v", err)
	if sum != nil {
		t.Logf("summary: added %d failed %d; first failure %+v", sum.Added, sum.Failed, sum.Failures[:min(1, len(sum.Failures))])
	}
	if !errors.Is(err, store.ErrDiskFull) || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), db) {
		t.Fatalf("error %v, want one saying the store %s is full", err, db)
	}
	if sum == nil || sum.Failed != 0 || len(sum.Failures) != 0 {
		t.Fatalf("a full disk was reported as document failures: %+v", sum)
	}
	docs, err := st.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, d := range docs {
		switch d.Status {
		case store.StatusDone:
			done++
		case store.StatusFailed:
			t.Errorf("%s recorded as failed: %s", d.Path, d.Error)
		}
	}
	if done < 10 {
		t.Errorf("%d documents done after the full disk, want the 10 written before", done)
	}

	if err := st.LimitPages(ctx, -1); err != nil {
		t.Fatal(err)
	}
	sum, err = p.Ingest(ctx, []string{dir}, pipeline.Options{})
	if err != nil || sum.Failed != 0 || sum.Added+sum.Unchanged != 70 {
		t.Fatalf("the run once there is room: %+v, %v", sum, err)
	}
}

// TestIndexFilesOnFullDisk: a disk that fills while the index files are
// written after the documents (real: a small tmpfs of the test's own) is
// reported by SyncIndexes, which waits for the files, as a full disk
// (store.ErrDiskFull) naming the index file; searches meanwhile answer as
// before (scanning), and once there is room SyncIndexes writes the files.
//
// The database is on the big disk, reached through a link on the small
// one: SQLite keeps its journal beside the file the link names, the index
// files go beside the link.
func TestIndexFilesOnFullDisk(t *testing.T) {
	small := clitest.OnSmallDisk(t, 8<<20)
	if small == "" {
		return // ran in a child with a disk of its own
	}
	ctx := context.Background()
	work := t.TempDir()
	db := filepath.Join(small, "graph.db")
	if err := os.Symlink(filepath.Join(work, "graph.db"), db); err != nil {
		t.Fatal(err)
	}
	writeNotes(t, filepath.Join(work, "a"), 0, 10)
	filler := clitest.FillDisk(t, small)

	opts, emb := offlineOptions()
	st, err := sqlite.Open(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	syncer, ok := any(st).(interface{ SyncIndexes(context.Context) error })
	if !ok {
		t.Fatal("the store has no SyncIndexes: nothing reports a failure to write its index files")
	}
	p, err := pipeline.Offline(pipeline.Settings{}, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := p.Ingest(ctx, []string{filepath.Join(work, "a")}, pipeline.Options{})
	if err != nil || sum.Added != 10 {
		t.Fatalf("ingest: %+v, %v", sum, err)
	}
	q, err := emb.EmbedQuery(ctx, "Ada Lovelace met Charles Babbage")
	if err != nil {
		t.Fatal(err)
	}
	want, err := st.SearchChunks(ctx, q, 5)
	if err != nil || len(want) == 0 {
		t.Fatalf("search on the full disk: %v, %v", want, err)
	}

	err = syncer.SyncIndexes(ctx)
	t.Logf("SyncIndexes on the full disk: %v", err)
	if !errors.Is(err, store.ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), db+".ann-") {
		t.Errorf("SyncIndexes: %v; want a full disk (store.ErrDiskFull, ENOSPC) naming an index file", err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := syncer.SyncIndexes(ctx); err != nil {
		t.Fatalf("SyncIndexes once there is room: %v", err)
	}
	got, err := st.SearchChunks(ctx, q, 5)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("through the index files written once there was room\n%v\nscanning on the full disk\n%v", got, want)
	}
	for _, kind := range []string{"chunks", "entities", "relations"} {
		if _, err := os.Stat(db + ".ann-" + kind); err != nil {
			t.Errorf("index file %s: %v", kind, err)
		}
	}
}
