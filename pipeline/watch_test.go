package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// The watch tests use real files, a real SQLite store and real fsnotify
// events. They never assert on time: every wait is for a condition, with a
// deadline generous enough for a loaded two-core machine.
const (
	testDebounce = 100 * time.Millisecond
	waitDeadline = 30 * time.Second
	// moveGrace is the removal grace of the tests of moves: a move is seen
	// as one only when its new name's event comes within it of the old
	// one's, and the events of a loaded machine can lag by far more than
	// half testDebounce.
	moveGrace = 2 * time.Second
)

// watchRig is one running Watch over a temp folder.
type watchRig struct {
	t    *testing.T
	root string
	p    *pipeline.Pipeline
	st   store.Store
	stop chan struct{}
	done chan error

	mu      sync.Mutex
	changes []pipeline.FileResult
	errs    []error
	changed chan struct{}
}

// startWatch writes files (relative path -> text) under a new folder, starts
// watching it and returns once the initial sync is done.
func startWatch(t *testing.T, debounce time.Duration, files map[string]string, opts ...pipeline.WatchOption) *watchRig {
	t.Helper()
	p, st := openLifecyclePipeline(t)
	r := &watchRig{t: t, root: t.TempDir(), p: p, st: st, stop: make(chan struct{}), done: make(chan error, 1), changed: make(chan struct{}, 1)}
	for rel, text := range files {
		r.write(rel, text)
	}
	synced := make(chan *pipeline.Summary, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		r.done <- p.Watch(ctx, []string{r.root}, append([]pipeline.WatchOption{
			pipeline.WithDebounce(debounce),
			pipeline.WithStop(r.stop),
			pipeline.WithOnSynced(func(s *pipeline.Summary) { synced <- s }),
			pipeline.WithOnChange(func(fr pipeline.FileResult) {
				r.mu.Lock()
				r.changes = append(r.changes, fr)
				r.mu.Unlock()
				select {
				case r.changed <- struct{}{}:
				default:
				}
			}),
			pipeline.WithOnError(func(err error) {
				r.mu.Lock()
				r.errs = append(r.errs, err)
				r.mu.Unlock()
			}),
		}, opts...)...)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	select {
	case s := <-synced:
		if s.Failed > 0 {
			t.Fatalf("initial sync failed: %+v", s.Failures)
		}
	case err := <-r.done:
		t.Fatalf("Watch ended before syncing: %v", err)
	case <-time.After(waitDeadline):
		t.Fatal("initial sync did not finish")
	}
	return r
}

func (r *watchRig) path(rel string) string { return filepath.Join(r.root, filepath.FromSlash(rel)) }

func (r *watchRig) write(rel, text string) {
	r.t.Helper()
	write(r.t, r.path(rel), text)
}

func (r *watchRig) rename(from, to string) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		r.t.Fatal(err)
	}
}

// waitChange waits for a change of the path (relative to the root) with the
// outcome, and returns it.
func (r *watchRig) waitChange(rel string, outcome pipeline.Outcome) pipeline.FileResult {
	r.t.Helper()
	path := r.path(rel)
	deadline := time.After(waitDeadline)
	for {
		r.mu.Lock()
		for _, c := range r.changes {
			if c.Path == path && c.Outcome == outcome {
				r.mu.Unlock()
				return c
			}
		}
		r.mu.Unlock()
		select {
		case <-r.changed:
		case err := <-r.done:
			r.t.Fatalf("Watch ended while waiting for %s %s: %v", outcome, rel, err)
		case <-deadline:
			r.t.Fatalf("no %s change for %s; changes so far: %s", outcome, rel, r.describe())
		}
	}
}

