// Package pipeline composes docgraph's ingest stages (Loader, Splitter,
// Extractor, Builder, Embedder, Store) and runs them over files and folders.
package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/splitter"
	"github.com/docgraph/docgraph/store"
)

// Loader reads one file into a document.
type Loader interface {
	Load(ctx context.Context, path string) (*loader.Document, error)
}

// Splitter cuts a document's text into token-bounded chunks.
type Splitter interface {
	Split(docID, text string) []splitter.Chunk
}

// Store is what ingest needs of a backend.
type Store interface {
	store.Writer
	Document(ctx context.Context, id string) (*store.Document, error)
	DocumentByPath(ctx context.Context, path string) (*store.Document, error)
	Documents(ctx context.Context) ([]store.Document, error)
	Stats(ctx context.Context) (*store.Stats, error)
}

// Pipeline is the ingest stages composed in order, like an analyzer in bleve:
// each field is one small stage interface.
type Pipeline struct {
	Loader    Loader
	Splitter  Splitter
	Extractor ner.Extractor
	Embedder  embedstore.Embedder
	Store     Store

	// Concurrency bounds documents in flight and chunk extractions per document.
	Concurrency int
	// Fingerprint names the settings that shape chunks and graph; a stored
	// document with another fingerprint is re-processed even if unchanged.
	Fingerprint string
	// EmbedBatch bounds texts per embedder call.
	EmbedBatch int
	// Progress, when set, hears about each file.
	Progress Progress
	// Batch bounds the groups of documents written in one transaction by
	// Ingest and Watch (zero fields: store.DefaultBatchOptions).
	Batch store.BatchOptions
	// Owner names this run in the leases it takes on documents it builds
	// (see lease.go); empty means one made up from host, pid and a random
	// part on first use. Two runs must never share one.
	Owner string
	// LeaseTTL is how long a claim on a document lasts without renewal
	// (zero: DefaultLeaseTTL); the run renews it every third of that.
	LeaseTTL time.Duration
	// FollowOutsideLinks reads the files that symbolic links inside the
	// folders lead to outside them (Settings.FollowOutsideLinks); off, such
	// links are passed over unread (see scope).
	FollowOutsideLinks bool
	// Stalled, when set, is asked every stallPoll while files are built;
	// an error (an *llm.StallError: the model has answered nothing for the
	// stall window) stops the run: documents in flight are rolled back
	// and Ingest or Watch returns it.
	Stalled func() error
}

// stallPoll is how often a run asks Stalled: a stall window is minutes,
// and a second late costs nothing.
const stallPoll = time.Second

// watchStall stops the run through stop when p.Stalled reports a stall;
// the returned func ends the watch.
func (p *Pipeline) watchStall(ctx context.Context, stop context.CancelCauseFunc) func() {
	if p.Stalled == nil {
		return func() {}
	}
	return every(ctx, stallPoll, func() bool {
		if err := p.Stalled(); err != nil {
			stop(err)
			return false
		}
		return true
	})
}

// Progress receives ingest events; implementations must be safe for concurrent use.
type Progress interface {
	Start(total int)
	File(r FileResult)
}

// settle decides whether a document with id and fingerprint must be built
// for path, which held prev before: not when path already holds it
// (Unchanged), nor when that content is stored under another path, moved
// here (Renamed: the graph is kept, the path changed) or still there
// (Duplicate, with a warning naming it). In the last two cases whatever path
// held before is outdated and deleted. An empty outcome means: build it.
func (p *Pipeline) settle(ctx context.Context, path string, prev *store.Document, id, fingerprint, what string) (Outcome, string, error) {
	if prev != nil && prev.ID == id && prev.Status == store.StatusDone && prev.Fingerprint == fingerprint {
		return Unchanged, "", nil
	}
	if prev != nil && prev.ID == id {
		return "", "", nil
	}
	same, err := p.Store.Document(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", "", fmt.Errorf("%s: read store: %w", path, err)
	}
	if same == nil || same.Status != store.StatusDone || same.Fingerprint != fingerprint || same.Path == path {
		return "", "", nil
	}
	outcome, warning := Duplicate, duplicateWarning(what, same.Path)
	if _, statErr := os.Stat(same.Path); errors.Is(statErr, fs.ErrNotExist) {
		if err := p.Store.RenameDocument(ctx, id, path); err != nil {
			return "", "", fmt.Errorf("%s: rename from %s: %w", path, same.Path, err)
		}
		outcome, warning = Renamed, ""
	}
	if prev != nil {
		if err := p.Store.DeleteDocument(ctx, prev.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", "", fmt.Errorf("%s: delete old version: %w", path, err)
		}
	}
	return outcome, warning, nil
}

// Outcome is what happened to one file.
type Outcome string

// The outcomes of a file.
const (
	// Added is a new document, built and stored.
	Added Outcome = "added"
	// Updated is a stored document whose file changed, built again.
	Updated Outcome = "updated"
	// Unchanged is a stored document whose file is as it was.
	Unchanged Outcome = "unchanged"
	// Renamed is a stored document found under another path.
	Renamed Outcome = "renamed"
	// Duplicate is a file whose content another stored file has.
	Duplicate Outcome = "duplicate"
	// Failed is a file that could not be read or built; Error says why.
	Failed Outcome = "failed"
	// Deleted is a stored document whose file is gone (--prune, watch).
	Deleted Outcome = "deleted"
	// Unsupported is a path inside a folder that is no document docgraph
	// reads (another or no extension, a link to a folder); Error says why.
	Unsupported Outcome = "unsupported"
	// Claimed is a document another run (process or machine) was building
	// when this one came to it: left to that run, ClaimedBy names it.
	Claimed Outcome = "claimed"
)

