package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/docgraph/docgraph/loader"
	"github.com/docgraph/docgraph/store"
)

// A document moves through the store's states like this:
//
//	(none) or pending --claim--> processing --write--> done
//	                                  |------error---> failed (with reason)
//	                                  '--cancelled---> back to what it was
//
// The claim (store.Writer.Claim) both marks the row processing and leases it
// to this run, so another run skips it (lease.go); the write or the settled
// failure ends the lease. The claim comes before the build, except with the
// offline models, whose builds are cheap: then it comes right after
// (Pipeline.buildsAhead). A new version of a done document gets a row of its
// own (its content id) while it is processed; the done version stays
// queryable until the write replaces both in one transaction. A done
// document re-processed for new settings stays done while leased. A
// document found pending or processing when a run starts, and not leased by
// a live run, was left by a crash or a queued change; Ingest resumes it.

// settleTimeout bounds the status writes that undo an interrupted document;
// they run after the run's context is cancelled, so they need their own.
const settleTimeout = 5 * time.Second

// inflight is one document between begin and end.
type inflight struct {
	p      *Pipeline
	prev   *store.Document // the row this path had, nil if none
	row    store.Document  // the row claimed: the document's content id
	before *store.Document // that row before the claim, nil if the claim made it
}

// begin claims the rows (content ids) of the staged documents for this
// run, in one transaction when the store can (store.BatchClaimer). A lease
// of a run that is gone from this machine is taken over at once. errs[i]
// wraps store.ErrClaimed when another live run holds the row, and
// store.ErrUpToDate when another run has meanwhile finished it.
func (p *Pipeline) begin(ctx context.Context, sts []*staged) (flights []*inflight, errs []error) {
	rows := make([]store.Document, len(sts))
	for i, st := range sts {
		rows[i] = p.documentRow(st.doc)
	}
	lease := store.Lease{Owner: p.owner(), TTL: p.leaseTTL()}
	claims := make([]store.ClaimResult, len(sts))
	if bc, ok := p.Store.(store.BatchClaimer); ok {
		cs, err := bc.ClaimDocuments(ctx, rows, lease)
		for i := range claims {
			if err != nil {
				claims[i].Err = err
			} else {
				claims[i] = cs[i]
			}
		}
	} else {
		for i, row := range rows {
			claims[i].Before, claims[i].Err = p.Store.Claim(ctx, row, lease)
		}
	}
	flights, errs = make([]*inflight, len(sts)), make([]error, len(sts))
	for i, st := range sts {
		flights[i], errs[i] = p.claimed(ctx, st.prev, rows[i], lease, claims[i].Before, claims[i].Err)
	}
	return flights, errs
}

// claimed is begin after the claim of row: it takes over a gone run's
// lease, and turns a row this run is building into a buildingError.
func (p *Pipeline) claimed(ctx context.Context, prev *store.Document, row store.Document, lease store.Lease, before *store.Document, err error) (*inflight, error) {
	var held *store.ClaimedError
	if errors.As(err, &held) && ownerGone(held.Owner) {
		lease.TakeOver = held.Owner
		before, err = p.Store.Claim(ctx, row, lease)
	}
	if err != nil {
		return nil, err
	}
	// This run already holds the claim on a row it is building: another
	// file (or the same one twice) with the same content is in flight.
	if before != nil && before.Status == store.StatusProcessing && before.LeaseOwner == lease.Owner &&
		before.LeaseUntil.After(time.Now()) {
		return nil, &buildingError{path: before.Path}
	}
	return &inflight{p: p, prev: prev, row: row, before: before}, nil
}

// buildingError is begin's answer for content this run is building already,
// for the file at path.
type buildingError struct{ path string }

func (e *buildingError) Error() string { return "content being built for " + e.path }

// end settles a document whose build or write did not complete, and ends
// its lease. A cancelled run rolls the row back to its state before the
// claim, so a shutdown leaves nothing half-done. A real failure is recorded
// with its reason, except when a good version exists (the row itself done
// for other settings, or the path's done older version): that one stays,
// as a bad edit must not lose data.
func (f *inflight) end(ctx context.Context, cause error) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	st := f.p.Store
	cancelled := ctx.Err() != nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded)
	olderDone := f.prev != nil && f.prev.Status == store.StatusDone && f.prev.ID != f.row.ID
	switch {
	case f.before != nil && f.before.Status == store.StatusDone:
		_ = st.ReleaseLease(sctx, f.row.ID, f.p.owner())
	case f.before == nil && cancelled, olderDone && !cancelled:
		_ = st.DeleteDocument(sctx, f.row.ID) // a row without a graph: nothing else to undo
	case cancelled:
		_ = st.SetStatus(sctx, *f.before, f.before.Status, f.before.Error)
	default:
		_ = st.SetStatus(sctx, f.row, store.StatusFailed, cause.Error())
		if p := f.prev; p != nil && p.ID != f.row.ID && p.Status != store.StatusDone && p.Chunks == 0 {
			// The path's queued or failed row of other content: this
			// failure is now the path's record.
			_ = st.DeleteDocument(sctx, p.ID)
		}
	}
}

