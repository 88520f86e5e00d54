package retrieve_test

import (
	"context"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/store"
)

// TestPassageSnapshotMatchesStore: every node of the whole-graph snapshot
// is what the store's PassageGraph answers for it (hubs, titles, order),
// at the default hub threshold and at one that makes hubs of most nodes.
func TestPassageSnapshotMatchesStore(t *testing.T) {
	st := corpusStore(t)
	ctx := context.Background()
	for _, maxChunks := range []int{0, 40, 2} {
		c := retrieve.DefaultConfig()
		c.Graph.MaxEntityChunks = maxChunks
		r := retrieve.New(st, embedstore.NewHash(), retrieve.WithConfig(c))
		diff, n, err := retrieve.SnapshotDiffers(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" {
			t.Errorf("max %d: %s", maxChunks, diff)
		}
		if n < 100 {
			t.Errorf("max %d: only %d nodes compared", maxChunks, n)
		}
	}
}

// TestPassageSnapshotAnswersAsStore: a retriever holding the snapshot
// ranks as one reading the store, and after a write it answers from the
// store (seeing the new document) until the new version's snapshot is in.
func TestPassageSnapshotAnswersAsStore(t *testing.T) {
	sq, byDoc := ingest(t, film)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	plain := retrieve.New(sq, embedstore.NewHash())
	snap := retrieve.New(sq, embedstore.NewHash(), retrieve.WithPassageSnapshot())
	retrieve.BuildSnapshotsAlways(snap)
	if err := retrieve.SnapshotReady(ctx, snap); err != nil {
		t.Fatal(err)
	}
	ranked := mixRanking(ctx, t, byDoc)
	for _, q := range []string{filmQuestion, "Who starred in Won In The Clouds?", "Melbourne"} {
		if a, b := ranked(snap, q), ranked(plain, q); a != b {
			t.Errorf("%q: with the snapshot %s, from the store %s", q, a, b)
		}
	}
	// A write moves the version: the snapshot no longer answers.
	doc := store.Document{ID: "late", Path: "/late.md", Title: "Late Arrival"}
	if err := sq.SetStatus(ctx, doc, store.StatusFailed, "x"); err != nil {
		t.Fatal(err)
	}
	if a, b := ranked(snap, filmQuestion), ranked(plain, filmQuestion); a != b {
		t.Errorf("after a change: with the snapshot %s, from the store %s", a, b)
	}
	if err := retrieve.SnapshotReady(ctx, snap); err != nil {
		t.Fatalf("no snapshot of the new version: %v", err)
	}
}

// mixRanking returns a function that retrieves q with r in mix mode and
// describes the passages' ranking.
func mixRanking(ctx context.Context, t *testing.T, byDoc map[string]string) func(r *retrieve.Retriever, q string) string {
	return func(r *retrieve.Retriever, q string) string {
		t.Helper()
		res, err := r.Retrieve(ctx, q, retrieve.ModeMix)
		if err != nil {
			t.Fatal(err)
		}
		return describe(byDoc, docsOf(res.Passages, func(p retrieve.Passage) string { return p.DocID }))
	}
}

// TestPassageSnapshotLeftToCurrentFile: while the store answers its
// passage graph from a current file, a snapshotting retriever builds no
// copy of it, and ranks as one reading the store.
func TestPassageSnapshotLeftToCurrentFile(t *testing.T) {
	sq, byDoc := ingest(t, film)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for !sq.PassageFileCurrent(ctx) {
		select {
		case <-ctx.Done():
			t.Skip("the store wrote no passage graph file (unsupported here)")
		case <-time.After(10 * time.Millisecond):
		}
	}
	plain := retrieve.New(sq, embedstore.NewHash())
	snap := retrieve.New(sq, embedstore.NewHash(), retrieve.WithPassageSnapshot())
	ranked := mixRanking(ctx, t, byDoc)
	for _, q := range []string{filmQuestion, "Who starred in Won In The Clouds?", "Melbourne"} {
		if a, b := ranked(snap, q), ranked(plain, q); a != b {
			t.Errorf("%q: with snapshots asked for %s, from the store %s", q, a, b)
		}
	}
	for {
		held, building := retrieve.SnapshotState(snap)
		if !building {
			if held {
				t.Error("a snapshot was built while the passage graph file was current")
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the snapshotter never finished looking")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
