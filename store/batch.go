package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// BatchOptions bound the groups a Batcher writes in one transaction.
type BatchOptions struct {
	// MaxDocuments is the most documents one transaction carries.
	MaxDocuments int
	// MaxRows is the most rows (the document, its chunks, entity and
	// relation mentions) one transaction carries; a bigger document is
	// written alone.
	MaxRows int
	// MaxDelay is how long a document that finds the writer idle waits for
	// company before it is written in a group that is not full.
	MaxDelay time.Duration
	// After its first group, a Batcher writes a stream of documents in
	// big groups: a group waits for the store's preferred size
	// (GroupSizer; else MaxRows) while documents keep arriving (none more
	// than BulkGap after the one before or after the last write), for at
	// most BulkDelay. A bulk ingest is then a few big transactions rather
	// than many small ones, each of which rewrites the index pages its
	// random keys touch and re-merges the entities many documents share.
	// The first group waits MaxDelay only, and a write a caller waits for
	// (Write) is never held back; Close writes what is queued at once.
	BulkGap, BulkDelay time.Duration
	// MaxQueuedRows bounds the rows waiting for the writer; Submit blocks
	// beyond it, which is what keeps fast extraction from piling up vectors.
	MaxQueuedRows int
}

// DefaultBatchOptions are the limits NewBatcher uses for zero fields.
var DefaultBatchOptions = BatchOptions{
	MaxDocuments:  65536,
	MaxRows:       600_000,
	MaxDelay:      20 * time.Millisecond,
	BulkGap:       250 * time.Millisecond,
	BulkDelay:     30 * time.Second,
	MaxQueuedRows: 750_000,
}

// BatchStats counts what a Batcher did.
type BatchStats struct {
	// Documents is how many documents were committed.
	Documents int64 `json:"documents"`
	// Transactions is how many write transactions committed them.
	Transactions int64 `json:"transactions"`
	// Fallbacks is how many groups failed as a whole and were written again
	// one document per transaction.
	Fallbacks int64 `json:"fallbacks"`
	// Failed is how many documents were not written.
	Failed int64 `json:"failed"`
}

// ErrBatcherClosed is returned by Submit and Write after Close.
var ErrBatcherClosed = errors.New("batch writer closed")

// Batcher is the one writer of an ingest run: documents built concurrently
// are handed to it, and its single goroutine writes them in groups, one
// transaction per group, through the store's BatchWriter (one document per
// transaction for a store without one). Writes of one process therefore
// never contend with each other, and commits and round trips are shared.
//
// Each document stays all-or-nothing: when a group fails, its documents are
// written again one per transaction, so one bad document fails alone. A
// failure that says no write can succeed (Fatal: the store unreachable or
// out of space), or a group whose every submitter has given up (context
// done), is not retried that way.
// Documents that name the same document or chunk ids never share a group and
// are written in the order submitted.
type Batcher struct {
	w        Writer
	bw       BatchWriter
	sizer    GroupSizer
	streamer Streamer // told when the run ends
	opts     BatchOptions

	mu    sync.Mutex
	queue []*batchJob
	rows  int // rows queued
	// waiting counts the queued jobs whose submitter waits (Write).
	waiting int
	freed   chan struct{} // closed (and replaced) when queue space frees
	wake    chan struct{} // a job arrived or Close was called
	closed  bool
	exited  chan struct{}
	// lastWrite is when the previous group's write ended, lastArrival when
	// the newest job was queued.
	lastWrite, lastArrival time.Time

	documents, transactions, fallbacks, failed atomic.Int64
}

type batchJob struct {
	ctx     context.Context
	w       *DocumentWrite
	rows    int
	keys    []string
	queued  time.Time
	done    func(error)
	settled bool // taken off the queue (guarded by Batcher.mu)
	waited  bool // its submitter waits for it (Write)
}

// NewBatcher starts the writer goroutine for w; zero fields of opts take
// their DefaultBatchOptions value, and a GroupLimiter's limit caps MaxRows.
// Close it to write what is queued and stop.
func NewBatcher(w Writer, opts BatchOptions) *Batcher {
	d := DefaultBatchOptions
	if opts.MaxDocuments <= 0 {
		opts.MaxDocuments = d.MaxDocuments
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = d.MaxRows
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = d.MaxDelay
	}
	if opts.BulkGap <= 0 {
		opts.BulkGap = d.BulkGap
	}
	if opts.BulkDelay <= 0 {
		opts.BulkDelay = max(d.BulkDelay, opts.MaxDelay)
	}
	if gl, ok := w.(GroupLimiter); ok && gl.MaxGroupRows() > 0 {
		opts.MaxRows = min(opts.MaxRows, gl.MaxGroupRows())
	}
	if opts.MaxQueuedRows <= 0 {
		opts.MaxQueuedRows = max(d.MaxQueuedRows, 2*opts.MaxRows)
	}
	b := &Batcher{
		w: w, opts: opts,
		freed:  make(chan struct{}),
		wake:   make(chan struct{}, 1),
		exited: make(chan struct{}),
	}
	b.bw, _ = w.(BatchWriter)
	b.sizer, _ = w.(GroupSizer)
	if st, ok := w.(Streamer); ok {
		st.StreamStarted()
		b.streamer = st
	}
	go b.run()
	return b
}

