package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/docgraph/docgraph/internal/clitest"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/ann"
	"github.com/docgraph/docgraph/store/sqlite"
)

// fullDiskStore is a SQLite store on a disk that fills after room
// documents: from then on every write fails with ENOSPC, as the system's
// would. Its scheme is fulldisk://PATH?room=N.
type fullDiskStore struct {
	*sqlite.Store
	path string
	mu   sync.Mutex
	room int
	full bool
}

func init() {
	store.Register(func(ctx context.Context, u *url.URL, opts store.Options) (store.Store, error) {
		s, err := sqlite.Open(ctx, u.Path, opts)
		if err != nil {
			return nil, err
		}
		room, _ := strconv.Atoi(u.Query().Get("room"))
		return &fullDiskStore{Store: s, path: u.Path, room: room}, nil
	}, "fulldisk")
}

// take makes room for n documents, or fails once the disk is full.
func (s *fullDiskStore) take(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full || n > s.room {
		s.full = true
		return &os.PathError{Op: "write", Path: s.path + "-wal", Err: syscall.ENOSPC}
	}
	s.room -= n
	return nil
}

func (s *fullDiskStore) WriteDocument(ctx context.Context, w *store.DocumentWrite) error {
	if err := s.take(1); err != nil {
		return err
	}
	return s.Store.WriteDocument(ctx, w)
}

func (s *fullDiskStore) WriteDocuments(ctx context.Context, ws ...*store.DocumentWrite) error {
	if err := s.take(len(ws)); err != nil {
		return err
	}
	return s.Store.WriteDocuments(ctx, ws...)
}

func (s *fullDiskStore) Claim(ctx context.Context, d store.Document, l store.Lease) (*store.Document, error) {
	if err := s.take(0); err != nil {
		return nil, err
	}
	return s.Store.Claim(ctx, d, l)
}

func (s *fullDiskStore) ClaimDocuments(ctx context.Context, ds []store.Document, l store.Lease) ([]store.ClaimResult, error) {
	if err := s.take(0); err != nil {
		return nil, err
	}
	return s.Store.ClaimDocuments(ctx, ds, l)
}

func (s *fullDiskStore) SetStatus(ctx context.Context, d store.Document, st store.Status, reason string) error {
	if err := s.take(0); err != nil {
		return err
	}
	return s.Store.SetStatus(ctx, d, st, reason)
}

// TestDiskFullIsOneError: a disk that fills mid-run stops the run with one
// error naming the store and the full disk, exit status 1, instead of a
// failure for every remaining document and exit status 2; the documents
// written before stay.
func TestDiskFullIsOneError(t *testing.T) {
	work := t.TempDir()
	corpus(t, work, 60, 7)
	db := filepath.Join(t.TempDir(), "g.db")
	run := func(room int, paths ...string) (string, string, error, string) {
		url := "fulldisk://" + db + "?room=" + strconv.Itoa(room)
		args := append(storeArgs(db), paths...)
		args[1] = url
		out, errOut, err := runCmd(t, args...)
		return out, errOut, err, url
	}
	if _, errOut, err, _ := run(1000, filepath.Join(work, "part0")); err != nil {
		t.Fatalf("first run: %v\n%s", err, errOut)
	}
	before := doneCount(t, db)

	out, errOut, err, url := run(0, work)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if code := exitCode(err); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	// Off a terminal, stderr logs each file on a line ("unchanged PATH",
	// "failed PATH: ..."); the error is the line of its own.
	var errs, failed []string
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		switch {
		case strings.HasPrefix(l, "ingest:"):
			errs = append(errs, l)
		case strings.HasPrefix(l, "failed"):
			failed = append(failed, l)
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "ingest: store "+url+": ") || !strings.Contains(errs[0], "disk full") {
		t.Errorf("errors %q, want one naming the store and the full disk", errs)
	}
	if len(failed) > 0 {
		t.Errorf("%d documents logged as failed, first %q", len(failed), failed[0])
	}
	if !strings.Contains(out, " 0 failed") {
		t.Errorf("the summary reports failed documents:\n%s", out)
	}
	if n := doneCount(t, db); n != before || before != 20 {
		t.Errorf("%d documents done, want the %d (of 20) written before the disk filled", n, before)
	}
}

// TestIndexFilesOnFullDisk: when the disk fills while the index files are
// written after the documents (the vector index files and the passage
// graph file, caches beside the database), the run says so in its summary
// and ends with exit status 1, as for a full disk while writing documents:
// the run is not complete. The documents are all stored, and a run once
// there is room writes the index files and ends with 0.
//
// The disk is real and really full (a small tmpfs of the test's own, see
// clitest.OnSmallDisk). The database lives on the big disk, reached
// through a link on the small one: SQLite keeps its journal beside the
// file the link names, while the index files go beside the link, so the
// documents find room and the index files do not.
func TestIndexFilesOnFullDisk(t *testing.T) {
	small := clitest.OnSmallDisk(t, 8<<20)
	if small == "" {
		return // the test ran in a child with a disk of its own
	}
	work := t.TempDir()
	corpus(t, filepath.Join(work, "docs"), 12, 5)
	db := filepath.Join(small, "g.db")
	if err := os.Symlink(filepath.Join(work, "g.db"), db); err != nil {
		t.Fatal(err)
	}
	filler := clitest.FillDisk(t, small)

	url := "sqlite://" + db
	out, errOut, err := runCmd(t, append(storeArgs(db), filepath.Join(work, "docs"))...)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	if code := exitCode(err); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	var errs []string
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if strings.HasPrefix(l, "ingest:") {
			errs = append(errs, l)
		}
	}
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "ingest: store "+url+": ") || !strings.Contains(errs[0], "index files") || !strings.Contains(errs[0], "disk full") {
		t.Errorf("errors %q, want one naming the store, its index files and the full disk", errs)
	}
	if !strings.Contains(out, "warning: index files not written") || !strings.Contains(out, "no space left on device") {
		t.Errorf("the summary does not say the index files were not written:\n%s", out)
	}
	if n := doneCount(t, db); n != 12 {
		t.Errorf("%d documents done, want all 12", n)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = runCmd(t, append(storeArgs(db), filepath.Join(work, "docs"))...)
	if err != nil || strings.Contains(out, "index files") {
		t.Fatalf("the run once there is room: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, kind := range []string{"chunks", "entities", "relations"} {
		r, err := ann.OpenReader(db + ".ann-" + kind)
		if err != nil {
			t.Fatalf("index file %s after the run with room: %v", kind, err)
		}
		if r.Len() == 0 {
			t.Errorf("index file %s is empty", kind)
		}
		r.Close()
	}
}