// finish stops the watcher (in-flight work completes) and returns every
// change it reported.
func (r *watchRig) finish() []pipeline.FileResult {
	r.t.Helper()
	close(r.stop)
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Fatalf("Watch: %v", err)
		}
		r.done <- nil // for the cleanup
	case <-time.After(waitDeadline):
		r.t.Fatal("Watch did not stop")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, err := range r.errs {
		r.t.Errorf("watch reported: %v", err)
	}
	return append([]pipeline.FileResult(nil), r.changes...)
}

func (r *watchRig) describe() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, c := range r.changes {
		fmt.Fprintf(&b, "\n  %s %s %s", c.Outcome, c.Path, c.Error)
	}
	return b.String()
}

// searchable reports whether a chunk containing the phrase can be found.
func (r *watchRig) searchable(phrase string) bool {
	r.t.Helper()
	hits, err := r.st.SearchChunksText(context.Background(), phrase, 5)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, h := range hits {
		if strings.Contains(h.Text, phrase) {
			return true
		}
	}
	return false
}

// paths lists the stored documents' paths relative to the root, with status.
func (r *watchRig) paths() []string {
	r.t.Helper()
	docs, err := r.st.Documents(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, d := range docs {
		rel, _ := filepath.Rel(r.root, d.Path)
		out = append(out, filepath.ToSlash(rel)+":"+string(d.Status))
	}
	sort.Strings(out)
	return out
}

func (r *watchRig) wantPaths(want ...string) {
	r.t.Helper()
	sort.Strings(want)
	if got := r.paths(); strings.Join(got, ",") != strings.Join(want, ",") {
		r.t.Fatalf("stored documents:\n got %v\nwant %v\nchanges: %s", got, want, r.describe())
	}
}

// count returns how many reported changes concern the path.
func count(changes []pipeline.FileResult, path string) int {
	n := 0
	for _, c := range changes {
		if c.Path == path {
			n++
		}
	}
	return n
}

func TestWatchCreateModifyDelete(t *testing.T) {
	t.Parallel()
	r := startWatch(t, testDebounce, map[string]string{"ada.md": "Ada Lovelace worked with Charles Babbage.\n"})
	r.wantPaths("ada.md:done")

	r.write("hopper.md", "Grace Hopper built the Zeppelinfield compiler at Remington Rand.\n")
	added := r.waitChange("hopper.md", pipeline.Added)
	if added.Chunks == 0 || added.Entities == 0 {
		t.Fatalf("added change should count what it wrote: %+v", added)
	}
	if !r.searchable("Zeppelinfield") {
		t.Fatal("created file is not searchable")
	}

	r.write("hopper.md", "Grace Hopper coined the Quasarbug term at Harvard with Howard Aiken.\n")
	r.waitChange("hopper.md", pipeline.Updated)
	if !r.searchable("Quasarbug") || r.searchable("Zeppelinfield") {
		t.Fatal("after a change, only the new text should be searchable")
	}

	if err := os.Remove(r.path("hopper.md")); err != nil {
		t.Fatal(err)
	}
	del := r.waitChange("hopper.md", pipeline.Deleted)
	if del.Entities == 0 {
		t.Fatalf("deleting the only mention of Howard Aiken should remove entities: %+v", del)
	}
	if ents, _ := r.st.Entities(context.Background(), []string{graphbuild.EntityID("Howard Aiken")}); len(ents) != 0 {
		t.Fatalf("entity of a deleted file survived: %+v", ents)
	}
	r.finish()
	r.wantPaths("ada.md:done")
}

func TestWatchReportsUnsupportedOnce(t *testing.T) {
	t.Parallel()
	r := startWatch(t, testDebounce, nil)
	for i := range 3 {
		r.write("budget.xlsx", fmt.Sprintf("not a spreadsheet really %d", i))
	}
	got := r.waitChange("budget.xlsx", pipeline.Unsupported)
	if !strings.Contains(got.Error, "unsupported file type .xlsx") {
		t.Errorf("reason = %q", got.Error)
	}
	r.write("notes.html", "<html><body><p>Ada Lovelace wrote notes.</p></body></html>")
	r.waitChange("notes.html", pipeline.Added)
	// Names that say nothing: the content decides, once written.
	r.write("page", "<!DOCTYPE html><html><body><p>Grace Hopper saved a page.</p></body></html>")
	r.waitChange("page", pipeline.Added)
	// Overwritten with what is no document: its document goes.
	r.write("page", "\x00\x01 binary now")
	r.waitChange("page", pipeline.Deleted)
	for i := range 3 {
		r.write("photo.bin", fmt.Sprintf("\xff\xd8\xff\xe0 not text %d", i))
	}
	if got := r.waitChange("photo.bin", pipeline.Unsupported); !strings.Contains(got.Error, "unsupported file type .bin") {
		t.Errorf("reason = %q", got.Error)
	}
	r.write("budget.xlsx", "again")
	r.write("photo.bin", "\xff\xd8 again")
	r.write("sentinel.md", "Charles Babbage.\n")
	r.waitChange("sentinel.md", pipeline.Added)
	changes := r.finish()
	for _, f := range []string{"budget.xlsx", "photo.bin"} {
		if n := count(changes, r.path(f)); n != 1 {
			t.Fatalf("an unsupported file should be reported once, got %d for %s:%s", n, f, r.describe())
		}
	}
}

func TestWatchBurstIsOneIngest(t *testing.T) {
	t.Parallel()
	// A longer quiet period than the other tests: the burst below is a tight
	// loop, but a loaded machine may pause it.
	r := startWatch(t, time.Second, nil)
	for i := range 25 {
		r.write("burst.md", fmt.Sprintf("Ada Lovelace revised note %d of the Burstversion%d draft.\n", i, i))
	}
	r.waitChange("burst.md", pipeline.Added)
	if !r.searchable("Burstversion24") {
		t.Fatal("the final content of the burst is not what was stored")
	}
	// Anything still queued for burst.md is due before this later file.
	r.write("sentinel.md", "Charles Babbage.\n")
	r.waitChange("sentinel.md", pipeline.Added)
	changes := r.finish()
	if n := count(changes, r.path("burst.md")); n != 1 {
		t.Fatalf("25 rapid writes should make one ingest, got %d:%s", n, r.describe())
	}
}

func TestWatchAtomicSaves(t *testing.T) {
	t.Parallel()
	r := startWatch(t, testDebounce, map[string]string{
		"a.md": "Ada Lovelace wrote the Alphaoriginal notes.\n",
		"v.md": "Alan Turing wrote the Victororiginal paper.\n",
	}, pipeline.WithRemovalGrace(moveGrace))
	// Save by writing a temp file and renaming it over the original.
	tmp := r.path("a.md.tmp")
	write(t, tmp, "Ada Lovelace wrote the Alphasaved notes.\n")
	r.rename(tmp, r.path("a.md"))
	// Save the way vim does: move the original to a backup, write anew, drop the backup.
	r.rename(r.path("v.md"), r.path("v.md~"))
	r.write("v.md", "Alan Turing wrote the Victorsaved paper.\n")
	if err := os.Remove(r.path("v.md~")); err != nil {
		t.Fatal(err)
	}
	r.waitChange("a.md", pipeline.Updated)
	r.waitChange("v.md", pipeline.Updated)
	r.write("sentinel.md", "Charles Babbage.\n")
	r.waitChange("sentinel.md", pipeline.Added)
	changes := r.finish()
	for _, f := range []string{"a.md", "v.md"} {
		if n := count(changes, r.path(f)); n != 1 {
			t.Errorf("an atomic save of %s should be one re-ingest, got %d:%s", f, n, r.describe())
		}
	}
	if !r.searchable("Alphasaved") || !r.searchable("Victorsaved") || r.searchable("Alphaoriginal") || r.searchable("Victororiginal") {
		t.Fatal("the saved contents should have replaced the originals")
	}
	r.wantPaths("a.md:done", "sentinel.md:done", "v.md:done")
}

func TestWatchMoves(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	r := startWatch(t, testDebounce, map[string]string{
		"a.md":           "Ada Lovelace worked with Charles Babbage on the Analytical Engine.\n",
		"leaving.md":     "Konrad Zuse built the Z3 in Berlin.\n",
		"sub/keep.md":    "Alan Turing worked at Bletchley Park.\n",
		"folder/one.md":  "Grace Hopper worked at Harvard.\n",
		"folder/two.md":  "Howard Aiken designed the Harvard Mark I.\n",
		"gonedir/x.md":   "John von Neumann worked at Princeton.\n",
		"gonedir/y/z.md": "Claude Shannon worked at Bell Labs.\n",
	}, pipeline.WithRemovalGrace(moveGrace))
	ctx := context.Background()
	before, err := r.st.DocumentByPath(ctx, r.path("a.md"))
	if err != nil {
		t.Fatal(err)
	}

	// Rename within the tree: same document, new path, no re-extraction.
	r.rename(r.path("a.md"), r.path("sub/renamed.md"))
	moved := r.waitChange("sub/renamed.md", pipeline.Renamed)
	if moved.DocID != before.ID {
		t.Fatalf("a rename should keep the document id %s: %+v", before.ID, moved)
	}

	// Move a file out of the tree: its document goes.
	r.rename(r.path("leaving.md"), filepath.Join(outside, "leaving.md"))
	r.waitChange("leaving.md", pipeline.Deleted)

	// Rename a folder within the tree: its files keep their documents.
	r.rename(r.path("folder"), r.path("renamedfolder"))
	r.waitChange("renamedfolder/one.md", pipeline.Renamed)
	r.waitChange("renamedfolder/two.md", pipeline.Renamed)

	// Move a folder out: every document under it goes.
	r.rename(r.path("gonedir"), filepath.Join(outside, "gonedir"))
	r.waitChange("gonedir/x.md", pipeline.Deleted)
	r.waitChange("gonedir/y/z.md", pipeline.Deleted)

	// A new subfolder (created with its file at once) and a later file in it.
	r.write("new/deeper/n1.md", "Edsger Dijkstra worked in Eindhoven.\n")
	r.waitChange("new/deeper/n1.md", pipeline.Added)
	r.write("new/deeper/n2.md", "Tony Hoare invented Quicksort.\n")
	r.waitChange("new/deeper/n2.md", pipeline.Added)

	changes := r.finish()
	for _, c := range changes {
		if c.Outcome == pipeline.Added && strings.Contains(c.Path, "folder") {
			t.Errorf("a renamed folder's files must not be re-extracted: %+v", c)
		}
		if c.Outcome == pipeline.Failed {
			t.Errorf("failure: %+v", c)
		}
	}
	r.wantPaths("new/deeper/n1.md:done", "new/deeper/n2.md:done", "renamedfolder/one.md:done",
		"renamedfolder/two.md:done", "sub/keep.md:done", "sub/renamed.md:done")
}

func TestWatchIgnores(t *testing.T) {
	t.Parallel()
	r := startWatch(t, testDebounce, map[string]string{
		pipeline.IgnoreFile:  "drafts/\n*.draft.md\n!keep.draft.md\n/top-only.md\n",
		"a.md":               "Ada Lovelace.\n",
		"drafts/early.md":    "Charles Babbage early draft.\n",
		"old.draft.md":       "Alan Turing draft.\n",
		".hidden/present.md": "Grace Hopper hidden.\n",
	})
	r.wantPaths("a.md:done") // the initial sync honours the rules too

	for _, rel := range []string{
		".hidden.md", "a.md.swp", ".a.md.swp", "a.md~", ".#a.md", "#a.md#", "4913", "notes.md.tmp",
		"drafts/later.md", "new.draft.md", "top-only.md", ".hidden/later.md", "notes.csv",
	} {
		r.write(rel, "Konrad Zuse "+rel+"\n")
	}
	r.write("keep.draft.md", "Howard Aiken kept draft.\n")
	r.write("sub/top-only.md", "Tony Hoare nested.\n")
	r.waitChange("keep.draft.md", pipeline.Added)
	r.waitChange("sub/top-only.md", pipeline.Added)
	r.write("sentinel.md", "Claude Shannon.\n")
	r.waitChange("sentinel.md", pipeline.Added)
	r.wantPaths("a.md:done", "keep.draft.md:done", "sentinel.md:done", "sub/top-only.md:done")

	// Editing the rules re-syncs: newly ignored documents leave, newly
	// included files come in.
	r.write(pipeline.IgnoreFile, "*.draft.md\n!keep.draft.md\nsub/\n")
	r.waitChange("sub/top-only.md", pipeline.Deleted)
	r.waitChange("drafts/early.md", pipeline.Added)
	r.waitChange("drafts/later.md", pipeline.Added)
	r.waitChange("top-only.md", pipeline.Added)
	r.finish()
	r.wantPaths("a.md:done", "drafts/early.md:done", "drafts/later.md:done", "keep.draft.md:done",
		"sentinel.md:done", "top-only.md:done")
}

func TestWatchStopLeavesQueuedPending(t *testing.T) {
	t.Parallel()
	// A debounce far longer than the test: the change is queued, never due.
	r := startWatch(t, time.Hour, nil)
	r.write("queued.md", "Ada Lovelace queued.\n")
	deadline := time.Now().Add(waitDeadline)
	for !strings.Contains(strings.Join(r.paths(), ","), "queued.md:pending") {
		if time.Now().After(deadline) {
			t.Fatalf("a queued change should be recorded as pending: %v", r.paths())
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.finish()
	// The next start resumes it.
	sum, err := r.p.Ingest(context.Background(), nil, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 1 {
		t.Fatalf("the pending document should be resumed: %+v", sum)
	}
	r.wantPaths("queued.md:done")
}

func TestWatchRejectsFiles(t *testing.T) {
	p, _ := openLifecyclePipeline(t)
	f := filepath.Join(t.TempDir(), "a.md")
	write(t, f, "x")
	err := p.Watch(context.Background(), []string{f})
	if err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("watching a file should be refused: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Watch(ctx, []string{t.TempDir()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled Watch should return ctx's error: %v", err)
	}
}

// BenchmarkWatchReaction measures, per change, the time from a file write to
// its new text being searchable in the store, with the offline extractor and
// a short debounce (the debounce is part of what it measures). It reports the
// median as p50-ms.
func BenchmarkWatchReaction(b *testing.B) {
	for _, debounce := range []time.Duration{10 * time.Millisecond, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("debounce=%s", debounce), func(b *testing.B) {
			benchWatchReaction(b, debounce)
		})
	}
}

func benchWatchReaction(b *testing.B, debounce time.Duration) {
	p, st := openLifecyclePipeline(b)
	root := b.TempDir()
	write(b, filepath.Join(root, "seed.md"), "Ada Lovelace worked with Charles Babbage.\n")
	synced := make(chan struct{})
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- p.Watch(context.Background(), []string{root}, pipeline.WithDebounce(debounce),
			pipeline.WithStop(stop), pipeline.WithOnSynced(func(*pipeline.Summary) { close(synced) }))
	}()
	<-synced
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		word := fmt.Sprintf("Reactionword%d", i)
		text := fmt.Sprintf("# Change %d\n\nAda Lovelace and Charles Babbage discussed the %s with Mary Somerville in London.\n", i, word)
		start := time.Now()
		write(b, filepath.Join(root, fmt.Sprintf("doc%d.md", i%5)), text)
		for {
			hits, err := st.SearchChunksText(context.Background(), word, 1)
			if err != nil {
				b.Fatal(err)
			}
			if len(hits) > 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	close(stop)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
