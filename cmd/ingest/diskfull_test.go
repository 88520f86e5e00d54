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

	"github.com/docgraph/docgraph/store"
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
