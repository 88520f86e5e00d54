package pipeline_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
	_ "github.com/docgraph/docgraph/store/sqlite"
)

// openLifecyclePipeline opens a fresh SQLite store (outside any watched
// folder, so its own files make no events) with the offline stages.
func openLifecyclePipeline(t testing.TB) (*pipeline.Pipeline, store.Store) {
	t.Helper()
	s := pipeline.Settings{Store: "sqlite://" + filepath.Join(t.TempDir(), "g.db"), ChunkTokens: 96, ChunkOverlap: 8, Concurrency: 2}
	return offlinePipeline(t, s, embedstore.NewHash(embedstore.WithDimension(64)))
}

// gatedExtractor runs the real extractor, but each call first announces
// itself on entered and waits for release (or ctx), so a test can look at
// the store while a document is in flight.
type gatedExtractor struct {
	ner.Extractor
	entered chan string
	release chan struct{}
}

func (g *gatedExtractor) Extract(ctx context.Context, c ner.Chunk) (*ner.Extraction, error) {
	g.entered <- c.ID
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Extractor.Extract(ctx, c)
}

func gate(p *pipeline.Pipeline) *gatedExtractor {
	inner := p.Extractor
	if old, ok := inner.(*gatedExtractor); ok {
		inner = old.Extractor
	}
	// entered is buffered so that documents of several chunks do not stall
	// on announcements nobody waits for.
	g := &gatedExtractor{Extractor: inner, entered: make(chan string, 64), release: make(chan struct{})}
	p.Extractor = g
	return g
}

func docAt(t *testing.T, st store.Store, path string) *store.Document {
	t.Helper()
	d, err := st.DocumentByPath(context.Background(), path)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestStatusMachine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ada.md")
	write(t, path, "# Ada\n\nAda Lovelace worked with Charles Babbage on the Analytical Engine.\n")
	p, st := openLifecyclePipeline(t)
	g := gate(p)

	// New file: processing while extracting, done after.
	res := make(chan pipeline.FileResult, 1)
	go func() { res <- p.IngestFile(ctx, path) }()
	<-g.entered
	if d := docAt(t, st, path); d == nil || d.Status != store.StatusProcessing {
		t.Fatalf("while extracting, the document should be processing: %+v", d)
	}
	close(g.release)
	if r := <-res; r.Outcome != pipeline.Added {
		t.Fatalf("first ingest: %+v", r)
	}
	first := docAt(t, st, path)
	if first == nil || first.Status != store.StatusDone || first.Chunks == 0 {
		t.Fatalf("after the write the document should be done: %+v", first)
	}

	// Changed file: the old version stays done and searchable until the new one lands.
	g = gate(p)
	write(t, path, "# Ada\n\nAda Lovelace wrote the first published algorithm for the Analytical Engine.\n")
	go func() { res <- p.IngestFile(ctx, path) }()
	<-g.entered
	if d := docAt(t, st, path); d == nil || d.ID != first.ID || d.Status != store.StatusDone {
		t.Fatalf("while re-extracting, the path should still resolve to the done old version: %+v", d)
	}
	rows, _ := st.Documents(ctx)
	if len(rows) != 2 || rows[0].Status == rows[1].Status {
		t.Fatalf("while re-extracting, the new version should have a processing row beside the done one: %+v", rows)
	}
	if hits, _ := st.SearchChunksText(ctx, "Charles Babbage", 3); len(hits) == 0 {
		t.Fatal("the old version must stay queryable while its replacement is built")
	}
	close(g.release)
	if r := <-res; r.Outcome != pipeline.Updated {
		t.Fatalf("update: %+v", r)
	}
	if d := docAt(t, st, path); d == nil || d.ID == first.ID || d.Status != store.StatusDone {
		t.Fatalf("after the update: %+v", d)
	}

	// A file with nothing to index fails with a reason.
	empty := filepath.Join(dir, "empty.txt")
	write(t, empty, "   \n\n")
	if r := p.IngestFile(ctx, empty); r.Outcome != pipeline.Failed {
		t.Fatalf("empty file: %+v", r)
	}
	if d := docAt(t, st, empty); d == nil || d.Status != store.StatusFailed || d.Error == "" {
		t.Fatalf("a failed file should be recorded with its reason: %+v", d)
	}
	docs, _ := st.Documents(ctx)
	if len(docs) != 2 {
		t.Fatalf("want one row per path, got %+v", docs)
	}
}