// Submit queues w for writing and returns; done is called exactly once,
// from the writer goroutine, with w's outcome (nil: committed). done must
// not wait on the Batcher. Submit blocks while the queue is full; it fails,
// and done is never called, when ctx ends first or the Batcher is closed.
// A queued write whose ctx ends before its group starts is not written
// (done gets ctx's error); once its transaction runs it commits or rolls
// back whole.
func (b *Batcher) Submit(ctx context.Context, w *DocumentWrite, done func(error)) error {
	_, err := b.submitJob(ctx, w, done, false)
	return err
}

// Write queues w and waits for its outcome. When ctx ends while w is still
// queued, it is withdrawn; once its transaction has started, Write waits
// for it to commit or roll back, so the error always says what happened.
func (b *Batcher) Write(ctx context.Context, w *DocumentWrite) error {
	res := make(chan error, 1)
	j, err := b.submitJob(ctx, w, func(err error) { res <- err }, true)
	if err != nil {
		return err
	}
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		if b.withdraw(j) {
			return ctx.Err()
		}
		return <-res
	}
}

// submitJob queues a job; waited marks one whose submitter waits for it
// (Write), which is never held back to fill a bigger group.
func (b *Batcher) submitJob(ctx context.Context, w *DocumentWrite, done func(error), waited bool) (*batchJob, error) {
	if w == nil {
		return nil, errors.New("batch writer: nil document write")
	}
	j := &batchJob{ctx: ctx, w: w, rows: w.Rows(), keys: keysOf(w), done: done, waited: waited}
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, ErrBatcherClosed
		}
		if len(b.queue) == 0 || b.rows+j.rows <= b.opts.MaxQueuedRows {
			j.queued = time.Now()
			b.lastArrival = j.queued
			b.queue = append(b.queue, j)
			b.rows += j.rows
			if j.waited {
				b.waiting++
			}
			b.mu.Unlock()
			b.signal()
			return j, nil
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-freed:
		}
	}
}

// withdraw takes a job off the queue if the writer has not taken it yet.
func (b *Batcher) withdraw(j *batchJob) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if j.settled {
		return false
	}
	i := slices.Index(b.queue, j)
	if i < 0 {
		return false
	}
	b.queue = slices.Delete(b.queue, i, i+1)
	b.dequeued(j)
	return true
}

// dequeued marks j as off the queue and wakes blocked submitters. b.mu held.
func (b *Batcher) dequeued(j *batchJob) {
	j.settled = true
	b.rows -= j.rows
	if j.waited {
		b.waiting--
	}
	close(b.freed)
	b.freed = make(chan struct{})
}

func (b *Batcher) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Close writes every queued document, waits for the writer to finish and
// stops it. Submit fails afterwards. Close is safe to call more than once.
func (b *Batcher) Close() error {
	b.mu.Lock()
	ended := !b.closed && b.streamer != nil
	b.closed = true
	b.mu.Unlock()
	b.signal()
	<-b.exited
	if ended {
		b.streamer.StreamEnded()
	}
	return nil
}

// Stats reports what the Batcher has done so far.
func (b *Batcher) Stats() BatchStats {
	return BatchStats{
		Documents:    b.documents.Load(),
		Transactions: b.transactions.Load(),
		Fallbacks:    b.fallbacks.Load(),
		Failed:       b.failed.Load(),
	}
}

func (b *Batcher) run() {
	defer close(b.exited)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		group, gone, wait, stop := b.next()
		for _, j := range gone {
			b.failed.Add(1)
			j.done(j.ctx.Err())
		}
		if stop {
			return
		}
		if len(group) > 0 {
			b.write(group)
			b.mu.Lock()
			b.lastWrite = time.Now()
			b.mu.Unlock()
			continue
		}
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-b.wake:
			case <-timer.C:
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
			continue
		}
		<-b.wake
	}
}

