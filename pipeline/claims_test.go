package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
)

// slowClaims is a SQLite store whose claims take a while, as they do when
// they wait for the writer's commit: the documents built meanwhile queue
// up for the claimer. It records the size of every ClaimDocuments batch.
type slowClaims struct {
	*sqlite.Store
	mu      sync.Mutex
	batches []int
}

func (s *slowClaims) ClaimDocuments(ctx context.Context, docs []store.Document, l store.Lease) ([]store.ClaimResult, error) {
	s.mu.Lock()
	s.batches = append(s.batches, len(docs))
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return s.Store.ClaimDocuments(ctx, docs, l)
}

func (s *slowClaims) Claim(ctx context.Context, d store.Document, l store.Lease) (*store.Document, error) {
	s.mu.Lock()
	s.batches = append(s.batches, 1)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return s.Store.Claim(ctx, d, l)
}

// TestClaimsTakenTogether: with the offline models, the documents built
// while the claimer is busy are claimed together in one transaction; each
// is claimed once, a copy of one content in the same batch is still a
// duplicate, and the store ends as one ingest leaves it.
func TestClaimsTakenTogether(t *testing.T) {
	const n = 60
	dir, docs, copies := corpusWithCopy(t, n)
	settings := pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8, Concurrency: 2}
	db := filepath.Join(dir, "batched.db")
	p, st := newPipeline(t, db, settings)
	sq, ok := st.(*sqlite.Store)
	if !ok {
		t.Fatalf("store is %T, want *sqlite.Store", st)
	}
	slow := &slowClaims{Store: sq}
	p.Store = slow
	sum, err := p.Ingest(context.Background(), []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != n || sum.Duplicate != 1 || sum.Failed != 0 {
		t.Errorf("added %d, duplicate %d, failed %d; want %d, 1, 0", sum.Added, sum.Duplicate, sum.Failed, n)
	}
	claimed := 0
	for _, k := range slow.batches {
		claimed += k
	}
	t.Logf("claim batches: %v", slow.batches)
	if claimed < n || claimed > n+1 {
		t.Errorf("%d documents claimed for %d files of %d contents", claimed, n+1, n)
	}
	if slices.Max(slow.batches) < 2 {
		t.Errorf("claim batches %v: the documents waiting were claimed one at a time", slow.batches)
	}
	sameAsOneIngest(t, dir, docs, db, settings, copies...)
}

// countingLoader counts the files loaded.
type countingLoader struct {
	pipeline.Loader
	loads atomic.Int64
}

func (l *countingLoader) Load(ctx context.Context, path string) (*loader.Document, error) {
	l.loads.Add(1)
	return l.Loader.Load(ctx, path)
}

// stalledCopies is a SQLite store whose record of a copy (a duplicate row)
// waits until every file of the run has been loaded, as a write waits
// for the writer's commit of a big group: a worker that recorded the copy
// itself would wait there, and the run would load nothing more.
type stalledCopies struct {
	*sqlite.Store
	loaded  func() bool
	stalled atomic.Bool
}

func (s *stalledCopies) SetStatus(ctx context.Context, d store.Document, status store.Status, reason string) error {
	if status == store.StatusDuplicate {
		deadline := time.Now().Add(30 * time.Second) // a stall, not a slow machine
		for !s.loaded() {
			if time.Now().After(deadline) {
				s.stalled.Store(true)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return s.Store.SetStatus(ctx, d, status, reason)
}

// TestCopiesRecordedBehindTheWorkers: with the offline models, the record
// of a copy of a stored document (a write, which may wait for the writer)
// is left to the claimer, so the worker goes on loading and building.
func TestCopiesRecordedBehindTheWorkers(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	writeCorpus(t, docs, 10)
	settings := pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8, Concurrency: 1}
	db := filepath.Join(dir, "g.db")
	p, st := newPipeline(t, db, settings)
	ctx := context.Background()
	if _, err := p.Ingest(ctx, []string{docs}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		copyFile(t, filepath.Join(docs, "doc03.md"), filepath.Join(docs, fmt.Sprintf("copy%d.md", i)))
	}
	for i := range 20 {
		write(t, filepath.Join(docs, fmt.Sprintf("new%02d.md", i)), fmt.Sprintf("# New %d\n\nGrace Hopper visited Arlington in year %d.\n", i, 1900+i))
	}
	// A file changed just now has no trusted key, and a copy without one
	// is not recorded: age them all.
	old := time.Now().Add(-time.Hour)
	entries, err := os.ReadDir(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Chtimes(filepath.Join(docs, e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	cl := &countingLoader{Loader: p.Loader}
	p.Loader = cl
	stalled := &stalledCopies{Store: st.(*sqlite.Store), loaded: func() bool { return cl.loads.Load() >= 33 }}
	p.Store = stalled
	sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 20 || sum.Duplicate != 3 || sum.Failed != 0 {
		t.Errorf("added %d, duplicate %d, failed %d; want 20, 3, 0", sum.Added, sum.Duplicate, sum.Failed)
	}
	if stalled.stalled.Load() {
		t.Error("recording a copy held up the worker: the run's files were not all loaded while it waited")
	}
	d, err := st.DocumentByPath(ctx, filepath.Join(docs, "copy0.md"))
	if err != nil || d.Status != store.StatusDuplicate {
		t.Errorf("copy's row: %+v, %v; want a duplicate row", d, err)
	}
}
