// Package pipeline composes docgraph's ingest stages (Loader, Splitter,
// Extractor, Builder, Embedder, Store) and runs them over files and folders.
package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"docgraph/embedstore"
	"docgraph/graphbuild"
	"docgraph/loader"
	"docgraph/ner"
	"docgraph/splitter"
	"docgraph/store"
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
	outcome, warning := Duplicate, "same "+what+" as "+same.Path+"; not stored twice"
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

const (
	Added     Outcome = "added"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
	Renamed   Outcome = "renamed"
	Duplicate Outcome = "duplicate"
	Failed    Outcome = "failed"
	Deleted   Outcome = "deleted"
)

// FileResult reports one file.
type FileResult struct {
	Path      string        `json:"path"`
	DocID     string        `json:"doc_id,omitempty"`
	Outcome   Outcome       `json:"outcome"`
	Error     string        `json:"error,omitempty"`
	Warnings  []string      `json:"warnings,omitempty"`
	Chunks    int           `json:"chunks,omitempty"`
	Entities  int           `json:"entities,omitempty"`
	Relations int           `json:"relations,omitempty"`
	Rejected  int           `json:"rejected_records,omitempty"`
	Duration  time.Duration `json:"duration_ns"`
}

// Summary reports a whole run.
type Summary struct {
	Added     int `json:"added"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	Renamed   int `json:"renamed"`
	Duplicate int `json:"duplicate"`
	Failed    int `json:"failed"`
	Deleted   int `json:"deleted"`
	// Skipped counts files not started because the run was stopped.
	Skipped int `json:"skipped,omitempty"`
	// Written counts what this run wrote; Totals what the store holds after it.
	ChunksWritten    int           `json:"chunks_written"`
	EntityMentions   int           `json:"entity_mentions_written"`
	RelationMentions int           `json:"relation_mentions_written"`
	Totals           *store.Stats  `json:"totals,omitempty"`
	Writes           *WriteSummary `json:"writes,omitempty"`
	LLM              *ModelStats   `json:"llm,omitempty"`
	Failures         []FileResult  `json:"failures,omitempty"`
	Duration         time.Duration `json:"duration_ns"`
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
	// Prune deletes stored documents whose files no longer exist.
	Prune bool
	// Stop, when closed, keeps the run from starting further files; files
	// in flight finish under ctx. Skipped files and prune are then left out.
	Stop <-chan struct{}
}

// Ingest loads every supported file under paths and brings the store up to
// date. A failing file is reported and never stops the others; the returned
// error is for failures of the run itself (cancelled, store unusable).
func (p *Pipeline) Ingest(ctx context.Context, paths []string, opts Options) (*Summary, error) {
	start := time.Now()
	files, walkFailures, err := Walk(paths)
	if err != nil {
		return nil, err
	}
	if files, err = p.withUnfinished(ctx, files); err != nil {
		return nil, err
	}
	if p.Progress != nil {
		p.Progress.Start(len(files) + len(walkFailures))
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
		}
		if r.Outcome == Added || r.Outcome == Updated {
			sum.ChunksWritten += r.Chunks
			sum.EntityMentions += r.Entities
			sum.RelationMentions += r.Relations
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
		return sum, fmt.Errorf("ingest interrupted: %w", err)
	}
	if opts.Prune && sum.Skipped == 0 && !stopped(opts.Stop) {
		if err := p.prune(ctx, record); err != nil {
			return sum, err
		}
	}
	sort.Slice(sum.Failures, func(i, j int) bool { return sum.Failures[i].Path < sum.Failures[j].Path })
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
// finish. The error is ctx's, or the store's when it became unreachable:
// the files then under way are rolled back and not reported.
func (p *Pipeline) ingestFiles(ctx context.Context, files []string, stop <-chan struct{}, record func(FileResult)) (skipped int, writes *WriteSummary, err error) {
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	w := p.newWriter()
	var skips atomic.Int64
	var g errgroup.Group
	g.SetLimit(p.concurrency())
	for _, path := range files {
		g.Go(func() error {
			if stopped(stop) || runCtx.Err() != nil {
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
			r, pw := p.prepare(runCtx, path)
			if pw == nil {
				finish(r)
				return nil
			}
			err := w.batcher.Submit(runCtx, pw.w, func(err error) {
				if errors.Is(err, store.ErrUnavailable) {
					stopRun(err)
				}
				finish(pw.finish(runCtx, err))
			})
			if err != nil {
				finish(pw.finish(runCtx, err))
			}
			return nil
		})
	}
	g.Wait()
	writes = w.close()
	if runCtx.Err() != nil {
		return int(skips.Load()), writes, context.Cause(runCtx)
	}
	return int(skips.Load()), writes, nil
}

// writer is one run's write stage: the Batcher over the store and the
// store's retry count when the run began.
type writer struct {
	p       *Pipeline
	batcher *store.Batcher
	retries int64
}

func (p *Pipeline) newWriter() *writer {
	return &writer{p: p, batcher: store.NewBatcher(p.Store, p.Batch), retries: storeRetries(p.Store)}
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
	r, pw := p.prepare(ctx, path)
	if pw != nil {
		r = pw.finish(ctx, p.Store.WriteDocument(ctx, pw.w))
	}
	r.Duration = time.Since(start)
	return r
}

// pendingWrite is a built document on its way to the store.
type pendingWrite struct {
	w        *store.DocumentWrite
	flight   *inflight
	prev     *store.Document
	res      FileResult
	rejected int
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
	res.Chunks, res.Entities, res.Relations, res.Rejected = len(w.Chunks), len(w.Entities), len(w.Relations), pw.rejected
	res.Outcome = Added
	if pw.prev != nil && pw.prev.Status == store.StatusDone {
		res.Outcome = Updated
	}
	return res
}

// prepare does everything for one file up to its write: the result when
// nothing is to be written (unchanged, renamed, failed), else the write.
func (p *Pipeline) prepare(ctx context.Context, path string) (FileResult, *pendingWrite) {
	res := FileResult{Path: path}
	fail := func(err error) (FileResult, *pendingWrite) {
		res.Outcome, res.Error = Failed, err.Error()
		return res, nil
	}
	prev, err := p.Store.DocumentByPath(ctx, path)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fail(fmt.Errorf("%s: read store: %w", path, err))
	}
	doc, err := p.Loader.Load(ctx, path)
	if err != nil {
		// Keep a done version of this path: a bad edit must not lose data.
		if prev == nil || prev.Status != store.StatusDone {
			p.markFailed(ctx, path, prev, err)
		}
		return fail(err)
	}
	res.DocID, res.Warnings = doc.ID, doc.Warnings
	outcome, warning, err := p.settle(ctx, path, prev, doc.ID, p.Fingerprint, "content")
	if err != nil {
		return fail(err)
	}
	if outcome != "" {
		res.Outcome = outcome
		if warning != "" {
			res.Warnings = append(res.Warnings, warning)
		}
		return res, nil
	}
	flight, err := p.begin(ctx, prev, doc)
	if err != nil {
		return fail(err)
	}
	w, rejected, err := p.Build(ctx, doc)
	if err != nil {
		flight.end(ctx, err)
		return fail(err)
	}
	if prev != nil && prev.ID != doc.ID {
		w.Replaces = append(w.Replaces, prev.ID)
	}
	if pid := PathID(path); pid != doc.ID && (prev == nil || prev.ID != pid) {
		w.Replaces = append(w.Replaces, pid) // a failure row from an earlier run
	}
	return res, &pendingWrite{w: w, flight: flight, prev: prev, res: res, rejected: rejected}
}

// Build runs split, extract, build and embed for one loaded document,
// returning the write that stores it.
func (p *Pipeline) Build(ctx context.Context, doc *loader.Document) (*store.DocumentWrite, int, error) {
	chunks := p.Splitter.Split(doc.ID, doc.Text)
	if len(chunks) == 0 {
		return nil, 0, fmt.Errorf("%s: no text to index after splitting", doc.Path)
	}
	extractions := make([]graphbuild.ChunkExtraction, len(chunks))
	var rejected int
	var rmu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.concurrency())
	for i, c := range chunks {
		g.Go(func() error {
			ex, err := p.Extractor.Extract(gctx, ner.Chunk{ID: c.ID(), DocTitle: doc.Title, Text: c.Text})
			if err != nil {
				return fmt.Errorf("%s: extract chunk %d: %w", doc.Path, c.Index, err)
			}
			extractions[i] = graphbuild.ChunkExtraction{ChunkID: c.ID(), Extraction: ex}
			rmu.Lock()
			rejected += ex.Rejected
			rmu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	ents, rels := graphbuild.Build(extractions)

	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	vecs, err := p.embed(ctx, texts)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: embed chunks: %w", doc.Path, err)
	}
	rows := make([]store.Chunk, len(chunks))
	for i, c := range chunks {
		rows[i] = store.Chunk{ID: c.ID(), DocID: doc.ID, Index: c.Index, Text: c.Text, Tokens: c.Tokens, Start: c.Start, End: c.End, Embedding: vecs[i]}
	}
	w := &store.DocumentWrite{
		Document: store.Document{
			ID: doc.ID, Path: doc.Path, Title: doc.Title, Hash: doc.Hash, Format: doc.Format,
			Fingerprint: p.Fingerprint, Status: store.StatusDone, Size: doc.Size, ModTime: doc.ModTime,
			UpdatedAt: time.Now().UTC(), Chunks: len(rows),
		},
		Chunks: rows, Entities: ents, Relations: rels,
	}
	return w, rejected, nil
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

// markFailed records a failure for a path that has no good stored version, so
// that `ingest status` lists it and the next run retries it.
func (p *Pipeline) markFailed(ctx context.Context, path string, prev *store.Document, cause error) {
	if ctx.Err() != nil {
		return
	}
	if prev != nil {
		// The path's own row (queued, unfinished or failed) records it.
		_ = p.Store.SetStatus(ctx, *prev, store.StatusFailed, cause.Error())
		return
	}
	_ = p.Store.SetStatus(ctx, store.Document{ID: PathID(path), Path: path, Title: filepath.Base(path)}, store.StatusFailed, cause.Error())
}

// prune deletes documents whose files are gone.
func (p *Pipeline) prune(ctx context.Context, record func(FileResult)) error {
	docs, err := p.Store.Documents(ctx)
	if err != nil {
		return fmt.Errorf("prune: list documents: %w", err)
	}
	for _, d := range docs {
		if !localPath(d) {
			continue
		}
		if _, err := os.Stat(d.Path); !errors.Is(err, fs.ErrNotExist) {
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

// Walk expands files and folders (recursively) into the supported files under
// them, sorted, with absolute paths. Inside folders, hidden files, editors'
// scratch files and whatever .docgraphignore files exclude are skipped; a
// named file that is not supported is reported as a failure.
func Walk(paths []string) ([]string, []FileResult, error) {
	seen := map[string]bool{}
	var files []string
	var failures []FileResult
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		info, err := os.Stat(abs)
		if err != nil {
			failures = append(failures, FileResult{Path: abs, Outcome: Failed, Error: fmt.Sprintf("%s: %v", p, errors.Unwrap(err))})
			continue
		}
		if !info.IsDir() {
			if !loader.Supported(abs) {
				failures = append(failures, FileResult{Path: abs, Outcome: Failed, Error: fmt.Sprintf("%s: unsupported file type (want .txt, .md or .pdf)", p)})
				continue
			}
			if !seen[abs] {
				seen[abs] = true
				files = append(files, abs)
			}
			continue
		}
		ig, err := NewIgnore([]string{abs})
		if err != nil {
			return nil, nil, err
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				failures = append(failures, FileResult{Path: path, Outcome: Failed, Error: err.Error()})
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if path != abs && ig.Skip(path, d.IsDir()) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && loader.Supported(path) && !seen[path] {
				seen[path] = true
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Strings(files)
	return files, failures, nil
}
