package sqlite

import (
	"container/heap"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/ann"
	"github.com/docgraph/docgraph/store/pgraph"
)

// Vector search goes through an approximate nearest-neighbour index per
// kind of vector (store/ann), one file each beside the database
// (graph.db.ann-chunks, -entities, -relations): a cache of the vectors
// as of the generation the file records, never the source of truth.
//
// A writer process keeps the files up to date: a moment (syncIdle) after
// a commit, or once a stream of writes ends (a Batcher's run: an ingest,
// one event of watch mode), a goroutine reads the vectors the vector log
// names as changed since a file's generation and applies them (or builds
// the file anew, on every core, when most of it changed); Close waits
// until every file holds what this process wrote. During a stream nothing
// is indexed: a vector a bulk ingest changes in several of its groups is
// indexed once, and a new store is built in one pass (indexing costs some
// 65 us of CPU a vector). The log is then pruned up to what every file
// holds.
//
// A search reads one snapshot of the database: it searches the file,
// leaving out the ids the log says changed after the file's generation,
// and scores those exactly from the snapshot, so it answers for exactly
// the snapshot's state whatever the file lags. Candidates are re-scored
// with their exact vectors (from the vectors table, or made again by the
// merger for a reproducible embedder). Without a usable file, or when the
// log no longer reaches back to the file's generation, the search scans
// every vector, exactly; while a file lags behind by more than
// overlayLimit changes (another process is in the middle of a big write),
// those changes are left out instead, and found once the file catches up.
//
// A file checks itself when it is opened (store/ann: a CRC of every block
// it has in use, and a label naming the kind and this store's instance):
// a damaged file, one of an older format, or another kind's or another
// store's copied over it, is never searched; searches scan until a writer
// builds it again, which a writer does when it opens the store. So is a
// file that a writer died applying to (dirty), whose blocks cannot be
// checked: a writer builds it anew rather than repairing it in place.
const overlayLimit = 20_000

// syncIdle is how long after a commit the index files are brought up to
// date, so that a burst of small commits (watch mode) is indexed once.
const syncIdle = 250 * time.Millisecond

// annNames name the index file of each kind of vector.
var annNames = [3]string{"chunks", "entities", "relations"}

// logKeep is how many generations of the vector log are kept behind what
// every index file holds, so that a reader whose mapping is a little
// behind a file just replaced still finds its changes in the log.
const logKeep = 64

// annSet holds a store's index files.
type annSet struct {
	s     *Store
	kinds [3]*annKind

	// maintenance, in a writer process
	mu      sync.Mutex
	wake    chan struct{}
	wrote   int64     // newest generation this process committed
	wroteAt time.Time // when
	streams int       // Batcher runs under way
	synced  int64     // newest generation every file holds
	drafted int64     // newest generation draftStep was run for
	running bool
	done    chan struct{} // closed when the maintainer exits
	closing bool
	err     error // the last failure to bring the files up to date

	// The passage graph file (pgfile.go), kept by the same maintainer.
	pgNext    time.Time // no rebuild starts before, unless closing
	pgPending bool      // a rebuild waits for pgNext
	pgErr     error     // the last failure to build it (a cache: not the writer's)
	pgBuilds  atomic.Int64

	// What searches did, for tests: through a file, scanning every
	// vector, and vectors scored from the log beside a lagging file.
	searched, scanned, overlaid atomic.Int64
	// What the maintainer did, for tests: the generation its last draft
	// step covered, and the drafts it installed.
	draftedGen, installed atomic.Int64

	// What the maintainer's attempts to bring the files up to date came
	// to, for flush: how many began, the number of the last to end, the
	// generation every file held then and its error, and a channel closed
	// when the next one ends.
	begun, lastEnded int64
	held             int64
	lastErr          error
	attempted        chan struct{}
}

// annKind is the index file of one kind of vector.
type annKind struct {
	kind  int
	path  string
	label string // ann.Options.Label: the kind and the store instance

	mu       sync.Mutex
	r        *ann.Reader
	checked  time.Time // when a missing or unusable file was last looked for
	unusable bool
	bad      os.FileInfo // the file last found unusable: not checked again until it changes

	// The maintainer's draft of a file that a stream of writes is building
	// anew (see draftStep): the generation it holds, and whether this
	// stream found the file worth keeping instead.
	draft    *ann.Draft
	draftGen int64
	noDraft  bool
}