// next takes the next group off the queue when it is full, when its oldest
// document has waited MaxDelay, or when the Batcher is closing. Otherwise it
// returns how long to wait (0: until something arrives); stop is true once
// closed with nothing left. gone are jobs whose submitter gave up: they are
// never written.
func (b *Batcher) next() (group, gone []*batchJob, wait time.Duration, stop bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = slices.DeleteFunc(b.queue, func(j *batchJob) bool {
		if j.ctx.Err() == nil {
			return false
		}
		b.dequeued(j)
		gone = append(gone, j)
		return true
	})
	if len(b.queue) == 0 {
		return nil, gone, 0, b.closed
	}
	// A group can only be full when the queue holds enough for one, and
	// picking walks the whole queue: while a stream's big group fills, the
	// writer wakes for every arrival, and picking each time made the
	// writer's cost grow with the square of the group (a tenth of a 4x
	// ingest's CPU).
	var pick []*batchJob
	full := false
	if b.rows >= b.opts.MaxRows || len(b.queue) >= b.opts.MaxDocuments {
		pick, full = b.pick()
	}
	if !full && !b.closed {
		until := b.queue[0].queued.Add(b.opts.MaxDelay)
		if !b.lastWrite.IsZero() && b.rows < b.preferredRows() && b.waiting == 0 {
			// Producers may have waited on the store while the last group
			// was written (an ingest's claims share its write lock): the
			// gap counts from whichever came later.
			until = later(b.lastArrival, b.lastWrite).Add(b.opts.BulkGap)
			if limit := b.queue[0].queued.Add(b.opts.BulkDelay); limit.Before(until) {
				until = limit
			}
		}
		if wait := time.Until(until); wait > 0 {
			return nil, gone, wait, false
		}
	}
	if pick == nil {
		pick, _ = b.pick()
	}
	for _, j := range pick {
		b.dequeued(j)
	}
	b.queue = slices.DeleteFunc(b.queue, func(j *batchJob) bool { return j.settled })
	return pick, gone, 0, false
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// preferredRows is the size a group of a stream waits for.
func (b *Batcher) preferredRows() int {
	n := b.opts.MaxRows
	if b.sizer != nil {
		if p := b.sizer.PreferredGroupRows(); p > 0 {
			n = min(n, p)
		}
	}
	// The queue's own bound must not keep a group from filling.
	return min(n, b.opts.MaxQueuedRows*4/5)
}

// pick chooses the next group from the queue, in order: a job naming an id
// that an earlier job (picked or not) names waits for a later group, so
// conflicting writes keep their order. full reports that the limits, not the
// queue, ended the group. b.mu held.
func (b *Batcher) pick() (group []*batchJob, full bool) {
	used := map[string]bool{}
	rows := 0
	for _, j := range b.queue {
		conflict := false
		for _, k := range j.keys {
			if used[k] {
				conflict = true
				break
			}
		}
		for _, k := range j.keys {
			used[k] = true
		}
		if conflict {
			continue
		}
		if len(group) > 0 && rows+j.rows > b.opts.MaxRows {
			return group, true
		}
		group = append(group, j)
		rows += j.rows
		if len(group) >= b.opts.MaxDocuments || rows >= b.opts.MaxRows {
			return group, true
		}
	}
	return group, false
}

// write commits a group: in one transaction when the store can, else (or
// when that fails for reasons of its documents) one document at a time.
func (b *Batcher) write(group []*batchJob) {
	if b.bw == nil || len(group) == 1 {
		for _, j := range group {
			b.finish(j, b.w.WriteDocument(j.ctx, j.w), true)
		}
		return
	}
	ctx, release := groupContext(group)
	ws := make([]*DocumentWrite, len(group))
	for i, j := range group {
		ws[i] = j.w
	}
	err := b.bw.WriteDocuments(ctx, ws...)
	abandoned := ctx.Err() != nil
	release()
	if err == nil {
		b.transactions.Add(1)
		for _, j := range group {
			b.finish(j, nil, false)
		}
		return
	}
	if Fatal(err) || abandoned {
		for _, j := range group {
			b.finish(j, err, false)
		}
		return
	}
	b.fallbacks.Add(1)
	for _, j := range group {
		b.finish(j, b.w.WriteDocument(j.ctx, j.w), true)
	}
}

func (b *Batcher) finish(j *batchJob, err error, ownTx bool) {
	if err != nil {
		b.failed.Add(1)
	} else {
		b.documents.Add(1)
		if ownTx {
			b.transactions.Add(1)
		}
	}
	j.done(err)
}

// groupContext is cancelled once every job's context is done: a group's
// transaction is abandoned only when nobody is waiting for any of it.
func groupContext(group []*batchJob) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	left := atomic.Int64{}
	left.Store(int64(len(group)))
	stops := make([]func() bool, 0, len(group))
	for _, j := range group {
		stops = append(stops, context.AfterFunc(j.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		}))
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// RetryPause waits before attempt+1 of a write transaction that failed
// for a transient reason: 50 ms doubling to 2 s, with jitter so that two
// writers that deadlocked do not retry in step. It returns ctx's error if
// ctx ends first.
func RetryPause(ctx context.Context, attempt int) error {
	d := min(50*time.Millisecond<<min(attempt, 6), 2*time.Second)
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// keysOf lists the ids two writes in one group must not share.
func keysOf(w *DocumentWrite) []string {
	keys := make([]string, 0, 1+len(w.Replaces)+len(w.Chunks))
	keys = append(keys, "d\x00"+w.Document.ID)
	for _, id := range w.Replaces {
		keys = append(keys, "d\x00"+id)
	}
	for _, c := range w.Chunks {
		keys = append(keys, "c\x00"+c.ID)
	}
	return keys
}