// unfinished reports whether a stored row is work a crash or a shutdown left.
func unfinished(d store.Document) bool {
	return (d.Status == store.StatusPending || d.Status == store.StatusProcessing) && localPath(d)
}

// localPath reports whether a document came from a file ingest can re-read.
func localPath(d store.Document) bool {
	return d.Format != KGFormat && d.Path != "" && !strings.Contains(d.Path, "://")
}

// withUnfinished adds to files the paths of documents left pending or
// processing, so a run resumes them even when they lie outside its paths.
// Rows that the path's re-ingest would not replace are settled here: a bare
// row beside the path's done version (a new version a crash interrupted) or
// of a file that is gone is removed; a row with chunks whose file is gone is
// done again (prune decides about it).
func (p *Pipeline) withUnfinished(ctx context.Context, files []string, sc *scope) ([]string, error) {
	docs, err := p.Store.Documents(ctx)
	if err != nil {
		return nil, fmt.Errorf("resume: list documents: %w", err)
	}
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f] = true
	}
	added := false
	for _, d := range docs {
		if !unfinished(d) || p.heldElsewhere(&d) {
			continue // done, or another live run is at work on it
		}
		info, statErr := os.Stat(d.Path)
		// A path that has become a link leading out of sc is no file of
		// this run's either: never read, whatever was queued for it.
		exists := statErr == nil && info.Mode().IsRegular() && !sc.leadsOut(d.Path) && loader.Readable(d.Path)
		superseded := false
		if exists && d.Chunks == 0 {
			cur, err := p.Store.DocumentByPath(ctx, d.Path)
			superseded = err == nil && cur.ID != d.ID
		}
		switch {
		case (!exists || superseded) && d.Chunks == 0:
			if err := p.Store.DeleteDocument(ctx, d.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, fmt.Errorf("resume %s: remove unfinished row: %w", d.Path, err)
			}
		case !exists:
			if err := p.Store.SetStatus(ctx, d, store.StatusDone, ""); err != nil {
				return nil, fmt.Errorf("resume %s: %w", d.Path, err)
			}
		}
		if exists && !have[d.Path] {
			files = append(files, d.Path)
			have[d.Path], added = true, true
		}
	}
	if added {
		sort.Strings(files)
	}
	return files, nil
}

// MarkPending records that a change to the file at path is queued, so that
// `ingest status` shows it and a crash before it is processed resumes it.
// A path that already has a row keeps it untouched: its current version
// stays done and queryable until the new one is written.
func (p *Pipeline) MarkPending(ctx context.Context, path string) error {
	_, err := p.Store.DocumentByPath(ctx, path)
	if err == nil {
		return nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s: mark pending: %w", path, err)
	}
	doc := store.Document{ID: PathID(path), Path: path, Title: filepath.Base(path)}
	if err := p.Store.SetStatus(ctx, doc, store.StatusPending, ""); err != nil {
		return fmt.Errorf("%s: mark pending: %w", path, err)
	}
	return nil
}

// DeletePath removes the documents stored for path: every row at that exact
// path (a version, a failure, a queued change) and, when under is true, every
// document in the folder path. One result per removed document says how many
// entities and relations left the store with it.
func (p *Pipeline) DeletePath(ctx context.Context, path string, under bool) ([]FileResult, error) {
	var out []FileResult
	for {
		d, err := p.Store.DocumentByPath(ctx, path)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("delete %s: %w", path, err)
		}
		r, err := p.DeleteDocument(ctx, *d)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	if !under {
		return out, nil
	}
	docs, err := p.Store.Documents(ctx)
	if err != nil {
		return out, fmt.Errorf("delete %s: list documents: %w", path, err)
	}
	prefix := strings.TrimSuffix(path, string(filepath.Separator)) + string(filepath.Separator)
	for _, d := range docs {
		if !strings.HasPrefix(d.Path, prefix) {
			continue
		}
		r, err := p.DeleteDocument(ctx, d)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// DeleteDocument removes one stored document and reports how many entities
// and relations the store lost with it (those only it mentioned; the rest
// just lose its share of descriptions and weights).
func (p *Pipeline) DeleteDocument(ctx context.Context, d store.Document) (FileResult, error) {
	start := time.Now()
	r := FileResult{Path: d.Path, DocID: d.ID, Outcome: Deleted, Chunks: d.Chunks}
	before, _ := p.Store.Stats(ctx)
	if err := p.Store.DeleteDocument(ctx, d.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			r.Duration = time.Since(start)
			return r, nil // already gone: a rename or another delete got there first
		}
		return r, fmt.Errorf("delete %s (%s): %w", d.Path, d.ID, err)
	}
	if after, err := p.Store.Stats(ctx); err == nil && before != nil {
		r.Entities = before.Entities - after.Entities
		r.Relations = before.Relations - after.Relations
	}
	r.Duration = time.Since(start)
	return r, nil
}

// fileExists reports whether path names something on disk (any error but
// "does not exist" counts as existing: deleting on a transient error would
// lose data).
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// stopped reports whether a stop channel is closed.
func stopped(stop <-chan struct{}) bool {
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