func TestCancelRollsBack(t *testing.T) {
	dir := t.TempDir()
	fresh, known := filepath.Join(dir, "fresh.md"), filepath.Join(dir, "known.md")
	write(t, fresh, "Grace Hopper built the A-0 System at Remington Rand.\n")
	write(t, known, "Alan Turing worked at Bletchley Park.\n")
	p, st := openLifecyclePipeline(t)
	if r := p.IngestFile(context.Background(), known); r.Outcome != pipeline.Added {
		t.Fatal(r)
	}
	before := docAt(t, st, known)
	write(t, known, "Alan Turing proposed the Turing test in Manchester.\n")

	for _, path := range []string{fresh, known} {
		g := gate(p)
		ctx, cancel := context.WithCancel(context.Background())
		res := make(chan pipeline.FileResult, 1)
		go func() { res <- p.IngestFile(ctx, path) }()
		<-g.entered
		cancel()
		if r := <-res; r.Outcome != pipeline.Failed {
			t.Fatalf("%s: a cancelled ingest cannot succeed: %+v", path, r)
		}
	}
	if d := docAt(t, st, fresh); d != nil {
		t.Fatalf("a cancelled new document must leave no row: %+v", d)
	}
	if d := docAt(t, st, known); d == nil || d.ID != before.ID || d.Status != store.StatusDone {
		t.Fatalf("a cancelled update must leave the old version done: %+v, was %+v", d, before)
	}
}

func TestIngestResumesUnfinished(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	elsewhere := filepath.Join(dir, "elsewhere", "hopper.md") // not among the paths of the run
	write(t, elsewhere, "Grace Hopper popularised the term debugging at Harvard.\n")
	docs := filepath.Join(dir, "docs")
	write(t, filepath.Join(docs, "turing.md"), "Alan Turing worked at Bletchley Park.\n")
	gone := filepath.Join(dir, "gone.md")
	p, st := openLifecyclePipeline(t)

	// What a crash leaves: a bare processing row, a queued row, and one whose file is gone.
	if err := st.SetStatus(ctx, store.Document{ID: "crashed", Path: elsewhere}, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkPending(ctx, filepath.Join(docs, "turing.md")); err != nil {
		t.Fatal(err)
	}
	if err := st.SetStatus(ctx, store.Document{ID: "vanished", Path: gone}, store.StatusProcessing, ""); err != nil {
		t.Fatal(err)
	}
	sum, err := p.Ingest(ctx, []string{docs}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 2 {
		t.Fatalf("the run should add its own file and resume the unfinished one: %+v", sum)
	}
	all, _ := st.Documents(ctx)
	for _, d := range all {
		if d.Status != store.StatusDone {
			t.Errorf("left unfinished: %+v", d)
		}
		if d.Path == gone {
			t.Errorf("the row of a vanished file should be removed: %+v", d)
		}
	}
	if d := docAt(t, st, elsewhere); d == nil || d.Chunks == 0 {
		t.Fatalf("resumed document not stored: %+v", d)
	}
	if len(all) != 2 {
		t.Fatalf("want exactly the two documents, got %d: %+v", len(all), all)
	}
}

func TestIngestStopFinishesInFlight(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.md", "b.md", "c.md", "d.md"} {
		write(t, filepath.Join(dir, name), "Ada Lovelace and "+strings.ToUpper(name[:1])+"lan Turing met in "+name+".\n")
	}
	p, st := openLifecyclePipeline(t)
	p.Concurrency = 1
	g := gate(p)
	stop := make(chan struct{})
	done := make(chan *pipeline.Summary, 1)
	go func() {
		sum, err := p.Ingest(context.Background(), []string{dir}, pipeline.Options{Prune: true, Stop: stop})
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	<-g.entered // the first file is in flight
	close(stop)
	close(g.release)
	var sum *pipeline.Summary
	select {
	case sum = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Ingest did not return after Stop")
	}
	if sum.Added != 1 || sum.Skipped != 3 {
		t.Fatalf("want the in-flight file finished and the rest skipped: %+v", sum)
	}
	all, _ := st.Documents(context.Background())
	if len(all) != 1 || all[0].Status != store.StatusDone {
		t.Fatalf("store after a stopped run: %+v", all)
	}
}

func TestDeletePath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "keep.md"), "Ada Lovelace worked with Charles Babbage.\n")
	write(t, filepath.Join(dir, "old", "a.md"), "Alan Turing worked at Bletchley Park with Gordon Welchman.\n")
	write(t, filepath.Join(dir, "old", "deep", "b.md"), "Gordon Welchman designed the diagonal board.\n")
	p, st := openLifecyclePipeline(t)
	if _, err := p.Ingest(ctx, []string{dir}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	results, err := p.DeletePath(ctx, filepath.Join(dir, "old"), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("a folder delete should remove both documents under it: %+v", results)
	}
	removed := 0
	for _, r := range results {
		removed += r.Entities
	}
	if removed == 0 {
		t.Fatalf("deleting the only mentions of Alan Turing and Gordon Welchman must remove entities: %+v", results)
	}
	all, _ := st.Documents(ctx)
	if len(all) != 1 || !strings.HasSuffix(all[0].Path, "keep.md") {
		t.Fatalf("left: %+v", all)
	}
	if again, err := p.DeletePath(ctx, filepath.Join(dir, "old"), true); err != nil || len(again) != 0 {
		t.Fatalf("deleting again should find nothing: %+v %v", again, err)
	}
}