func newANNSet(s *Store) *annSet {
	a := &annSet{s: s, wake: make(chan struct{}, 1), attempted: make(chan struct{})}
	for k := range a.kinds {
		a.kinds[k] = &annKind{kind: k, label: annLabel(k, s.instance)}
		if s.path != ":memory:" && s.path != "" {
			a.kinds[k].path = s.path + ".ann-" + annNames[k]
		}
	}
	return a
}

// annLabel is what the index file of a kind of vector of the store
// instance says it holds: an index file copied over another's (another
// kind's, another store's) is so told apart.
func annLabel(kind int, instance string) string {
	return "docgraph " + annNames[kind] + " of " + instance
}

// open opens the kind's index file for reading: a file of another label
// is refused, with an error matching ann.ErrForeign.
func (k *annKind) open() (*ann.Reader, error) {
	r, err := ann.OpenReader(k.path)
	if err != nil {
		return nil, err
	}
	if l := r.Label(); l != k.label {
		r.Close()
		return nil, fmt.Errorf("%w: %s is labelled %q, not %q", ann.ErrForeign, k.path, l, k.label)
	}
	return r, nil
}

// reader returns the kind's index reader, nil when there is no usable file
// (looked for again at most every second; a file found damaged or foreign
// is not checked again until it changes).
func (k *annKind) reader() *ann.Reader {
	if k.path == "" {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.r != nil {
		// A file renamed over this one is checked as it is opened.
		if err := k.r.Refresh(); err != nil || k.r.Label() != k.label {
			k.r.Close()
			k.r, k.unusable, k.checked = nil, true, time.Now()
		}
		return k.r
	}
	if time.Since(k.checked) < time.Second {
		return nil
	}
	k.checked = time.Now()
	fi, err := os.Stat(k.path)
	if err != nil {
		k.unusable = !errors.Is(err, fs.ErrNotExist)
		return nil
	}
	if k.bad != nil && sameFile(fi, k.bad) {
		return nil
	}
	r, err := k.open()
	if err != nil {
		k.unusable = !errors.Is(err, fs.ErrNotExist)
		if errors.Is(err, ann.ErrCorrupt) || errors.Is(err, ann.ErrForeign) {
			k.bad = fi
		}
		return nil
	}
	k.r, k.unusable, k.bad = r, false, nil
	return r
}

func (k *annKind) close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.r == nil {
		return nil
	}
	err := k.r.Close()
	k.r = nil
	return err
}

// catchUp starts bringing the index files up to the store's generation
// when one is missing or behind (a store written by a process that
// stopped before it had indexed, an upgraded store): a writer does it
// when it opens, in the background.
func (a *annSet) catchUp(ctx context.Context) {
	if a.s.readOnly || a.kinds[0].path == "" {
		return
	}
	gen, err := a.s.generation(ctx)
	if err != nil || gen == 0 {
		return
	}
	a.removeLeftovers()
	if a.passageFileStale(ctx, a.s.rdb, true) {
		a.written(gen)
		return
	}
	for _, k := range a.kinds {
		// Opening checks the file: a damaged or foreign one is behind.
		r, err := k.open()
		behind := err != nil || int64(r.Generation()) < gen || r.Dirty()
		if r != nil {
			r.Close()
		}
		if behind {
			a.written(gen)
			return
		}
	}
}

