package sqlite

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/storetest"
)

// The crash test re-executes the test binary as a child that starts a
// replacing WriteDocument and stops inside it; the parent SIGKILLs the child
// there and checks what a reopened store holds.
const (
	crashDirEnv   = "DOCGRAPH_SQLITE_CRASH_DIR"
	crashStageEnv = "DOCGRAPH_SQLITE_CRASH_STAGE"
	crashReady    = "DOCGRAPH-CRASH-READY"
)

func crashDoc(id string, seed uint64) *store.DocumentWrite {
	return synthetic(syntheticSize{docID: id, path: "book.txt", chunks: 120, entities: 1500, relations: 3000, pool: 900, seed: seed, dim: storetest.Dimension})
}

func TestCrashMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	for _, stage := range []string{"entities", "relations"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "g.db")
			s, err := Open(context.Background(), path, storetest.Options())
			if err != nil {
				t.Fatal(err)
			}
			if err := s.WriteDocument(context.Background(), crashDoc("doc-v1", 1)); err != nil {
				t.Fatal(err)
			}
			want, err := s.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			s.Close()

			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashStageEnv+"="+stage)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			ready := false
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if strings.Contains(sc.Text(), crashReady) {
					ready = true
					break
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if !ready {
				t.Fatalf("child never reached the merge: %v", err)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed mid-write: %v", err)
			}

			// The killed transaction had spilled pages into the WAL (far more
			// than the child's small committed meta update).
			if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() < 64*4096 {
				t.Fatalf("WAL after the kill: %v, %v; the test did not crash with uncommitted frames", fi, err)
			}
			checkIntegrity(t, path)
			s, err = Open(context.Background(), path, storetest.Options())
			if err != nil {
				t.Fatalf("reopen after crash: %v", err)
			}
			defer s.Close()
			got, err := s.Stats(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got.Documents != 1 || got.Chunks != want.Chunks || got.Entities != want.Entities || got.Relations != want.Relations || got.Mentions != want.Mentions {
				t.Errorf("after crash Stats = %+v, want the old version's %+v", got, want)
			}
			if d, err := s.Document(context.Background(), "doc-v1"); err != nil || d.Status != store.StatusDone {
				t.Errorf("old version after crash = %+v, %v", d, err)
			}
			if _, err := s.Document(context.Background(), "doc-v2"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("half-written new version visible after crash: %v", err)
			}
			// The recovered store takes the write the crash interrupted.
			w := crashDoc("doc-v2", 2)
			w.Replaces = []string{"doc-v1"}
			if err := s.WriteDocument(context.Background(), w); err != nil {
				t.Fatalf("write after crash: %v", err)
			}
		})
	}
}

// TestCrashChild is the child half of TestCrashMidWrite; it does nothing
// unless run by it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		return // only a child of TestCrashMidWrite has work to do
	}
	opts := storetest.Options()
	opts.Merger = blockingMerger{Merger: opts.Merger, stage: os.Getenv(crashStageEnv)}
	s, err := Open(context.Background(), filepath.Join(dir, "g.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	// A tiny page cache makes the transaction spill pages into the WAL
	// before it commits, so recovery has uncommitted frames to ignore.
	if _, err := s.wdb.Exec(`PRAGMA cache_size = 20`); err != nil {
		t.Fatal(err)
	}
	w := crashDoc("doc-v2", 2)
	w.Replaces = []string{"doc-v1"}
	err = s.WriteDocument(context.Background(), w)
	t.Fatalf("WriteDocument returned (%v); it should have been killed", err)
}

// blockingMerger merges for real, then announces itself and waits to be killed.
type blockingMerger struct {
	store.Merger
	stage string
}

func (m blockingMerger) MergeEntities(ctx context.Context, g [][]store.EntityMention) ([]store.Entity, error) {
	out, err := m.Merger.MergeEntities(ctx, g)
	if m.stage == "entities" {
		block()
	}
	return out, err
}

func (m blockingMerger) MergeRelations(ctx context.Context, g [][]store.RelationMention) ([]store.Relation, error) {
	out, err := m.Merger.MergeRelations(ctx, g)
	if m.stage == "relations" {
		block()
	}
	return out, err
}

func block() {
	os.Stdout.WriteString("\n" + crashReady + "\n")
	time.Sleep(time.Hour) // a sleeping goroutine, so the runtime sees no deadlock
}
