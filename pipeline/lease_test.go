package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

type extractionLog struct {
	mu     sync.Mutex
	counts map[string]int             // chunk id -> extractions
	byRun  map[string]map[string]bool // run -> documents (titles) it extracted
}

type loggedExtractor struct {
	ner.Extractor
	log *extractionLog
	run string
}

func (l *loggedExtractor) Extract(ctx context.Context, c ner.Chunk) (*ner.Extraction, error) {
	l.log.mu.Lock()
	l.log.counts[c.ID]++
	if l.log.byRun[l.run] == nil {
		l.log.byRun[l.run] = map[string]bool{}
	}
	l.log.byRun[l.run][c.DocTitle] = true
	l.log.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	return l.Extractor.Extract(ctx, c)
}

// graphDump renders what a store holds as sorted lines, leaving out what
// differs between equal ingests (update times, ids of runs).
func graphDump(t *testing.T, st store.Store) string {
	t.Helper()
	ctx := context.Background()
	docs, err := st.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var lines, chunkIDs []string
	for _, d := range docs {
		lines = append(lines, fmt.Sprintf("doc %s %s %s chunks=%d fp=%s lease=%q err=%q", d.ID, d.Path, d.Status, d.Chunks, d.Fingerprint, d.LeaseOwner, d.Error))
		cs, err := st.DocumentChunks(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			lines = append(lines, fmt.Sprintf("chunk %s %d %d-%d", c.ID, c.Index, c.Start, c.End))
			chunkIDs = append(chunkIDs, c.ID)
		}
	}
	ms, err := st.EntitiesOfChunks(ctx, chunkIDs)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range ms {
		lines = append(lines, "mention "+m.EntityID+" "+m.ChunkID)
		ids[m.EntityID] = true
	}
	var entityIDs []string
	for id := range ids {
		entityIDs = append(entityIDs, id)
	}
	sort.Strings(entityIDs)
	ents, _ := st.Entities(ctx, entityIDs)
	for _, e := range ents {
		lines = append(lines, fmt.Sprintf("entity %s %q %s %d %q", e.ID, e.Name, e.Type, e.Mentions, e.Description))
	}
	rels, _ := st.RelationsOf(ctx, entityIDs, math.MaxInt32)
	for _, r := range rels {
		lines = append(lines, fmt.Sprintf("relation %s %s %s %.4f %q", r.ID, r.SourceID, r.TargetID, r.Weight, r.Description))
	}
	s, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	copies := s.ByStatus[store.StatusDuplicate]
	lines = append(lines, fmt.Sprintf("stats %d %d %d %d %d", s.Documents-copies, s.Chunks, s.Entities, s.Relations, s.Mentions),
		fmt.Sprintf("copies %d", copies))
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestConcurrentIngestsShareTheWork runs two ingests of one folder at once
// on one SQLite store, each with a store handle of its own (as two
// processes have): no document is extracted twice, what one adds the other
// counts as claimed or unchanged, and the store ends as one ingest leaves it.
func TestConcurrentIngestsShareTheWork(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	const n = 40
	writeCorpus(t, docs, n)
	settings := pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8, Concurrency: 3}
	db := filepath.Join(dir, "shared.db")
	log := &extractionLog{counts: map[string]int{}, byRun: map[string]map[string]bool{}}
	var runs [2]*pipeline.Pipeline
	for i := range runs {
		p, _ := newPipeline(t, db, settings)
		p.Extractor = &loggedExtractor{Extractor: p.Extractor, log: log, run: strconv.Itoa(i)}
		runs[i] = p
	}
	sums := ingestTogether(t, runs, docs)
	a, b := sums[0], sums[1]
	t.Logf("run 0: %d added, %d claimed, %d unchanged; run 1: %d added, %d claimed, %d unchanged",
		a.Added, a.Claimed, a.Unchanged, b.Added, b.Claimed, b.Unchanged)
	for id, k := range log.counts {
		if k != 1 {
			t.Errorf("chunk %s extracted %d times", id, k)
		}
	}
	for title := range log.byRun["0"] {
		if log.byRun["1"][title] {
			t.Errorf("document %q extracted by both runs", title)
		}
	}
	if a.Failed+b.Failed != 0 || a.Updated+b.Updated != 0 {
		t.Errorf("failures or updates: %+v / %+v", a, b)
	}
	if a.Added+b.Added != n || a.Claimed+a.Unchanged+b.Claimed+b.Unchanged != n {
		t.Errorf("counts do not add up to %d documents each seen by both runs: %+v / %+v", n, a, b)
	}
	for _, s := range sums {
		if len(s.ClaimedFiles) != s.Claimed {
			t.Errorf("%d claimed, %d listed", s.Claimed, len(s.ClaimedFiles))
		}
		for _, r := range s.ClaimedFiles {
			if !strings.Contains(r.ClaimedBy, "pid ") || r.Loaded && r.DocID == "" {
				t.Errorf("claimed result does not name its holder: %+v", r)
			}
		}
	}

	sameAsOneIngest(t, dir, docs, db, settings)
}