// stream hears that a stream of writes started (+1) or ended (-1).
func (a *annSet) stream(delta int) {
	a.mu.Lock()
	a.streams += delta
	if a.streams == 0 {
		a.wroteAt = time.Time{} // index at once
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// written hears that this process committed generation gen: the
// maintainer brings the files up to it.
func (a *annSet) written(gen int64) {
	if a.s.readOnly || a.kinds[0].path == "" {
		return
	}
	a.mu.Lock()
	a.wrote, a.wroteAt = max(a.wrote, gen), time.Now()
	if !a.running && !a.closing {
		a.running, a.done = true, make(chan struct{})
		go a.maintain()
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// begin numbers an attempt to bring the files up to date.
func (a *annSet) begin() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.begun++
	return a.begun
}

// ended records how attempt n ended.
func (a *annSet) ended(n int64, err error) {
	a.mu.Lock()
	a.lastEnded, a.held, a.lastErr = n, a.synced, err
	close(a.attempted)
	a.attempted = make(chan struct{})
	a.mu.Unlock()
}

// flush brings the index files up to everything this process committed
// at once (not after syncIdle) and waits until they hold it. It returns
// the error of an attempt begun since that failed (the maintainer tries
// again later, and close waits for it again) or of the passage graph
// file's last build, or ctx's.
func (a *annSet) flush(ctx context.Context) error {
	if a.s.readOnly || a.kinds[0].path == "" {
		return nil
	}
	a.mu.Lock()
	if !a.running {
		a.mu.Unlock()
		return nil // nothing written, nothing to catch up with
	}
	target, start := a.wrote, a.begun
	a.wroteAt = time.Time{}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
	for {
		a.mu.Lock()
		held, last, err, pgErr, next := a.held, a.lastEnded, a.lastErr, a.pgErr, a.attempted
		a.mu.Unlock()
		switch {
		case last > start && err != nil:
			return err
		case held >= target && pgErr != nil:
			return fmt.Errorf("passage graph file: %w", pgErr)
		case held >= target:
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// maintain brings the index files up to what this process wrote, again
// after every new commit, until the store closes and nothing is left.
func (a *annSet) maintain() {
	defer close(a.done)
	for {
		a.mu.Lock()
		target, closing, at, streaming := a.wrote, a.closing, a.wroteAt, a.streams > 0
		a.mu.Unlock()
		if streaming && !closing {
			if a.draftStep(context.Background(), target) {
				continue
			}
			<-a.wake
			continue
		}
		for _, k := range a.kinds {
			k.noDraft = false // the next stream looks again
		}
		if wait := time.Until(at.Add(syncIdle)); a.synced < target && !closing && wait > 0 {
			select {
			case <-a.wake:
			case <-time.After(wait):
			}
			continue
		}
		if a.synced < target || a.pgPending && (closing || !time.Now().Before(a.pgNext)) {
			n := a.begin()
			err := a.sync(context.Background(), closing)
			a.ended(n, err)
			if err != nil {
				a.mu.Lock()
				a.err = err
				a.mu.Unlock()
				if closing {
					return
				}
				time.Sleep(time.Second)
				continue
			}
			continue
		}
		if closing {
			return
		}
		if a.pgPending {
			select {
			case <-a.wake:
			case <-time.After(time.Until(a.pgNext)):
			}
			continue
		}
		<-a.wake
	}
}

// SyncIndexes brings the store's index files (the vector index of each
// kind, the passage graph file) up to everything this handle wrote, at
// once, and waits until they hold it. They are caches: when they cannot be
// written (a full disk) searches stay correct, scanning every vector, and
// the next writer to open the store writes them. The error is for a run
// that must report it before it ends (Close waits for the files too, and
// fails the same way, but after a run's summary). A full disk matches
// store.ErrDiskFull.
func (s *Store) SyncIndexes(ctx context.Context) error {
	if s.ann == nil {
		return nil
	}
	err := s.ann.flush(ctx)
	if err == nil || ctx.Err() != nil {
		return err
	}
	if store.DiskFull(err) && !errors.Is(err, store.ErrDiskFull) {
		err = fmt.Errorf("%w: %w", store.ErrDiskFull, err)
	}
	return fmt.Errorf("sqlite store %s: %w", s.path, err)
}

// close waits until the files hold everything this process wrote, then
// closes them.
func (a *annSet) close() error {
	a.mu.Lock()
	a.closing = true
	running, done := a.running, a.done
	a.mu.Unlock()
	if running {
		select {
		case a.wake <- struct{}{}:
		default:
		}
		<-done
	}
	var errs []error
	for _, k := range a.kinds {
		if k.draft != nil { // the maintainer failed to install it
			k.draft.Close()
			k.draft = nil
		}
		errs = append(errs, k.close())
	}
	a.mu.Lock()
	errs = append(errs, a.err)
	a.mu.Unlock()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("vector index files: %w", err)
	}
	return nil
}

// sync brings every index file up to the store's current generation, and
// the passage graph file to its graph version, then prunes the vector log
// up to what every index file holds.
//
// The files are brought up to date at once, each from a read snapshot of
// its own (so each records the generation of the snapshot it read): a
// file's build reads its vectors (and makes derived ones again) on one
// core, and another file's graph build fills the other cores meanwhile.
func (a *annSet) sync(ctx context.Context, closing bool) error {
	s := a.s
	type synced struct {
		held, floor int64
		err         error
	}
	results := make([]synced, len(a.kinds)+1)
	var wg sync.WaitGroup
	for i, k := range a.kinds {
		wg.Go(func() {
			r := &results[i]
			r.err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
				gen, err := readGeneration(ctx, tx)
				if err != nil {
					return err
				}
				if r.floor, err = logFloor(ctx, tx); err != nil {
					return err
				}
				r.held, err = a.syncKind(ctx, tx, k, gen, r.floor)
				return err
			})
			if r.err != nil {
				r.err = fmt.Errorf("index %s: %w", annNames[k.kind], r.err)
			}
		})
	}
	wg.Go(func() {
		r := &results[len(a.kinds)]
		r.err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
			a.syncPassages(ctx, tx, closing)
			return nil
		})
	})
	wg.Wait()
	held := int64(math.MaxInt64)
	floor := int64(math.MaxInt64)
	for i, r := range results {
		if r.err != nil {
			return r.err
		}
		if i < len(a.kinds) {
			held, floor = min(held, r.held), min(floor, r.floor)
		}
	}
	a.synced = max(a.synced, held)
	if cut := held - logKeep; cut > floor {
		return s.retrying(ctx, func() error {
			wtx, err := s.wdb.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer wtx.Rollback()
			if _, err := wtx.ExecContext(ctx, `DELETE FROM vector_log WHERE gen <= ?`, cut); err != nil {
				return err
			}
			if _, err := wtx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES('vector_log_floor', ?)
				ON CONFLICT(key) DO UPDATE SET value = excluded.value`, strconv.FormatInt(cut, 10)); err != nil {
				return err
			}
			return wtx.Commit()
		})
	}
	return nil
}

// syncKind brings one file to generation gen of snapshot tx and returns
// the generation it holds (less when another process holds its lock).
func (a *annSet) syncKind(ctx context.Context, tx *sql.Tx, k *annKind, gen, floor int64) (int64, error) {
	s := a.s
	o := ann.Options{Dim: s.emb.Dimension, Label: k.label}
	lockCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	w, err := ann.OpenWriter(lockCtx, k.path, o)
	cancel()
	if errors.Is(err, ann.ErrCorrupt) || errors.Is(err, ann.ErrForeign) || errors.Is(err, ann.ErrMismatch) {
		// A cache: a damaged or foreign file (opening checked it) is made
		// again.
		os.Remove(k.path)
		w, err = ann.OpenWriter(ctx, k.path, o)
	}
	if errors.Is(err, ann.ErrLocked) {
		return 0, nil // another process is bringing it up to date
	}
	if err != nil {
		return 0, err
	}
	defer w.Close()
	if d := k.draft; d != nil {
		k.draft = nil
		if err := a.advanceDraft(ctx, tx, k, d, gen, floor); err == nil {
			// The snapshot is done with; linking the rest takes longer.
			tx.Rollback()
			if err := w.Install(d, uint64(gen)); err != nil {
				return 0, err
			}
			a.installed.Add(1)
			return gen, nil
		}
		d.Close() // built the usual way below
	}
	st := w.Stats()
	have := int64(st.Generation)
	if have >= gen && !st.Dirty {
		return have, nil
	}
	var changed int
	if have >= floor {
		if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT id) FROM vector_log WHERE kind = ? AND gen > ?`, k.kind, have).Scan(&changed); err != nil {
			return 0, err
		}
	}
	var total int
	if err := tx.QueryRowContext(ctx, kindCount(k.kind)).Scan(&total); err != nil {
		return 0, err
	}
	// A file the log cannot bring up to date, or one most of whose
	// vectors changed, is built anew, on every core. So is one a writer
	// died applying to: its blocks' sums are behind, so whatever the dead
	// writer left (or damage since) cannot be told from what it should
	// hold, and repairing it in place would vouch for it.
	if have < floor || st.Live == 0 || st.Dirty || changed > st.Live/2 || changed > total/2 {
		var ierr error
		vectors := s.kindVectors(ctx, tx, k.kind, nil, &ierr)
		// The snapshot is needed only while the vectors are read: its
		// connection goes back to the pool for the graph build, which
		// takes longer (syncs of the other files read meanwhile).
		released := func(yield func(int64, []float32) bool) {
			defer tx.Rollback()
			vectors(yield)
		}
		if err := w.Build(uint64(gen), released); err != nil {
			return 0, err
		}
		if ierr != nil {
			// Built from part of the vectors: the generation it records
			// is wrong, so the file goes, to be built again.
			os.Remove(k.path)
			return 0, fmt.Errorf("read vectors: %w", ierr)
		}
		return gen, nil
	}
	var ups []ann.Item
	dels, err := s.changedVectors(ctx, tx, k.kind, have, func(vs iter.Seq2[int64, []float32]) error {
		for id, v := range vs {
			ups = append(ups, ann.Item{ID: id, Vec: v})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := w.Apply(uint64(gen), ups, dels); err != nil {
		return 0, err
	}
	return gen, nil
}

// During a stream of writes (a bulk ingest), the files that the stream
// builds anew (missing, empty, or too old for the vector log to bring up
// to date) are drafted in memory instead of being left until the stream
// ends: after each commit the maintainer adds what changed to each draft
// and links it on one goroutine, on the core the single database writer
// leaves idle; when the stream ends, sync links the last commits' vectors
// on every core and installs the draft (ann.Writer.Install), so the file
// is written once. A vector a later commit changes again is replaced in
// the draft (its old node dropped when the draft is installed, if many
// were).

// draftStep brings the drafts up to the newest commit, as far as it gets
// before the stream ends; it reports whether there was a commit to draft. A draft that fails is dropped, and its file
// built the usual way when the stream ends.
func (a *annSet) draftStep(ctx context.Context, target int64) bool {
	if a.s.readOnly || a.kinds[0].path == "" || target <= a.drafted {
		return false
	}
	a.drafted = target
	for _, k := range a.kinds {
		if k.noDraft || a.streamOver() {
			continue
		}
		err := a.s.inSnapshot(ctx, func(tx *sql.Tx) error {
			gen, err := readGeneration(ctx, tx)
			if err != nil {
				return err
			}
			floor, err := logFloor(ctx, tx)
			if err != nil {
				return err
			}
			if k.draft == nil {
				if !k.rebuilt(floor) {
					k.noDraft = true
					return nil
				}
				d, err := ann.NewDraft(ann.Options{Dim: a.s.emb.Dimension, Label: k.label})
				if err != nil {
					return err
				}
				k.draft, k.draftGen = d, -1
			}
			return a.advanceDraft(ctx, tx, k, k.draft, gen, floor)
		})
		if err != nil {
			if k.draft != nil {
				k.draft.Close()
				k.draft = nil
			}
			k.noDraft = true
			continue
		}
		if k.draft != nil {
			// Once the stream is over, sync links the rest on every core.
			k.draft.LinkUntil(a.streamOver)
		}
	}
	a.draftedGen.Store(target)
	return true
}

// streamOver reports whether no stream of writes is under way any more
// (or the store is closing).
func (a *annSet) streamOver() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streams == 0 || a.closing
}

// rebuilt reports whether the kind's file would be built anew: it is
// missing, unusable or empty, or older than the vector log reaches.
func (k *annKind) rebuilt(floor int64) bool {
	r, err := k.open()
	if err != nil {
		return true
	}
	defer r.Close()
	return r.Len() == 0 || r.Dirty() || int64(r.Generation()) < floor
}

// advanceDraft adds to d what changed in snapshot tx (generation gen)
// since the generation d holds: every row of the kind for a new draft,
// else the ids the vector log names.
func (a *annSet) advanceDraft(ctx context.Context, tx *sql.Tx, k *annKind, d *ann.Draft, gen, floor int64) error {
	if gen <= k.draftGen {
		return nil
	}
	s := a.s
	if k.draftGen < 0 {
		var ierr error
		if err := d.Add(s.kindVectors(ctx, tx, k.kind, nil, &ierr)); err != nil {
			return err
		}
		if ierr != nil {
			return fmt.Errorf("read vectors: %w", ierr)
		}
	} else {
		if k.draftGen < floor {
			return errors.New("the vector log no longer reaches back to the draft")
		}
		gone, err := s.changedVectors(ctx, tx, k.kind, k.draftGen, d.Add)
		if err != nil {
			return err
		}
		d.Delete(gone...)
	}
	k.draftGen = gen
	return nil
}

// changedVectors hands add the vectors of the kind's rows that the vector
// log of snapshot tx says changed after generation since, and returns the
// ids it names that have no row any more (deleted).
func (s *Store) changedVectors(ctx context.Context, tx *sql.Tx, kind int, since int64, add func(iter.Seq2[int64, []float32]) error) ([]int64, error) {
	var ids []int64
	if err := collectInts(ctx, tx, &ids, `SELECT DISTINCT id FROM vector_log WHERE kind = ? AND gen > ?`, kind, since); err != nil {
		return nil, err
	}
	present := make(map[int64]bool, len(ids))
	var rerr error
	err := add(func(yield func(int64, []float32) bool) {
		for id, v := range s.kindVectors(ctx, tx, kind, ids, &rerr) {
			present[id] = true
			if !yield(id, v) {
				return
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, fmt.Errorf("read vectors: %w", rerr)
	}
	var gone []int64
	for _, id := range ids {
		if !present[id] {
			gone = append(gone, id)
		}
	}
	return gone, nil
}

// kindCount counts the rows of a kind that have vectors.
func kindCount(kind int) string {
	switch kind {
	case kindEntity:
		return `SELECT count(*) FROM entities`
	case kindRelation:
		return `SELECT count(*) FROM relations`
	}
	return `SELECT count(*) FROM vectors WHERE kind = 0`
}

// logFloor is the newest generation the vector log no longer holds: a file
// older than that cannot learn from the log what changed.
func logFloor(ctx context.Context, q querier) (int64, error) {
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'vector_log_floor'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// kindVectors yields the vectors of a kind's rows in snapshot q: of the
// keys given, or of every row (keys nil), a page at a time. A key with no
// row is not yielded. A failure stops the sequence and is left in *errp.
func (s *Store) kindVectors(ctx context.Context, q querier, kind int, keys []int64, errp *error) iter.Seq2[int64, []float32] {
	return func(yield func(int64, []float32) bool) {
		const page = 4096
		derived := kind != kindChunk && s.reembed != nil
		ecols, ejoin, rcols, rjoin := entityColumns, entityVector, relationColumns, relationVector
		if derived {
			// A reproducible embedder's entity and relation vectors are made
			// again rather than stored (Reembedder.WithoutVectors), so the
			// join finds nothing; yet it cost a descent of the vectors tree
			// per row, and per page a search of the WAL index, which grows
			// with the ingest: 2.5 of an x4 ingest's 100 CPU s.
			var some bool
			if err := q.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM vectors WHERE kind = ?)`, kind).Scan(&some); err != nil {
				*errp = err
				return
			}
			if !some {
				ecols, ejoin, rcols, rjoin = entityColumnsNoVector, entityCounts, relationColumnsNoVector, ""
			}
		}
		emit := func(query string, args ...any) (int, bool) {
			ids, vecs, err := s.readVectors(ctx, q, kind, derived, query, args)
			if err != nil {
				*errp = err
				return 0, false
			}
			for i, id := range ids {
				if !yield(id, vecs[i]) {
					return 0, false
				}
			}
			return len(ids), true
		}
		if keys == nil {
			// Every row, a page at a time by key.
			query := map[int]string{
				kindChunk:    `SELECT id, vec FROM vectors WHERE kind = 0 AND id > ? ORDER BY id LIMIT ?`,
				kindEntity:   `SELECT e.seq, ` + ecols + ` FROM entities e` + ejoin + ` WHERE e.seq > ? ORDER BY e.seq LIMIT ?`,
				kindRelation: `SELECT r.seq, ` + rcols + ` FROM relations r` + rjoin + ` WHERE r.seq > ? ORDER BY r.seq LIMIT ?`,
			}[kind]
			after := int64(-1 << 63)
			for {
				var last int64
				n := 0
				ok := true
				ids, vecs, err := s.readVectors(ctx, q, kind, derived, query, []any{after, page})
				if err != nil {
					*errp = err
					return
				}
				for i, id := range ids {
					if !yield(id, vecs[i]) {
						ok = false
						break
					}
					last = id
					n++
				}
				if !ok || len(ids) < page {
					return
				}
				after = last
			}
		}
		query := map[int]string{
			kindChunk:    `SELECT v.id, v.vec FROM json_each(?) j CROSS JOIN vectors v ON v.kind = 0 AND v.id = j.value`,
			kindEntity:   `SELECT e.seq, ` + ecols + ` FROM json_each(?) j CROSS JOIN entities e ON e.seq = j.value` + ejoin,
			kindRelation: `SELECT r.seq, ` + rcols + ` FROM json_each(?) j CROSS JOIN relations r ON r.seq = j.value` + rjoin,
		}[kind]
		for lo := 0; lo < len(keys); lo += page {
			if _, ok := emit(query, intList(keys[lo:min(lo+page, len(keys))])); !ok {
				return
			}
		}
	}
}

// readVectors runs one page of kindVectors' query: keys and vectors, the
// vectors of a reproducible embedder made again from their rows.
func (s *Store) readVectors(ctx context.Context, q querier, kind int, derived bool, query string, args []any) ([]int64, [][]float32, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ids []int64
	var vecs [][]float32
	var ents []store.Entity
	var rels []store.Relation
	for rows.Next() {
		var id int64
		switch kind {
		case kindChunk:
			var blob []byte
			if err := rows.Scan(&id, &blob); err != nil {
				return nil, nil, err
			}
			v, err := decodeVec(blob)
			if err != nil {
				return nil, nil, err
			}
			vecs = append(vecs, v)
		case kindEntity:
			e, err := scanEntityKeyed(rows, &id)
			if err != nil {
				return nil, nil, err
			}
			ents = append(ents, e)
		case kindRelation:
			r, err := scanRelationKeyed(rows, &id)
			if err != nil {
				return nil, nil, err
			}
			rels = append(rels, r)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	switch kind {
	case kindEntity:
		if derived {
			if err := s.entityVectors(ctx, ents); err != nil {
				return nil, nil, err
			}
		}
		for _, e := range ents {
			vecs = append(vecs, e.Embedding)
		}
	case kindRelation:
		if derived {
			if err := s.relationVectors(ctx, rels); err != nil {
				return nil, nil, err
			}
		}
		for _, r := range rels {
			vecs = append(vecs, r.Embedding)
		}
	}
	// A row without a vector (none stored, none to make) is not indexed.
	out := ids[:0]
	outV := vecs[:0]
	for i, v := range vecs {
		if v != nil {
			out, outV = append(out, ids[i]), append(outV, v)
		}
	}
	return out, outV, nil
}

// vectorSearch returns the k rows of a kind nearest to q by cosine in
// snapshot db, best first, and whether it returned every row there is.
func (s *Store) vectorSearch(ctx context.Context, db querier, kind int, q []float32, k int) ([]scored, bool, error) {
	r := s.ann.kinds[kind].reader()
	if r == nil {
		s.ann.scanned.Add(1)
		return s.exactScan(ctx, db, kind, q, k)
	}
	gen, err := readGeneration(ctx, db)
	if err != nil {
		return nil, false, err
	}
	have := int64(r.Generation())
	var changed []int64
	if have < gen || r.Dirty() {
		floor, err := logFloor(ctx, db)
		if err != nil {
			return nil, false, err
		}
		if have < floor {
			s.ann.scanned.Add(1)
			return s.exactScan(ctx, db, kind, q, k)
		}
		if err := collectInts(ctx, db, &changed, `SELECT DISTINCT id FROM vector_log WHERE kind = ? AND gen > ? AND gen <= ? LIMIT ?`,
			kind, have, gen, overlayLimit+1); err != nil {
			return nil, false, err
		}
		if len(changed) > overlayLimit {
			changed = nil // left out until the file catches up
		}
	}
	s.ann.searched.Add(1)
	s.ann.overlaid.Add(int64(len(changed)))
	skip := make(map[int64]bool, len(changed))
	for _, id := range changed {
		skip[id] = true
	}
	qn := norm(q)
	// Exact scores in full precision: the index ranks by float32, which
	// would tie (and order by id) cosines an exact scan tells apart.
	full := map[int64]float64{}
	exact := func(ids []int64) ([]float32, error) {
		scores := make([]float32, len(ids))
		at := make(map[int64]int, len(ids))
		for i, id := range ids {
			at[id] = i
		}
		var verr error
		for id, v := range s.kindVectors(ctx, db, kind, ids, &verr) {
			c := cosine(q, qn, v)
			full[id] = c
			scores[at[id]] = float32(c)
		}
		return scores, verr
	}
	hits, err := r.Search(q, k, ann.SearchOptions{Exact: exact, Skip: func(id int64) bool { return skip[id] }})
	if err != nil {
		return nil, false, fmt.Errorf("vector index %s: %w", annNames[kind], err)
	}
	h := &minHeap{}
	for _, hit := range hits {
		score, ok := full[hit.ID]
		if !ok {
			score = float64(hit.Score)
		}
		offer(h, k, scored{hit.ID, score})
	}
	if len(changed) > 0 {
		var verr error
		for id, v := range s.kindVectors(ctx, db, kind, changed, &verr) {
			offer(h, k, scored{id, cosine(q, qn, v)})
		}
		if verr != nil {
			return nil, false, verr
		}
	}
	out := []scored(*h)
	sortScored(out)
	return out, len(out) < k, nil
}

// exactScan scores every vector of a kind: the search without an index.
func (s *Store) exactScan(ctx context.Context, db querier, kind int, q []float32, k int) ([]scored, bool, error) {
	qn := norm(q)
	h := &minHeap{}
	n := 0
	var verr error
	for id, v := range s.kindVectors(ctx, db, kind, nil, &verr) {
		n++
		offer(h, k, scored{id, cosine(q, qn, v)})
	}
	if verr != nil {
		return nil, false, verr
	}
	out := []scored(*h)
	sortScored(out)
	return out, n <= k, nil
}

// cosine is the cosine of q (of norm qn) and v.
func cosine(q []float32, qn float64, v []float32) float64 {
	if len(v) != len(q) || qn == 0 {
		return 0
	}
	var dot float64
	for i, x := range q {
		dot += float64(x) * float64(v[i])
	}
	vn := norm(v)
	if vn == 0 {
		return 0
	}
	return dot / (qn * vn)
}

// minHeap keeps the best k scores seen, the worst on top.
type minHeap []scored

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].id > h[j].id
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer adds c to the best k in h.
func offer(h *minHeap, k int, c scored) {
	if h.Len() < k {
		heap.Push(h, c)
		return
	}
	if (*h)[0].score < c.score || (*h)[0].score == c.score && (*h)[0].id > c.id {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
}

// passageFileStale reports whether the passage graph file is missing or
// holds another version than snapshot q's, or, when verify asks, is
// damaged anywhere (the whole file is read: a writer does when it opens).
func (a *annSet) passageFileStale(ctx context.Context, q querier, verify bool) bool {
	pg := a.s.pg
	if pg == nil {
		return false
	}
	version, err := graphVersion(ctx, q)
	if err != nil {
		return false
	}
	f, err := pgraph.Open(pg.path)
	if err != nil {
		return true
	}
	defer f.Close()
	if verify && f.Verify() != nil {
		// Damaged: gone, so that the build does not take it for current.
		os.Remove(pg.path)
		return true
	}
	return f.Version() != version || f.Instance() != a.s.instance
}

// syncPassages brings the passage graph file to snapshot tx's graph
// version: at once when closing or when the last build is old enough,
// else later (pgPending), so that a stream of small commits rebuilds it
// at most once per ten times a build's length. A failure leaves the old
// file, which queries see is stale, and is kept in pgErr.
func (a *annSet) syncPassages(ctx context.Context, tx *sql.Tx, closing bool) {
	if a.s.pg == nil || !a.passageFileStale(ctx, tx, false) {
		a.pgPending = false
		return
	}
	if !closing && time.Now().Before(a.pgNext) {
		a.pgPending = true
		return
	}
	a.pgPending = false
	version, err := graphVersion(ctx, tx)
	if err == nil {
		start := time.Now()
		err = a.s.writePassageFile(ctx, tx, version)
		a.pgNext = time.Now().Add(10 * time.Since(start))
	}
	a.mu.Lock()
	a.pgErr = err
	a.mu.Unlock()
	if err == nil {
		a.pgBuilds.Add(1)
	}
}

// removeLeftovers removes the new index files that writers which died
// left beside the store (ann.RemoveLeftovers: at x4 the relation index's
// is 115 MB), and passage graph files a writer was writing when it
// stopped (pgraph.Write's temporary names), once old enough that none is
// being written.
func (a *annSet) removeLeftovers() {
	for _, k := range a.kinds {
		// Under each index's writer lock: not a file a writer in another
		// process is writing now.
		_, _ = ann.RemoveLeftovers(k.path)
	}
	if a.s.pg == nil {
		return
	}
	dir, prefix := filepath.Split(a.s.pg.path)
	entries, _ := os.ReadDir(filepath.Clean(dir))
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix+".tmp-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
