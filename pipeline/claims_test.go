package pipeline_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

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
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	const n = 60
	writeCorpus(t, docs, n)
	copyFile(t, filepath.Join(docs, "doc07.md"), filepath.Join(docs, "doc07b.md"))
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
	sameAsOneIngest(t, dir, docs, db, settings)
}