// FileResult reports one file. Its JSON has every key, empty or not.
type FileResult struct {
	Path      string   `json:"path"`
	DocID     string   `json:"doc_id"`
	Outcome   Outcome  `json:"outcome"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
	Chunks    int      `json:"chunks"`
	Entities  int      `json:"entities"`
	Relations int      `json:"relations"`
	Rejected  int      `json:"rejected_records"`
	// Unusable counts the model's answers for this document that had no
	// record in the extraction format (see ner.Extraction.Unusable).
	Unusable int           `json:"unusable_answers"`
	Merged   int           `json:"entities_merged"`
	Duration time.Duration `json:"duration_ns"`
	// Loaded says the file was read; an unchanged file whose size,
	// modification time and inode match what was stored is not.
	Loaded bool `json:"loaded"`
	// ClaimedBy names the run (pid and host) that held a Claimed document.
	ClaimedBy string `json:"claimed_by"`
	// fatal is a failure that says no write can succeed (store.Fatal):
	// the run stops on it rather than report it as this file's.
	fatal error
}

// MarshalJSON writes no warnings as [] rather than null.
func (r FileResult) MarshalJSON() ([]byte, error) {
	type plain FileResult
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	return json.Marshal(plain(r))
}

// Summary reports a whole run. Its JSON has every key, lists as [] when empty.
type Summary struct {
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Renamed   int `json:"renamed"`
	Duplicate int `json:"duplicate"`
	Failed    int `json:"failed"`
	Deleted   int `json:"deleted"`
	// Claimed counts documents left to another run that was building
	// them (in progress elsewhere); ClaimedFiles lists them.
	Claimed int `json:"claimed"`
	// Skipped counts files not started because the run was stopped.
	Skipped int `json:"skipped"`
	// FilesRead counts files whose content this run read.
	FilesRead int `json:"files_read"`
	// Unsupported counts paths inside the folders that are no documents
	// docgraph reads; UnsupportedFiles lists them with the reason.
	Unsupported int `json:"unsupported"`
	// Warnings counts the warnings of this run's files (repaired text,
	// skipped PDF pages, duplicates, unusable model answers); Warned lists
	// the files that had any.
	Warnings int `json:"warnings"`
	// UnusableAnswers counts the model's answers that had no record in the
	// extraction format, in documents added and failed alike.
	UnusableAnswers int `json:"unusable_answers"`
	// Written counts what this run wrote; Totals what the store holds after it.
	ChunksWritten    int           `json:"chunks_written"`
	EntityMentions   int           `json:"entity_mentions_written"`
	RelationMentions int           `json:"relation_mentions_written"`
	Totals           *store.Stats  `json:"totals"`
	Writes           *WriteSummary `json:"writes"`
	LLM              *ModelStats   `json:"llm"`
	Failures         []FileResult  `json:"failures"`
	Warned           []FileResult  `json:"warned"`
	UnsupportedFiles []FileResult  `json:"unsupported_files"`
	ClaimedFiles     []FileResult  `json:"claimed_files"`
	Duration         time.Duration `json:"duration_ns"`
	// EntitiesMerged counts names entity resolution folded into another
	// name of the same document (graphbuild.Resolve).
	EntitiesMerged int `json:"entities_merged"`
	// IndexError says why the store's index files could not be written
	// after the documents (Conclude); empty when they were.
	IndexError string `json:"index_error,omitempty"`
}

// MarshalJSON writes empty lists as [] rather than null.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	for _, l := range []*[]FileResult{&s.Failures, &s.Warned, &s.UnsupportedFiles, &s.ClaimedFiles} {
		if *l == nil {
			*l = []FileResult{}
		}
	}
	return json.Marshal(plain(s))
}

// WriteSummary says how a run's documents reached the store: grouped by
// its one writer into transactions, and how often a transaction had to be
// tried again because of contention (another process writing the same
// entities, a busy database).
type WriteSummary struct {
	store.BatchStats
	// Retries counts transaction attempts the store repeated after
	// transient failures during the run (zero for a store that does not
	// count them).
	Retries int64 `json:"retries"`
}

// Options for one Ingest run.
type Options struct {
	// Prune deletes stored documents whose files no longer exist, among
	// those under the run's paths (a store may hold other folders' documents,
	// and passages that never were files).
	Prune bool
	// Stop, when closed, keeps the run from starting further files; files
	// in flight finish under ctx. Skipped files and prune are then left out.
	Stop <-chan struct{}
	// within, when set, is where links may lead instead of the run's
	// paths: watch mode ingests its folders' files named one by one.
	within *scope
}

// Ingest loads every supported file under paths and brings the store up to
// date. A failing file is reported and never stops the others; the returned
// error is for failures of the run itself (cancelled, store unusable).
func (p *Pipeline) Ingest(ctx context.Context, paths []string, opts Options) (*Summary, error) {
	start := time.Now()
	sc := opts.within
	if sc == nil {
		sc = newScope(paths, p.FollowOutsideLinks)
	}
	files, walkFailures, err := walk(paths, sc)
	if err != nil {
		return nil, err
	}
	if files, err = p.withUnfinished(ctx, files, sc); err != nil {
		return nil, err
	}
	if p.Progress != nil {
		p.Progress.Start(len(files) + len(walkFailures) - countOutcome(walkFailures, Unsupported))
	}
	sum := &Summary{}
	var mu sync.Mutex
	record := func(r FileResult) {
		mu.Lock()
		defer mu.Unlock()
		switch r.Outcome {
		case Added:
			sum.Added++
		case Updated:
			sum.Updated++
		case Unchanged:
			sum.Unchanged++
		case Renamed:
			sum.Renamed++
		case Duplicate:
			sum.Duplicate++
		case Deleted:
			sum.Deleted++
		case Failed:
			sum.Failed++
			sum.Failures = append(sum.Failures, r)
		case Claimed:
			sum.Claimed++
			sum.ClaimedFiles = append(sum.ClaimedFiles, r)
		case Unsupported:
			sum.Unsupported++
			sum.UnsupportedFiles = append(sum.UnsupportedFiles, r)
			return // not a document: no progress to report
		}
		sum.UnusableAnswers += r.Unusable
		if len(r.Warnings) > 0 {
			sum.Warnings += len(r.Warnings)
			sum.Warned = append(sum.Warned, r)
		}
		if r.Loaded {
			sum.FilesRead++
		}
		if r.Outcome == Added || r.Outcome == Updated {
			sum.ChunksWritten += r.Chunks
			sum.EntityMentions += r.Entities
			sum.RelationMentions += r.Relations
			sum.EntitiesMerged += r.Merged
		}
		if p.Progress != nil {
			p.Progress.File(r)
		}
	}
	for _, f := range walkFailures {
		record(f)
	}

	skipped, writes, err := p.ingestFiles(ctx, files, opts.Stop, record)
	sum.Skipped, sum.Writes = skipped, writes
	if err != nil {
		sum.Duration = time.Since(start)
		if _, ok := errors.AsType[*ner.UnusableAnswersError](err); ok {
			return sum, err // says all; documents in flight were rolled back
		}
		if _, ok := errors.AsType[*llm.StallError](err); ok {
			return sum, err
		}
		if store.DiskFull(err) {
			return sum, fmt.Errorf("ingest stopped, disk full: what was written before stays, and a run once there is room goes on from there: %w", err)
		}
		return sum, fmt.Errorf("ingest interrupted: %w", err)
	}
	if opts.Prune && sum.Skipped == 0 && !stopped(opts.Stop) {
		if err := p.prune(ctx, paths, sc, record); err != nil {
			return sum, err
		}
	}
	for _, l := range [][]FileResult{sum.Failures, sum.Warned, sum.ClaimedFiles} {
		sort.Slice(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	}
	if writes != nil && writes.Documents > 0 {
		// A large document's extraction and write leave the heap's peak
		// mapped as garbage the collector has not handed back; hand it back
		// before the counts below map index pages of the store, so the two
		// never add up (a 64 MB text: ~190 MB over its write's peak).
		debug.FreeOSMemory()
	}
	if st, err := p.Store.Stats(ctx); err == nil {
		sum.Totals = st
	}
	sum.Duration = time.Since(start)
	return sum, nil
}

// ingestFiles brings files up to date and reports each to record (which
// must be safe for concurrent use). Files are built concurrently; their
// writes go to one writer that groups them into transactions. Once stop is
// closed no further file is started (skipped counts them); files under way
// finish. The error is ctx's, or the store's when it became unreachable or
// full (store.Fatal): the files then under way are rolled back and not
// reported.
func (p *Pipeline) ingestFiles(ctx context.Context, files []string, stop <-chan struct{}, record func(FileResult)) (skipped int, writes *WriteSummary, err error) {
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	defer p.heartbeat(runCtx)()
	defer p.watchStall(runCtx, stopRun)()
	w := p.newWriter()
	var skips atomic.Int64
	// halted: a file not yet started (or built ahead and not yet claimed)
	// is left, counted as skipped.
	halted := func() bool { return stopped(stop) || runCtx.Err() != nil }
	ahead := p.buildsAhead()
	// The queue's bound is room's (rows); its channel only must not bind first.
	claims := make(chan builtAhead, 16384)
	room := semaphore.NewWeighted(aheadRows)
	claimed := make(chan struct{})
	go func() {
		defer close(claimed)
		batch := make([]builtAhead, 0, claimBatch)
		for b := range claims {
			batch = waitingToo(claims, append(batch[:0], b))
			var rows int64
			for _, b := range batch {
				rows += b.rows
			}
			if halted() {
				// Built ahead but never claimed: as far as the store
				// knows, not started; a graceful stop finishes only the
				// documents it has claimed.
				skips.Add(int64(len(batch)))
			} else {
				p.claimAhead(runCtx, batch, w, stopRun)
			}
			room.Release(rows)
		}
	}()
	var g errgroup.Group
	g.SetLimit(p.concurrency())
	for _, path := range files {
		g.Go(func() error {
			if halted() {
				skips.Add(1)
				return nil
			}
			start := time.Now()
			finish := func(r FileResult) {
				r.Duration = time.Since(start)
				if runCtx.Err() != nil && r.Outcome == Failed {
					return // rolled back by the interruption, not a failure of its own
				}
				record(r)
			}
			if !ahead {
				r, pw := p.prepare(runCtx, path)
				w.submit(runCtx, r, pw, finish, stopRun)
				return nil
			}
			r, st := p.stage(runCtx, path)
			if st == nil {
				w.submit(runCtx, r, nil, finish, stopRun)
				return nil
			}
			b := builtAhead{st: st, finish: finish, rows: 1}
			if st.outcome == "" {
				b.w, b.stats, b.err = p.BuildCounted(runCtx, st.doc)
				if b.w != nil {
					b.rows = min(aheadRows, int64(b.w.Rows()))
				}
			}
			// The claims never stop taking documents, so this ends.
			_ = room.Acquire(context.Background(), b.rows)
			claims <- b
			return nil
		})
	}
	g.Wait()
	close(claims)
	<-claimed
	writes = w.close()
	if runCtx.Err() != nil {
		return int(skips.Load()), writes, context.Cause(runCtx)
	}
	return int(skips.Load()), writes, nil
}

// A run with models that build a document in milliseconds (the offline
// extractor and the hashing embedder) builds each document before claiming
// it, and leaves the claims to one goroutine: a claim is a write
// transaction, which waits while the writer commits a group (a second at
// x1, several at x4), and the workers would wait with it, leaving a core
// idle. That goroutine claims the documents waiting for it in one
// transaction (claimBatch), so a run commits a claim per group rather
// than per document. A build whose claim is refused (another run's
// document, or a copy of one this run is building) is thrown away; with a
// model, whose calls cost time and money, a document is claimed before it
// is built.

// aheadRows bounds the rows (chunks, entities, relations) of the documents
// built and waiting for their claims: the workers keep going through a
// group's commit (a few seconds of work), and a folder of big documents
// does not fill memory.
const aheadRows = 250_000

// claimBatch bounds the documents claimed in one transaction: the claims
// waiting when the claimer comes round (after a group's commit, hundreds)
// are taken together, one commit instead of one each.
const claimBatch = 256

// waitingToo appends to batch the documents waiting in claims, up to
// claimBatch in all, without waiting for more.
func waitingToo(claims <-chan builtAhead, batch []builtAhead) []builtAhead {
	for len(batch) < claimBatch {
		select {
		case b, ok := <-claims:
			if !ok {
				return batch
			}
			batch = append(batch, b)
		default:
			return batch
		}
	}
	return batch
}

// claimAhead claims the documents of batch, built ahead, in one transaction
// and hands each to w; a file settled without a build gets its record here.
func (p *Pipeline) claimAhead(ctx context.Context, batch []builtAhead, w *writer, stopRun context.CancelCauseFunc) {
	var sts []*staged
	for _, b := range batch {
		if b.st.outcome == "" {
			sts = append(sts, b.st)
		}
	}
	results, flights := p.claimStaged(ctx, sts...)
	k := 0
	for _, b := range batch {
		var r FileResult
		var pw *pendingWrite
		if b.st.outcome != "" {
			r = p.settled(ctx, b.st, b.st.outcome, b.st.warning)
		} else {
			r = results[k]
			if flights[k] != nil {
				r, pw = p.built(ctx, b.st, flights[k], b.w, b.stats, b.err)
			}
			k++
		}
		w.submit(ctx, r, pw, b.finish, stopRun)
	}
}

// builtAhead is a document built before its claim, or a file settled
// without a build (st.outcome) whose bookkeeping the claimer writes.
type builtAhead struct {
	st     *staged
	w      *store.DocumentWrite
	stats  BuildStats
	err    error
	rows   int64 // its weight in aheadRows
	finish func(FileResult)
}

// buildsAhead reports whether p's models build a document in milliseconds,
// so that building before the claim costs little when the claim is refused.
func (p *Pipeline) buildsAhead() bool {
	_, offline := p.Extractor.(*ner.Offline)
	_, hashed := p.Embedder.(*embedstore.Hash)
	return offline && hashed
}

// writer is one run's write stage: the Batcher over the store and the
// store's retry count when the run began.
type writer struct {
	p       *Pipeline
	batcher *store.Batcher
	retries int64
}

func (p *Pipeline) newWriter() *writer {
	opts := p.Batch
	if opts.BulkGap == 0 {
		// A run closes its writer after its last file, which writes what
		// is queued: its groups need not end at a pause in the stream (a
		// loaded machine pauses often), only at their size or BulkDelay.
		opts.BulkGap = runBulkGap
	}
	return &writer{p: p, batcher: store.NewBatcher(p.Store, opts), retries: storeRetries(p.Store)}
}

// runBulkGap is the pause in a run's stream of documents after which its
// writer stops waiting for a bigger group.
const runBulkGap = 10 * time.Second

// submit queues pw's write, which finish then hears about; with no write
// (pw nil) finish hears r at once. A fatal failure stops the run.
func (w *writer) submit(ctx context.Context, r FileResult, pw *pendingWrite, finish func(FileResult), stopRun context.CancelCauseFunc) {
	if pw == nil {
		if r.fatal != nil {
			stopRun(r.fatal) // before finish, which then leaves r out
		}
		finish(r)
		return
	}
	err := w.batcher.Submit(ctx, pw.w, func(err error) {
		if store.Fatal(err) {
			stopRun(err)
		}
		finish(pw.finish(ctx, err))
	})
	if err != nil {
		finish(pw.finish(ctx, err))
	}
}

// close writes what is queued and says what the run's writes took.
func (w *writer) close() *WriteSummary {
	w.batcher.Close()
	return &WriteSummary{BatchStats: w.batcher.Stats(), Retries: storeRetries(w.p.Store) - w.retries}
}

func storeRetries(st Store) int64 {
	if c, ok := st.(store.WriteCounter); ok {
		return c.WriteStats().Retries
	}
	return 0
}

// IngestFile brings one file's document up to date and says what it did.
// It writes the document in a transaction of its own; Ingest and Watch
// group the writes of many files.
func (p *Pipeline) IngestFile(ctx context.Context, path string) FileResult {
	start := time.Now()
	defer p.heartbeat(ctx)()
	r, pw := p.prepare(ctx, path)
	if pw != nil {
		r = pw.finish(ctx, p.Store.WriteDocument(ctx, pw.w))
	}
	r.Duration = time.Since(start)
	return r
}

// pendingWrite is a built document on its way to the store.
type pendingWrite struct {
	w      *store.DocumentWrite
	flight *inflight
	prev   *store.Document
	res    FileResult
	stats  BuildStats
}

// finish settles a document once its write is over: committed (err nil),
// or failed or rolled back, which end records.
func (pw *pendingWrite) finish(ctx context.Context, err error) FileResult {
	res := pw.res
	if err != nil {
		pw.flight.end(ctx, err)
		res.Outcome, res.Error = Failed, fmt.Sprintf("%s: write: %v", res.Path, err)
		return res
	}
	w := pw.w
	res.Chunks, res.Entities, res.Relations, res.Rejected, res.Merged = len(w.Chunks), len(w.Entities), len(w.Relations), pw.stats.Rejected, pw.stats.Merged
	res.Unusable = pw.stats.Unusable
	res.Outcome = Added
	if pw.prev != nil && pw.prev.Status == store.StatusDone {
		res.Outcome = Updated
	}
	return res
}

// prepare does everything for one file up to its write: the result when
// nothing is to be written (unchanged, renamed, failed), else the write.
func (p *Pipeline) prepare(ctx context.Context, path string) (FileResult, *pendingWrite) {
	r, st := p.stage(ctx, path)
	if st == nil {
		return r, nil
	}
	if st.outcome != "" {
		return p.settled(ctx, st, st.outcome, st.warning), nil
	}
	rs, flights := p.claimStaged(ctx, st)
	if flights[0] == nil {
		return rs[0], nil
	}
	w, stats, err := p.BuildCounted(ctx, st.doc)
	return p.built(ctx, st, flights[0], w, stats, err)
}

// staged is a file read and settled up to its claim.
type staged struct {
	path string
	prev *store.Document // the path's stored row, nil if none
	doc  *loader.Document
	key  string // the file's key, when it can be trusted (trustedKey)
	res  FileResult
	// outcome, when set, settles the file without a build (unchanged,
	// renamed, a copy of a stored document) and warning goes with it.
	outcome Outcome
	warning string
}

// fail is the result of st failing with err.
func (st *staged) fail(err error) FileResult { return failed(st.res, err) }

// failed is res failed with err.
func failed(res FileResult, err error) FileResult {
	res.Outcome, res.Error = Failed, err.Error()
	if _, ok := errors.AsType[*ner.UnusableAnswersError](err); ok || store.Fatal(err) {
		res.fatal = err
	}
	return res
}

// stage does prepare's part before the claim: the file's result when
// nothing is to be built or recorded (st nil), else the file loaded and
// settled. A file settled without a build (st.outcome) still has its
// bookkeeping to write (Pipeline.settled): that is left to the caller, so
// a worker building ahead never waits for the store's write lock.
func (p *Pipeline) stage(ctx context.Context, path string) (FileResult, *staged) {
	st := &staged{path: path, res: FileResult{Path: path}}
	res := &st.res
	prev, err := p.Store.DocumentByPath(ctx, path)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return st.fail(fmt.Errorf("%s: read store: %w", path, err)), nil
	}
	st.prev = prev
	// A done document whose file has the key it was read with is skipped
	// unread: a re-run over an unchanged folder opens no file.
	before, _ := os.Stat(path)
	// known is the file's key when it may be compared with prev's: "" for
	// no stored key or no regular file, which never matches.
	var known string
	if prev != nil && prev.FileKey != "" && before != nil && before.Mode().IsRegular() {
		known = fileKey(before)
	}
	if known != "" && prev.Status == store.StatusDone && prev.Fingerprint == p.Fingerprint && prev.FileKey == known {
		res.DocID, res.Outcome = prev.ID, Unchanged
		return *res, nil
	}
	// Likewise a file that failed to load for a reason in its bytes, with
	// this loader: it would fail the same way.
	if known != "" && prev.Status == store.StatusFailed && prev.FileKey == failedLoadKey(known) {
		res.DocID, res.Outcome = prev.ID, Failed
		res.Error = prev.Error + " (file unchanged since; not read again)"
		return *res, nil
	}
	// A copy of a stored document, unchanged since it was found to be one,
	// while the original is still stored and its file still there.
	if known != "" && prev.Status == store.StatusDuplicate && prev.FileKey == known && prev.Fingerprint == p.Fingerprint {
		if orig := p.originalOf(ctx, prev); orig != nil {
			res.DocID, res.Outcome = orig.ID, Duplicate
			res.Warnings = []string{duplicateWarning("content", orig.Path)}
			return *res, nil
		}
	}
	// Another live run is building this path's document: leave it to it
	// (the claim after loading decides; this spares the read).
	if prev != nil && p.heldElsewhere(prev) {
		res.DocID, res.Outcome, res.ClaimedBy = prev.ID, Claimed, ownerName(prev.LeaseOwner)
		return *res, nil
	}
	readAt := time.Now()
	res.Loaded = true
	doc, err := p.Loader.Load(ctx, path)
	if err != nil {
		// Keep a done version of this path: a bad edit must not lose data.
		if prev == nil || prev.Status != store.StatusDone {
			p.markFailed(ctx, path, prev, err, before, readAt)
		}
		return st.fail(err), nil
	}
	st.doc = doc
	res.DocID, res.Warnings = doc.ID, doc.Warnings
	st.key = trustedKey(before, readAt, doc.Size, doc.ModTime)
	outcome, warning, err := p.settle(ctx, path, prev, doc.ID, p.Fingerprint, "content")
	if err != nil {
		return st.fail(err), nil
	}
	if outcome != "" {
		st.outcome, st.warning = outcome, warning
	}
	return *res, st
}

// settled is the result of a staged file that needs no build: outcome,
// with warning if not empty.
func (p *Pipeline) settled(ctx context.Context, st *staged, outcome Outcome, warning string) FileResult {
	res := st.res
	res.Outcome = outcome
	if warning != "" {
		res.Warnings = append(slices.Clip(res.Warnings), warning)
	}
	// Read again and found unchanged (or moved here): remember the
	// file's key so the next run need not read it.
	key, doc, prev := st.key, st.doc, st.prev
	if outcome == Duplicate && key != "" {
		p.recordCopy(ctx, st.path, doc, key, warning)
	}
	if outcome != Duplicate && key != "" && (prev == nil || prev.ID != doc.ID || prev.FileKey != key) {
		if err := p.Store.SetFileKey(ctx, doc.ID, key); err != nil && !errors.Is(err, store.ErrNotFound) {
			return failed(res, fmt.Errorf("%s: record file key: %w", st.path, err))
		}
	}
	return res
}

// claimStaged claims the rows of the staged documents for this run,
// together (Pipeline.begin): for each its flight, or (flight nil) the
// file's result when it is not to be built here.
func (p *Pipeline) claimStaged(ctx context.Context, sts ...*staged) ([]FileResult, []*inflight) {
	flights, errs := p.begin(ctx, sts)
	results := make([]FileResult, len(sts))
	for i, st := range sts {
		results[i], flights[i] = p.claimedStaged(ctx, st, flights[i], errs[i])
	}
	return results, flights
}

// claimedStaged is claimStaged after begin: the claim's refusal settled.
func (p *Pipeline) claimedStaged(ctx context.Context, st *staged, flight *inflight, err error) (FileResult, *inflight) {
	path := st.path
	var held *store.ClaimedError
	var building *buildingError
	switch {
	case errors.As(err, &building):
		if building.path == path {
			return p.settled(ctx, st, Unchanged, ""), nil
		}
		return p.settled(ctx, st, Duplicate, duplicateWarning("content", building.path)), nil
	case errors.As(err, &held):
		res := st.res
		res.Outcome, res.ClaimedBy = Claimed, ownerName(held.Owner)
		return res, nil
	case errors.Is(err, store.ErrUpToDate):
		// Another run finished this content since prev was read: settle
		// again against the store as it is now (here: unchanged;
		// elsewhere: renamed or duplicate).
		prev, err := p.Store.DocumentByPath(ctx, path)
		if errors.Is(err, store.ErrNotFound) {
			prev, err = nil, nil
		}
		if err != nil {
			return st.fail(fmt.Errorf("%s: read store: %w", path, err)), nil
		}
		st.prev = prev
		outcome, warning, err := p.settle(ctx, path, prev, st.doc.ID, p.Fingerprint, "content")
		if err != nil {
			return st.fail(err), nil
		}
		return p.settled(ctx, st, cmp.Or(outcome, Unchanged), warning), nil
	case err != nil:
		return st.fail(fmt.Errorf("%s: claim: %w", path, err)), nil
	}
	return st.res, flight
}

// built turns the build of a claimed document (w, or its failure err) into
// its write, or settles the claim and says why there is none.
func (p *Pipeline) built(ctx context.Context, st *staged, flight *inflight, w *store.DocumentWrite, stats BuildStats, err error) (FileResult, *pendingWrite) {
	if err != nil {
		flight.end(ctx, err)
		r := st.fail(err)
		r.Unusable = stats.Unusable
		return r, nil
	}
	path, prev, doc := st.path, st.prev, st.doc
	res := st.res
	res.Warnings = w.Document.Warnings
	w.Document.FileKey = st.key
	if prev != nil && prev.ID != doc.ID {
		w.Replaces = append(w.Replaces, prev.ID)
	}
	if pid := PathID(path); pid != doc.ID && (prev == nil || prev.ID != pid) {
		w.Replaces = append(w.Replaces, pid) // a failure row from an earlier run
	}
	return res, &pendingWrite{w: w, flight: flight, prev: prev, res: res, stats: stats}
}

// Build runs split, extract, build and embed for one loaded document,
// returning the write that stores it and how many extracted records were rejected.
func (p *Pipeline) Build(ctx context.Context, doc *loader.Document) (*store.DocumentWrite, int, error) {
	w, stats, err := p.BuildCounted(ctx, doc)
	return w, stats.Rejected, err
}

// BuildStats counts what building one document met.
type BuildStats struct {
	Rejected int // records the extractor could not parse
	Merged   int // names entity resolution folded into another name of the document
	// Unusable counts the model's answers with no record in the
	// extraction format (ner.Extraction.UnusableAnswers).
	Unusable int
}

// BuildCounted is Build with all its counts.
func (p *Pipeline) BuildCounted(ctx context.Context, doc *loader.Document) (*store.DocumentWrite, BuildStats, error) {
	var stats BuildStats
	chunks := p.Splitter.Split(doc.ID, doc.Text)
	if len(chunks) == 0 {
		return nil, stats, fmt.Errorf("%s: no text to index after splitting", doc.Path)
	}
	extractions := make([]graphbuild.ChunkExtraction, len(chunks))
	var (
		rmu             sync.Mutex
		withText        int              // chunks an extractor is asked about
		unusableChunks  int              // of those, chunks whose answer was unusable
		unusableAnswers []unusableAnswer // every unusable answer, extraction and gleaning
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.concurrency())
	for i, c := range chunks {
		g.Go(func() error {
			ex, err := p.Extractor.Extract(gctx, ner.Chunk{ID: c.ID(), DocTitle: doc.Title, Text: c.Text})
			if err != nil {
				return fmt.Errorf("%s: extract chunk %d: %w", doc.Path, c.Index, err)
			}
			extractions[i] = graphbuild.ChunkExtraction{ChunkID: c.ID(), Extraction: ex, Text: c.Text}
			rmu.Lock()
			stats.Rejected += ex.Rejected
			if strings.TrimSpace(c.Text) != "" {
				withText++
			}
			if ex.Unusable {
				unusableChunks++
			}
			for _, a := range ex.UnusableAnswers {
				unusableAnswers = append(unusableAnswers, unusableAnswer{c.Index, a})
			}
			rmu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, stats, err
	}
	stats.Unusable = len(unusableAnswers)
	// Chunks finish in any order; the first chunk's answer is the one quoted.
	slices.SortStableFunc(unusableAnswers, func(a, b unusableAnswer) int { return cmp.Compare(a.chunk, b.chunk) })
	// A document mostly read from prose would land as an empty graph that
	// looks done: fail it, so that it stays retryable.
	if unusableChunks > 0 && 2*unusableChunks > withText {
		return nil, stats, fmt.Errorf("%s: %d of %d chunks got unusable answers from the model (no record in the extraction format); %s",
			doc.Path, unusableChunks, withText, unusableAnswers[0])
	}
	ents, rels, merges := graphbuild.BuildReleasing(extractions)
	extractions = nil
	stats.Merged = len(merges)

	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	vecs, err := p.embed(ctx, texts)
	if err != nil {
		return nil, stats, fmt.Errorf("%s: embed chunks: %w", doc.Path, err)
	}
	rows := make([]store.Chunk, len(chunks))
	for i, c := range chunks {
		rows[i] = store.Chunk{ID: c.ID(), DocID: doc.ID, Index: c.Index, Text: c.Text, Tokens: c.Tokens, Start: c.Start, End: c.End, Embedding: vecs[i]}
	}
	row := p.documentRow(doc)
	row.Status, row.UpdatedAt, row.Chunks, row.Warnings = store.StatusDone, time.Now().UTC(), len(rows), doc.Warnings
	if n := len(unusableAnswers); n > 0 {
		// One warning however many answers: it is shown once per document.
		w := unusableAnswers[0].String()
		if n > 1 {
			w = fmt.Sprintf("%d unusable answers from the model (no record in the extraction format); the first, %s", n, w)
		}
		row.Warnings = append(slices.Clip(doc.Warnings), w)
	}
	return &store.DocumentWrite{Document: row, Chunks: rows, Entities: ents, Relations: rels}, stats, nil
}

// unusableAnswer is an unusable model answer for one chunk of a document.
type unusableAnswer struct {
	chunk int
	what  string // ner.Extraction.UnusableAnswers
}

func (a unusableAnswer) String() string { return fmt.Sprintf("chunk %d: %s", a.chunk, a.what) }

// documentRow is a loaded document's metadata as stored with this run's
// settings, under its content id.
func (p *Pipeline) documentRow(doc *loader.Document) store.Document {
	return store.Document{
		ID: doc.ID, Path: doc.Path, Title: doc.Title, Hash: doc.Hash, Format: doc.Format,
		Fingerprint: p.Fingerprint, Size: doc.Size, ModTime: doc.ModTime,
	}
}

func (p *Pipeline) embed(ctx context.Context, texts []string) ([][]float32, error) {
	batch := p.EmbedBatch
	if batch <= 0 {
		batch = 64
	}
	out := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += batch {
		part := texts[i:min(i+batch, len(texts))]
		vecs, err := p.Embedder.EmbedDocuments(ctx, part)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(part) {
			return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", p.Embedder.Name(), len(vecs), len(part))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// duplicateWarning says a file's content is stored under another path.
func duplicateWarning(what, original string) string {
	return "same " + what + " as " + original + "; not stored twice"
}

// recordCopy leaves a duplicate row for a file whose content is stored
// under another path, with the file's key, so the next run knows the copy
// without reading it. It is bookkeeping only: if it fails, the next run
// reads the file again and finds the same.
func (p *Pipeline) recordCopy(ctx context.Context, path string, doc *loader.Document, key, warning string) {
	row := p.documentRow(doc)
	row.ID, row.Path = PathID(path), path
	if err := p.Store.SetStatus(ctx, row, store.StatusDuplicate, warning); err == nil {
		_ = p.Store.SetFileKey(ctx, row.ID, key)
	}
}

// originalOf is the stored document a duplicate row is a copy of, when it
// is still done with this run's settings at a path that exists; nil
// otherwise (the copy must then be read: it may now be the only one).
func (p *Pipeline) originalOf(ctx context.Context, dup *store.Document) *store.Document {
	id := loader.ContentID(dup.Hash)
	if id == "" {
		return nil
	}
	orig, err := p.Store.Document(ctx, id)
	if err != nil || orig.Status != store.StatusDone || orig.Fingerprint != p.Fingerprint || orig.Path == dup.Path {
		return nil
	}
	if fi, err := os.Stat(orig.Path); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return orig
}

// markFailed records a failure for a path that has no good stored version, so
// that status shows it and the next run retries it. A failure in the file's
// own bytes also records the file's key, so the next run skips the file
// while it stays as it is.
func (p *Pipeline) markFailed(ctx context.Context, path string, prev *store.Document, cause error, before fs.FileInfo, readAt time.Time) {
	if ctx.Err() != nil {
		return
	}
	row := store.Document{ID: PathID(path), Path: path, Title: filepath.Base(path)}
	if prev != nil {
		row = *prev // the path's own row (queued, unfinished or failed) records it
	}
	if err := p.Store.SetStatus(ctx, row, store.StatusFailed, cause.Error()); err != nil || !loader.InContent(cause) {
		return
	}
	if after, err := os.Stat(path); err == nil {
		if key := trustedKey(before, readAt, after.Size(), after.ModTime()); key != "" {
			_ = p.Store.SetFileKey(ctx, row.ID, failedLoadKey(key))
		}
	}
}

// failedLoadKey is the key recorded for a file that failed to load: its
// file key and the loader's version, so a new loader reads it again.
func failedLoadKey(key string) string {
	return key + ";loader=" + loader.Version
}

// prune deletes the documents under paths whose files are gone, or are now
// links leading out of sc, which no run reads. A path that is itself gone
// or unreadable prunes nothing: an unmounted drive or a mistyped folder
// must not empty the store.
func (p *Pipeline) prune(ctx context.Context, paths []string, sc *scope, record func(FileResult)) error {
	var roots []string
	for _, path := range paths {
		abs, err := filepath.Abs(path)
		if err != nil {
			continue
		}
		if _, err := os.Stat(abs); err == nil {
			roots = append(roots, abs)
		}
	}
	if len(roots) == 0 {
		return nil
	}
	docs, err := p.Store.Documents(ctx)
	if err != nil {
		return fmt.Errorf("prune: list documents: %w", err)
	}
	for _, d := range docs {
		if !localPath(d) || !slices.ContainsFunc(roots, func(root string) bool { return underRoot(d.Path, root) }) {
			continue
		}
		if _, err := os.Stat(d.Path); !errors.Is(err, fs.ErrNotExist) && !sc.leadsOut(d.Path) {
			continue
		}
		start := time.Now()
		if err := p.Store.DeleteDocument(ctx, d.ID); err != nil {
			return fmt.Errorf("prune %s: %w", d.Path, err)
		}
		record(FileResult{Path: d.Path, DocID: d.ID, Outcome: Deleted, Duration: time.Since(start)})
	}
	return nil
}

// underRoot reports whether path is root or lies under it.
func underRoot(path, root string) bool {
	if path == root {
		return true
	}
	return strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

func (p *Pipeline) concurrency() int {
	if p.Concurrency > 0 {
		return p.Concurrency
	}
	return 4
}

// PathID is the id of the placeholder row that records a failure for a file
// whose content could not be read (so it has no content id).
func PathID(path string) string {
	sum := sha256.Sum256([]byte("path\x00" + path))
	return "f" + hex.EncodeToString(sum[:15])
}

func countOutcome(rs []FileResult, o Outcome) int {
	n := 0
	for _, r := range rs {
		if r.Outcome == o {
			n++
		}
	}
	return n
}

// Walk expands files and folders (recursively) into the supported files under
// them, sorted, with absolute paths, and reports the paths it passed over.
// Inside folders, hidden files, editors' scratch files and whatever
// .docgraphignore files exclude are left out silently; the ignore files are
// read once per folder. A symbolic link to a file is followed (the document
// keeps the link's path) when its target, every link resolved, lies under
// one of paths (each resolved too); one leading elsewhere is not, nor is
// one to a folder (no loops, no escaping the tree). A path named in paths
// is taken whatever it is a link to: it is what the user asked for.
// Folders and files on a pseudo file system (/proc, /sys: see
// loader.PseudoFS) are never opened: their reads can block or never end.
// Every other path passed over is in the returned results: as Unsupported
// when it is no document docgraph reads (another or no extension, a link
// to a folder or leading outside), as Failed when it should have been one
// and cannot be (a folder that cannot be read or lies deeper than the
// system's path limit, a named pipe, device or socket, a file or folder on
// a pseudo file system, a broken link, a named argument that is missing or
// unsupported). A regular file whose name says nothing docgraph knows is
// judged by its first 4 KiB (see loader.Readable); nothing else is opened,
// so a named pipe cannot block the walk. The error is for the run as a
// whole. Ingest walks the same way, following links wherever they lead
// with Pipeline.FollowOutsideLinks.
func Walk(paths []string) ([]string, []FileResult, error) {
	return walk(paths, newScope(paths, false))
}

// walk is Walk with links judged by sc.
func walk(paths []string, sc *scope) ([]string, []FileResult, error) {
	seen := map[string]bool{}
	var files []string
	var passed []FileResult
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	fail := func(p, msg string) { passed = append(passed, FileResult{Path: p, Outcome: Failed, Error: msg}) }
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		info, err := os.Stat(abs)
		pseudo := ""
		if err == nil {
			pseudo = loader.PseudoFS(abs)
		}
		switch {
		case err != nil:
			fail(abs, fmt.Sprintf("%s: %v", p, errors.Unwrap(err)))
		case pseudo != "":
			fail(abs, fmt.Sprintf("%s: %s", p, loader.PseudoFSReason(pseudo)))
		case info.IsDir():
			walkFolder(abs, sc, add, &passed)
		case !loader.Supported(abs) && !(info.Mode().IsRegular() && loader.Readable(abs)):
			fail(abs, fmt.Sprintf("%s: unsupported file type (want one of %s, or a file whose content is one)", p, strings.Join(loader.Extensions(), " ")))
		case !info.Mode().IsRegular():
			fail(abs, fmt.Sprintf("%s: not a regular file (%s)", p, fileKind(info.Mode())))
		default:
			add(abs)
		}
	}
	sort.Strings(files)
	return files, passed, nil
}

// walkFolder adds the documents under root and records what it passes over.
func walkFolder(root string, sc *scope, add func(string), passed *[]FileResult) {
	record := func(p string, o Outcome, msg string) {
		*passed = append(*passed, FileResult{Path: p, Outcome: o, Error: msg})
	}
	walkTree(root, nil, func(p string, d fs.DirEntry) bool {
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			info, err := os.Stat(p)
			switch {
			case err != nil && loader.Supported(p):
				record(p, Failed, fmt.Sprintf("%s: broken symbolic link: %v", p, cause(err)))
				return false
			case err != nil:
				record(p, Unsupported, "broken symbolic link")
				return false
			case info.IsDir():
				record(p, Unsupported, "symbolic link to a folder, not followed")
				return false
			case sc.leadsOut(p):
				record(p, Unsupported, linkOutside)
				return false
			}
			// A link may lead where no folder of the walk is (with
			// FollowOutsideLinks, or to a pseudo file system mounted
			// inside the tree): asked before Readable opens it.
			if fs := loader.PseudoFS(p); fs != "" {
				record(p, Failed, fmt.Sprintf("%s: %s", p, loader.PseudoFSReason(fs)))
				return false
			}
			mode = info.Mode().Type()
		}
		switch {
		case mode.IsDir():
			return true
		case !loader.Supported(p) && !(mode.IsRegular() && loader.Readable(p)):
			record(p, Unsupported, unsupportedReason(p))
		case !mode.IsRegular():
			record(p, Failed, fmt.Sprintf("%s: not a regular file (%s)", p, fileKind(mode)))
		default:
			add(p)
		}
		return false
	}, func(p string, err error, _ bool) { record(p, Failed, err.Error()) })
}

// unsupportedReason says why a file inside a folder is no document.
func unsupportedReason(p string) string {
	if ext := filepath.Ext(p); ext != "" {
		return "unsupported file type " + strings.ToLower(ext)
	}
	return "no file extension"
}

// fileKind names a file type that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not readable as a document"
}

// IndexSyncer is a store with index files beside its data (the SQLite
// store's vector index and passage graph files): caches, brought up to
// date by the store itself, that a run waits for before it reports.
type IndexSyncer interface {
	// SyncIndexes waits until the index files hold everything written,
	// and says why they could not be written (a full disk).
	SyncIndexes(ctx context.Context) error
}

// Conclude completes sum, what Ingest returned with err, once the run is
// over: it adds the statistics of models (nil: none), and waits for the
// store's index files (IndexSyncer). It returns the failure to write them,
// also in sum.IndexError: the documents are stored and searches stay
// correct (they scan every vector) until a later run writes the files, but
// the run is not complete. A run that failed (err) is not waited for.
func (p *Pipeline) Conclude(ctx context.Context, sum *Summary, models *Models, err error) error {
	var ierr error
	if w, ok := p.Store.(IndexSyncer); ok && err == nil && sum != nil && ctx.Err() == nil {
		if ierr = w.SyncIndexes(ctx); ierr != nil && ctx.Err() == nil {
			sum.IndexError = ierr.Error()
		} else {
			ierr = nil // interrupted: the run says so
		}
	}
	if sum == nil || models == nil {
		return ierr
	}
	sum.LLM = models.Stats()
	if sum.LLM != nil && sum.LLM.UnusableAnswers > int64(sum.UnusableAnswers) {
		// The documents' counts leave out those rolled back when the run
		// stopped; the model's count has every answer of the run.
		sum.UnusableAnswers = int(sum.LLM.UnusableAnswers)
	}
	return ierr
}