// TestConcurrentIngestsBuildingAhead: with the offline models a run builds
// each document before it claims it. Two such runs over one folder (with
// two files of one content) on one store still write each document once,
// report every file once, and leave the store as one ingest does.
func TestConcurrentIngestsBuildingAhead(t *testing.T) {
	const n = 40
	dir, docs, copies := corpusWithCopy(t, n)
	settings := pipeline.Settings{ChunkTokens: 64, ChunkOverlap: 8, Concurrency: 3}
	db := filepath.Join(dir, "shared.db")
	var runs [2]*pipeline.Pipeline
	for i := range runs {
		runs[i], _ = newPipeline(t, db, settings)
	}
	sums := ingestTogether(t, runs, docs)
	a, b := sums[0], sums[1]
	if a.Failed+b.Failed != 0 || a.Updated+b.Updated != 0 {
		t.Errorf("failures or updates: %+v / %+v", a, b)
	}
	// Each run sees n+1 files; the n contents are added once in all, the
	// copy is a duplicate (or unchanged) wherever it is met.
	for i, s := range sums {
		if seen := s.Added + s.Claimed + s.Unchanged + s.Duplicate; seen != n+1 {
			t.Errorf("run %d reports %d files, want %d: %+v", i, seen, n+1, s)
		}
	}
	if a.Added+b.Added != n {
		t.Errorf("%d documents added by the two runs, want %d", a.Added+b.Added, n)
	}
	sameAsOneIngest(t, dir, docs, db, settings, copies...)
}

// corpusWithCopy writes n notes into dir/docs (dir a new temporary
// folder) and a copy of one of them; copies are the two files of that
// content.
func corpusWithCopy(t *testing.T, n int) (dir, docs string, copies []string) {
	t.Helper()
	dir = t.TempDir()
	docs = filepath.Join(dir, "docs")
	writeCorpus(t, docs, n)
	copies = []string{filepath.Join(docs, "doc07.md"), filepath.Join(docs, "same07.md")}
	copyFile(t, copies[0], copies[1])
	return dir, docs, copies
}

// ingestTogether runs the pipelines' ingests of docs at once.
func ingestTogether(t *testing.T, runs [2]*pipeline.Pipeline, docs string) [2]*pipeline.Summary {
	t.Helper()
	var sums [2]*pipeline.Summary
	var errs [2]error
	var wg sync.WaitGroup
	for i, p := range runs {
		wg.Go(func() { sums[i], errs[i] = p.Ingest(context.Background(), []string{docs}, pipeline.Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	return sums
}

// sameAsOneIngest checks that the store at db holds what one ingest of docs
// into a new store (in dir) leaves. copies are files of one content: which
// of them a run stores depends on which it builds first, so each is read
// as the first.
func sameAsOneIngest(t *testing.T, dir, docs, db string, settings pipeline.Settings, copies ...string) {
	t.Helper()
	ctx := context.Background()
	single, st1 := newPipeline(t, filepath.Join(dir, "single.db"), settings)
	if _, err := single.Ingest(ctx, []string{docs}, pipeline.Options{}); err != nil {
		t.Fatal(err)
	}
	shared, err := store.Open(ctx, "sqlite://"+db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	got, want := withoutCopyRecords(graphDump(t, shared)), withoutCopyRecords(graphDump(t, st1))
	for _, c := range copies[min(1, len(copies)):] {
		got = strings.ReplaceAll(got, " "+c+" ", " "+copies[0]+" ")
		want = strings.ReplaceAll(want, " "+c+" ", " "+copies[0]+" ")
	}
	if got != want {
		t.Errorf("two concurrent ingests differ from one ingest:\n%s", firstDiff(got, want))
	}
}

// withoutCopyRecords drops a graph dump's duplicate rows and their count.
// They are bookkeeping a run may leave out: a copy is recorded only once
// its file is old enough for its key to be trusted, and not by a run that
// found its content claimed by another run.
func withoutCopyRecords(dump string) string {
	lines := strings.Split(dump, "\n")
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 3 && f[0] == "doc" && f[3] == string(store.StatusDuplicate) || len(f) > 0 && f[0] == "copies"
	}), "\n")
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var x, y string
		if i < len(g) {
			x = g[i]
		}
		if i < len(w) {
			y = w[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i, x, y)
		}
	}
	return "(same)"
}

// TestLeaseHeldUntilExpiry: a document another live run holds is left to
// it, named, and untouched; once that lease expires the next run takes
// the document over and builds it.
func TestLeaseHeldUntilExpiry(t *testing.T) {
	ctx := context.Background()
	dir, path, p, st, row := leaseFixture(t)
	other := "build-02.example/4242/1/abc/r1" // a run on another machine
	if _, err := st.Claim(ctx, row, store.Lease{Owner: other, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	r := p.IngestFile(ctx, path)
	if r.Outcome != pipeline.Claimed || r.ClaimedBy != "pid 4242 on build-02.example" || r.Loaded {
		t.Fatalf("a document another run holds: %+v; want claimed by pid 4242 on build-02.example, not read", r)
	}
	if d := docAt(t, st, path); d.LeaseOwner != other || d.Status != store.StatusProcessing {
		t.Fatalf("the holder's row was touched: %+v", d)
	}
	sum, err := p.Ingest(ctx, []string{dir}, pipeline.Options{})
	if err != nil || sum.Claimed != 1 || sum.Added != 0 {
		t.Fatalf("Ingest over a held document: %+v, %v", sum, err)
	}

	// The other run dies without a trace here: its lease runs out.
	if _, err := st.Claim(ctx, row, store.Lease{Owner: other, TTL: 30 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	wantTakenOver(t, p, st, dir, path, "Ingest after the lease expired")
}

// leaseFixture is a folder holding ada.md, a lifecycle pipeline with its
// store, and the row a claim on ada.md's document names.
func leaseFixture(t *testing.T) (dir, path string, p *pipeline.Pipeline, st store.Store, row store.Document) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "ada.md")
	write(t, path, adaText)
	p, st = openLifecyclePipeline(t)
	doc, err := p.Loader.Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	row = store.Document{ID: doc.ID, Path: path, Title: doc.Title, Hash: doc.Hash, Format: doc.Format, Fingerprint: p.Fingerprint}
	return dir, path, p, st, row
}

// wantTakenOver checks that an ingest of dir builds the document at path
// whose lease it took over (what names the situation), and leaves it done
// with no lease.
func wantTakenOver(t *testing.T, p *pipeline.Pipeline, st store.Store, dir, path, what string) {
	t.Helper()
	sum, err := p.Ingest(context.Background(), []string{dir}, pipeline.Options{})
	if err != nil || sum.Added != 1 || sum.Claimed != 0 {
		t.Fatalf("%s: %+v, %v", what, sum, err)
	}
	if d := docAt(t, st, path); d.Status != store.StatusDone || d.LeaseOwner != "" {
		t.Fatalf("after the take-over: %+v", d)
	}
}

// TestLeaseOfGoneProcessIsTakenOver: a run killed on this machine (kill -9)
// leaves live-looking leases; the next run sees the process is gone and
// repairs its documents at once, without waiting for expiry.
func TestLeaseOfGoneProcessIsTakenOver(t *testing.T) {
	ctx := context.Background()
	dir, path, p, st, row := leaseFixture(t)
	// An owner like this process's, but of a process that has exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run a child process:", err)
	}
	probe, _ := newPipeline(t, filepath.Join(t.TempDir(), "probe.db"), pipeline.Settings{})
	probe.IngestFile(ctx, path) // gives probe an owner made in this process
	f := strings.Split(probe.Owner, "/")
	if len(f) != 5 || f[3] == "" {
		t.Skip("this platform cannot tell whether a process is gone:", probe.Owner)
	}
	f[1] = strconv.Itoa(cmd.Process.Pid)
	dead := strings.Join(f, "/")
	if _, err := st.Claim(ctx, row, store.Lease{Owner: dead, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	wantTakenOver(t, p, st, dir, path, "Ingest over a gone process's lease")
}

// TestLeaseRenewedWhileBuilding: a document whose build outlasts the lease
// stays claimed, because the run renews its lease while it works; the
// write ends the lease.
func TestLeaseRenewedWhileBuilding(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ada.md")
	write(t, path, adaText)
	db := filepath.Join(t.TempDir(), "g.db")
	settings := pipeline.Settings{ChunkTokens: 96, ChunkOverlap: 8, Concurrency: 2}
	p, st := newPipeline(t, db, settings)
	// Renewed every second, the lease has two seconds of slack for a
	// loaded machine.
	p.LeaseTTL = 3 * time.Second
	g := gate(p)
	res := make(chan pipeline.FileResult, 1)
	go func() { res <- p.IngestFile(ctx, path) }()
	<-g.entered
	first := docAt(t, st, path).LeaseUntil
	for !time.Now().After(first.Add(100 * time.Millisecond)) {
		time.Sleep(50 * time.Millisecond) // until past the lease the claim took
	}
	if d := docAt(t, st, path); !d.LeaseUntil.After(first) {
		t.Fatalf("the lease was not renewed: %+v", d)
	}

	q, _ := newPipeline(t, db, settings) // another handle, as another process has
	if r := q.IngestFile(ctx, path); r.Outcome != pipeline.Claimed {
		t.Errorf("a second run during a long build: %+v; want claimed", r)
	}
	close(g.release)
	if r := <-res; r.Outcome != pipeline.Added {
		t.Fatalf("the first run: %+v", r)
	}
	if d := docAt(t, st, path); d.Status != store.StatusDone || d.LeaseOwner != "" {
		t.Fatalf("after the write: %+v", d)
	}
	if r := q.IngestFile(ctx, path); r.Outcome != pipeline.Unchanged {
		t.Errorf("the second run after the first wrote: %+v; want unchanged", r)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
