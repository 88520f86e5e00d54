package ann

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Writer updates an index file. One Writer holds a file at a time, across
// processes, through an exclusive lock on a companion file, path+".lock".
// A Writer is not safe for concurrent use.
type Writer struct {
	path   string
	opts   Options
	lockF  *os.File
	m      *mapped
	b      *builder
	s      searcher
	byID   map[int64]uint32
	code   []uint64 // scratch: the code of the vector being applied
	broken error    // set when an Apply stopped half-way; only Close works then

	// recovering is set when the file was dirty at open (a writer died in
	// Apply): the next Apply re-inserts every upsert, even an unchanged one,
	// because its node may be missing links.
	recovering bool
}

// compactFraction and compactMin decide when Apply compacts by itself:
// when deleted nodes are at least that fraction of all nodes, and at least
// that many.
const (
	compactFraction = 0.3
	compactMin      = 256
)

// OpenWriter opens the index at path for writing, creating an empty one
// when it is missing. If another writer holds it, OpenWriter waits until
// it is released or ctx ends (then the error wraps ErrLocked and the
// context's error). An existing file keeps its own dimension (which must
// equal o.Dim), M, EfConstruction and seed; Build makes a fresh file with
// o's.
//
// A damaged file, or one not an index file of this version, gives an error
// matching ErrCorrupt, and one made with another label ErrForeign: remove
// it and open again to start afresh, then Build from the caller's vectors.
// Opening checks the file as OpenReader does, except one left dirty by a
// writer that died in Apply, which cannot be checked (the next Apply
// computes all its sums again).
//
// Opening reads the ids and flags of all nodes (12 bytes each) to find
// nodes by id: a writer's start-up cost and memory grow with the index
// (117 ms for 473,000 vectors here, besides the check).
//
// Temporary files that a writer which died left beside path (a new file
// it had not yet renamed over the index) are removed: the lock says no
// writer is writing one now.
func OpenWriter(ctx context.Context, path string, o Options) (*Writer, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if !supported {
		return nil, fmt.Errorf("ann: %w", errors.ErrUnsupported)
	}
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := waitLock(ctx, lf); err != nil {
		lf.Close()
		return nil, err
	}
	w := &Writer{path: path, opts: o, lockF: lf}
	if err := w.open(); err != nil {
		lf.Close()
		return nil, err
	}
	return w, nil
}

func waitLock(ctx context.Context, f *os.File) error {
	delay := 5 * time.Millisecond
	for {
		ok, err := tryLock(f)
		if err != nil || ok {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %w", ErrLocked, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

func (w *Writer) open() error {
	removeTemps(w.path)
	// No other writer can be changing the file: the lock is held. A dirty
	// one cannot be checked (recovering, below).
	check := func(m *mapped, f *os.File) error {
		if atomic.LoadUint32(&m.v.h.Dirty) != 0 {
			return nil
		}
		return m.v.verify(f)
	}
	m, err := openMapped(w.path, true, check)
	if errors.Is(err, os.ErrNotExist) {
		l := makeLayout(w.opts.Dim, w.opts.M, 2*w.opts.M, w.opts.EfConstruction, w.opts.Seed, 1024, upperCapFor(1024, w.opts.M), w.opts.Label)
		tmp, nerr := newFile(w.path, l, nil)
		if nerr != nil {
			return nerr
		}
		if nerr := install(tmp, w.path); nerr != nil {
			return nerr
		}
		m, err = openMapped(w.path, true, nil)
	}
	if err != nil {
		return err
	}
	if label := m.v.l.label; label != w.opts.Label {
		m.close()
		return fmt.Errorf("%w: %s is labelled %q, not %q", ErrForeign, w.path, label, w.opts.Label)
	}
	if dim := m.v.l.dim; dim != w.opts.Dim {
		m.close()
		return fmt.Errorf("%w: %s has dimension %d, not %d", ErrMismatch, w.path, dim, w.opts.Dim)
	}
	w.recovering = atomic.LoadUint32(&m.v.h.Dirty) != 0
	w.use(m)
	return w.index()
}

// use makes m the writer's file.
func (w *Writer) use(m *mapped) {
	w.m = m
	m.v.changed = newBlockSet(m.v.l.blocks)
	w.b = newBuilder(m.v)
	w.code = make([]uint64, m.v.l.words)
}

// index finds every live node by id, and repairs what a crash can leave:
// the deleted count, and an id with two live nodes (the newer wins). The
// repairs are only ever needed in a dirty file, whose sums the next Apply
// computes again; a clean file that needs one has its sums brought up to
// date at once.
func (w *Writer) index() error {
	v := w.m.v
	n := v.count()
	w.byID = make(map[int64]uint32, n)
	deleted := uint32(0)
	repaired := false
	for i := range n {
		if v.deleted(i) {
			deleted++
			continue
		}
		id := v.ids[i]
		if old, ok := w.byID[id]; ok {
			atomic.OrUint32(&v.info[old], deletedBit)
			v.mark(unsafe.Pointer(&v.info[old]), 4)
			deleted++
			repaired = true
		}
		w.byID[id] = i
	}
	if atomic.LoadUint32(&v.h.Deleted) != deleted {
		atomic.StoreUint32(&v.h.Deleted, deleted)
		repaired = true
	}
	if repaired && atomic.LoadUint32(&v.h.Dirty) == 0 {
		return w.reseal(atomic.LoadUint64(&v.h.Gen))
	}
	return nil
}

// reseal computes again the sums of the blocks changed since the last
// reseal (of every used block while recovering from a dead writer's
// Apply) and the StateCRC for generation gen, and syncs the file; the
// caller then marks it clean. Nothing else may change the file meanwhile.
func (w *Writer) reseal(gen uint64) error {
	v := w.m.v
	if w.recovering {
		v.changed = usedBlocks(v.l, int(v.count()), int(atomic.LoadUint32(&v.h.UpperUsed)))
	}
	v.resum(v.changed)
	v.changed.reset()
	atomic.StoreUint32(&v.h.StateCRC, v.stateCRC(gen))
	return syncMap(w.m.data)
}

// writeAll writes data at the start of f and waits for it to reach the disk.
// The errors (*os.PathError) name the operation and the file.
func writeAll(f *os.File, data []byte) error {
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("ann: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("ann: %w", err)
	}
	return nil
}

// newFile writes a fresh index file beside path, laid out by l, with fill
// (when not nil) writing its contents, synced to disk. It returns the
// temporary file's name.
func newFile(path string, l layout, fill func(v *view) error) (string, error) {
	data, err := anonMap(l.size)
	if err != nil {
		return "", err
	}
	defer unmapFile(data)
	writeStatic(data, l)
	v := newView(data, l)
	if fill != nil {
		if err := fill(v); err != nil {
			return "", err
		}
	}
	return writeNewFile(path, v)
}

// tempPattern names the temporary files a writer writes beside path
// (os.CreateTemp puts digits for the star).
func tempPattern(path string) string { return filepath.Base(path) + ".*.tmp" }

// writeNewFile writes v, a whole file's image, with its sums, to a new
// file beside path, synced to disk, and returns the temporary file's name.
func writeNewFile(path string, v *view) (string, error) {
	v.seal()
	data := v.data
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return "", err
	}
	name := f.Name()
	// CreateTemp makes the file private; readers may run as other users.
	err = f.Chmod(0o644)
	if err == nil {
		err = writeAll(f, data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// removeTemps removes the temporary files of path's writers, which only a
// writer that died leaves: the caller holds the writer lock, under which
// they are made and renamed or removed.
func removeTemps(path string) int {
	dir := filepath.Dir(path)
	prefix, suffix, _ := strings.Cut(tempPattern(path), "*")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		mid, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if mid, ok = strings.CutSuffix(mid, suffix); !ok || mid == "" || strings.Trim(mid, "0123456789") != "" {
			continue
		}
		if os.Remove(filepath.Join(dir, name)) == nil {
			removed++
		}
	}
	return removed
}

// RemoveLeftovers removes the temporary files that writers of the index
// at path left when they died (an index image written but not yet renamed
// over the file: as large as the index), and reports how many. When a
// writer holds the index it does nothing: that writer may be writing one.
func RemoveLeftovers(path string) (int, error) {
	if !supported {
		return 0, nil
	}
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer lf.Close() // releases the lock
	ok, err := tryLock(lf)
	if err != nil || !ok {
		return 0, err
	}
	return removeTemps(path), nil
}

// install renames tmp over path and syncs the directory.
func install(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// replace installs tmp as the index file and switches the writer to it.
// The new file is not checked: this writer just wrote it, with its sums.
func (w *Writer) replace(tmp string) error {
	if err := install(tmp, w.path); err != nil {
		return err
	}
	m, err := openMapped(w.path, true, nil)
	if err != nil {
		return err
	}
	// Readers of the old file move to the new one at their next call.
	atomic.StoreUint32(&w.m.v.h.Replaced, 1)
	w.m.close()
	w.use(m)
	return w.index()
}

func (w *Writer) usable() error {
	if w.m == nil {
		return ErrClosed
	}
	return w.broken
}

// levelFor draws a node's level from its id, so that the same items make
// the same graph: P(level ≥ l) = m^-l, as HNSW's 1/ln(m) normalisation.
func levelFor(id int64, seed uint64, m int) int {
	x := splitmix(uint64(id) ^ splitmix(seed))
	u := (float64(x>>11) + 1) / (1 << 53)
	return min(int(-math.Log(u)/math.Log(float64(m))), maxLevel)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// haltSignal is panicked by testHookPublished to stop an Apply half-way,
// as a crash would.
type haltSignal struct{}

// testHookPublished, when set, runs after each node Apply publishes and
// before other nodes link to it; returning true stops the Apply there.
var testHookPublished func(node uint32) bool

var errHalted = errors.New("ann: apply halted by test hook")

// Apply deletes the ids in deletes, then adds or replaces the items in
// upserts, in order, and records gen as the index's generation. An item
// whose id exists is replaced (the old node is marked deleted) unless its
// vector codes exactly as before. Ids not in the index are ignored when
// deleted.
//
// The header is marked dirty (and synced) before the first change and
// clean, with gen, after all changes and the sums of the blocks they
// changed are synced. A writer that dies in between leaves a valid,
// searchable graph that may lack some of the changes; Reader.Generation
// and Stats still give the last clean generation, and applying every
// change made since then again repairs it (and computes every sum again:
// which blocks the dead writer changed is not known).
//
// When deleted and replaced nodes reach 30% of all nodes, Apply compacts
// the index (see Compact) after recording gen.
func (w *Writer) Apply(gen uint64, upserts []Item, deletes []int64) (err error) {
	if err := w.usable(); err != nil {
		return err
	}
	for _, it := range upserts {
		if len(it.Vec) != w.m.v.l.dim {
			return fmt.Errorf("%w: item %d has %d dimensions, index %d", ErrMismatch, it.ID, len(it.Vec), w.m.v.l.dim)
		}
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(haltSignal); !ok {
				panic(r)
			}
			w.broken, err = errHalted, errHalted
		}
	}()
	h := w.m.v.h
	// Seq goes odd before Dirty is set and even after it is cleared, so a
	// reader checking the file sees one or the other move.
	seq := (atomic.LoadUint32(&h.Seq) + 1) | 1
	atomic.StoreUint32(&h.Seq, seq)
	atomic.StoreUint32(&h.Dirty, 1)
	if err := syncMap(w.m.data[:headerSize]); err != nil {
		return err
	}
	for _, id := range deletes {
		if i, ok := w.byID[id]; ok {
			w.tombstone(i)
			delete(w.byID, id)
		}
	}
	if len(w.s.rot) < w.m.v.l.pdim {
		w.s.rot = make([]float32, w.m.v.l.pdim)
	}
	for _, it := range upserts {
		if err := w.upsert(it); err != nil {
			return err
		}
	}
	h = w.m.v.h // growth may have replaced the file
	if err := w.reseal(gen); err != nil {
		return err
	}
	atomic.StoreUint64(&h.Gen, gen)
	atomic.StoreUint32(&h.Dirty, 0)
	atomic.StoreUint32(&h.Seq, seq+1)
	if err := syncMap(w.m.data[:headerSize]); err != nil {
		return err
	}
	w.recovering = false
	if del, n := atomic.LoadUint32(&h.Deleted), w.m.v.count(); del >= compactMin && float64(del) >= compactFraction*float64(n) {
		return w.Compact()
	}
	return nil
}

func (w *Writer) tombstone(i uint32) {
	v := w.m.v
	if atomic.OrUint32(&v.info[i], deletedBit)&deletedBit == 0 {
		atomic.AddUint32(&v.h.Deleted, 1)
		v.mark(unsafe.Pointer(&v.info[i]), 4)
	}
}

func (w *Writer) upsert(it Item) error {
	v := w.m.v
	rot := w.s.rot[:v.l.pdim]
	w.m.rot.rotate(rot, it.Vec)
	scale := encode(w.code, rot)
	if old, ok := w.byID[it.ID]; ok {
		if !w.recovering && v.scale[old] == scale && slices.Equal(v.code(old), w.code) {
			return nil
		}
		w.tombstone(old)
		delete(w.byID, it.ID)
	}
	lvl := levelFor(it.ID, v.l.seed, v.l.m)
	if err := w.ensureRoom(lvl); err != nil {
		return err
	}
	v = w.m.v
	i := v.count()
	code := v.code(i)
	copy(code, w.code)
	v.scale[i] = scale
	v.ids[i] = it.ID
	atomic.StoreUint32(&v.info[i], uint32(lvl))
	// A writer that died may have left records in this unpublished slot.
	links := v.links0[int(i)*(v.l.m0+1) : int(i+1)*(v.l.m0+1)]
	clear(links)
	v.mark(unsafe.Pointer(&code[0]), uintptr(len(code))*8)
	v.mark(unsafe.Pointer(&v.scale[i]), 4)
	v.mark(unsafe.Pointer(&v.ids[i]), 8)
	v.mark(unsafe.Pointer(&v.info[i]), 4)
	v.mark(unsafe.Pointer(&links[0]), uintptr(len(links))*4)
	// Marked at every level: publishing the node extends the used part of
	// every array, and so the blocks the sums cover.
	v.mark(unsafe.Pointer(&v.upOff[i]), 4)
	if lvl > 0 {
		used := atomic.LoadUint32(&v.h.UpperUsed)
		v.upOff[i] = used
		lists := v.upper[used : int(used)+lvl*(v.l.m+1)]
		clear(lists)
		v.mark(unsafe.Pointer(&lists[0]), uintptr(len(lists))*4)
		atomic.StoreUint32(&v.h.UpperUsed, used+uint32(lvl*(v.l.m+1)))
	}
	w.b.insert(&w.s, i, i, lvl, v.l.efc, func() {
		atomic.StoreUint32(&v.h.Count, i+1)
		if testHookPublished != nil && testHookPublished(i) {
			panic(haltSignal{})
		}
	})
	w.byID[it.ID] = i
	return nil
}

// ensureRoom grows the file when it has no room for one more node of
// level lvl: a new file of twice the capacity, copied and renamed over the
// old one. Readers keep the old mapping until they Refresh.
func (w *Writer) ensureRoom(lvl int) error {
	v := w.m.v
	n := int(v.count())
	used := int(atomic.LoadUint32(&v.h.UpperUsed))
	need := lvl * (v.l.m + 1)
	if n < v.l.capacity && used+need <= v.l.upperCap {
		return nil
	}
	capacity := max(2*v.l.capacity, n+1024)
	upperCap := max(upperCapFor(capacity, v.l.m), 2*(used+need))
	l := makeLayout(v.l.dim, v.l.m, v.l.m0, v.l.efc, v.l.seed, capacity, upperCap, v.l.label)
	tmp, err := newFile(w.path, l, func(nv *view) error {
		copyNodes(nv, v, n, used)
		return nil
	})
	if err != nil {
		return err
	}
	return w.replace(tmp)
}

// copyNodes copies the first n nodes of src, and used upper-layer slots,
// into dst, a view of the same parameters with room for them, and the
// header's counts, entry, generation and flags (a file grown in the middle
// of an Apply stays dirty, with an odd Seq, until the Apply ends).
func copyNodes(dst, src *view, n, used int) {
	words := src.l.words
	copy(dst.codes, src.codes[:n*words])
	copy(dst.scale, src.scale[:n])
	copy(dst.ids, src.ids[:n])
	copy(dst.info, src.info[:n])
	copy(dst.upOff, src.upOff[:n])
	copy(dst.links0, src.links0[:n*(src.l.m0+1)])
	copy(dst.upper, src.upper[:used])
	dst.h.Count, dst.h.UpperUsed, dst.h.Entry = uint32(n), uint32(used), src.h.Entry
	dst.h.Deleted, dst.h.Dirty, dst.h.Gen = src.h.Deleted, src.h.Dirty, src.h.Gen
	dst.h.Seq = src.h.Seq
}

// liveCodes is the live (not deleted) nodes of v, to build a graph from.
func liveCodes(v *view) *codes {
	c := &codes{words: v.l.words}
	for i := range v.count() {
		if !v.deleted(i) {
			c.ids = append(c.ids, v.ids[i])
			c.scales = append(c.scales, v.scale[i])
			c.codes = append(c.codes, v.code(i)...)
		}
	}
	return c
}

// codes is a set of nodes to build a graph from.
type codes struct {
	words  int
	codes  []uint64
	scales []float32
	ids    []int64
}

func (c *codes) len() int { return len(c.ids) }

// Build replaces the index with a fresh one made from items (an initial
// build, or a migration), records gen as its generation, and renames the
// new file over the old atomically. It uses all cores. An id given twice
// keeps its last vector. The vectors are read during the call only.
func (w *Writer) Build(gen uint64, items iter.Seq2[int64, []float32]) error {
	if err := w.usable(); err != nil {
		return err
	}
	rot := newRotator(w.opts.Dim, w.opts.Seed)
	words := rot.pdim / 64
	c := &codes{words: words}
	at := make(map[int64]int)
	const batch = 2048
	var (
		bufVec  []float32
		bufID   []int64
		dropped []bool
		err     error
	)
	flush := func() {
		if len(bufID) == 0 {
			return
		}
		base := c.len()
		c.ids = append(c.ids, bufID...)
		c.scales = append(c.scales, make([]float32, len(bufID))...)
		c.codes = append(c.codes, make([]uint64, len(bufID)*words)...)
		dropped = append(dropped, make([]bool, len(bufID))...)
		parallel(len(bufID), func(lo, hi int) {
			r := make([]float32, rot.pdim)
			for j := lo; j < hi; j++ {
				rot.rotate(r, bufVec[j*rot.dim:(j+1)*rot.dim])
				c.scales[base+j] = encode(c.codes[(base+j)*words:(base+j+1)*words], r)
			}
		})
		// The last vector of an id wins: move it into the first one's slot.
		for j := base; j < c.len(); j++ {
			id := c.ids[j]
			if k, ok := at[id]; ok {
				copy(c.codes[k*words:(k+1)*words], c.codes[j*words:(j+1)*words])
				c.scales[k] = c.scales[j]
				dropped[j] = true
				continue
			}
			at[id] = j
		}
		bufVec, bufID = bufVec[:0], bufID[:0]
	}
	for id, vec := range items {
		if len(vec) != w.opts.Dim {
			err = fmt.Errorf("%w: item %d has %d dimensions, index %d", ErrMismatch, id, len(vec), w.opts.Dim)
			break
		}
		bufVec = append(bufVec, vec...)
		bufID = append(bufID, id)
		if len(bufID) == batch {
			flush()
		}
	}
	if err != nil {
		return err
	}
	flush()
	if len(at) != c.len() {
		c = c.compacted(func(i int) bool { return !dropped[i] })
	}
	return w.rebuild(c, gen, 0, w.opts)
}

// compacted is the subset of c for which keep is true.
func (c *codes) compacted(keep func(i int) bool) *codes {
	out := &codes{words: c.words}
	for i := range c.len() {
		if keep(i) {
			out.ids = append(out.ids, c.ids[i])
			out.scales = append(out.scales, c.scales[i])
			out.codes = append(out.codes, c.codes[i*c.words:(i+1)*c.words]...)
		}
	}
	return out
}

// Compact rebuilds the graph from the live nodes' codes, dropping deleted
// nodes, and renames the new file over the old one. The generation and
// dirty flag carry over.
func (w *Writer) Compact() error {
	if err := w.usable(); err != nil {
		return err
	}
	v := w.m.v
	c := liveCodes(v)
	o := Options{Dim: v.l.dim, M: v.l.m, EfConstruction: v.l.efc, Seed: v.l.seed, Label: v.l.label}
	return w.rebuild(c, atomic.LoadUint64(&v.h.Gen), atomic.LoadUint32(&v.h.Dirty), o)
}

// rebuild makes a new file holding the graph of c and installs it.
func (w *Writer) rebuild(c *codes, gen uint64, dirty uint32, o Options) error {
	n := c.len()
	capacity := max(1024, n+n/4)
	levels := make([]uint8, n)
	upper := 0
	for i, id := range c.ids {
		l := levelFor(id, o.Seed, o.M)
		levels[i] = uint8(l)
		upper += l * (o.M + 1)
	}
	upperCap := max(upperCapFor(capacity, o.M), upper+upper/4+64*(o.M+1))
	l := makeLayout(o.Dim, o.M, 2*o.M, o.EfConstruction, o.Seed, capacity, upperCap, o.Label)
	tmp, err := newFile(w.path, l, func(v *view) error {
		copy(v.codes, c.codes)
		copy(v.scale, c.scales)
		copy(v.ids, c.ids)
		used := uint32(0)
		for i, lvl := range levels {
			v.info[i] = uint32(lvl)
			if lvl > 0 {
				v.upOff[i] = used
				used += uint32(int(lvl) * (o.M + 1))
			}
		}
		v.h.UpperUsed = used
		v.h.Count = uint32(n)
		linkNodes(v, 0, uint32(n), 0)
		v.h.Gen, v.h.Dirty = gen, dirty
		return nil
	})
	if err != nil {
		return err
	}
	return w.replace(tmp)
}

// linkNodes links nodes [from, n) of v, whose records are written, on
// workers goroutines (all cores when workers < 1); deleted nodes are left
// out. The first nodes of a graph go in one at a time (warmNodes) so that
// the parallel inserts start from a graph with some shape.
func linkNodes(v *view, from, n uint32, workers int) {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	b := newBulkBuilder(v)
	g := new(group)
	for ; from < min(n, warmNodes); from++ {
		g.insert(b, from, from+1, n)
	}
	var next atomic.Uint32
	next.Store(from)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			g := new(group)
			for {
				i := next.Add(groupSize) - groupSize
				if i >= n {
					return
				}
				g.insert(b, i, min(n, i+groupSize), n)
			}
		})
	}
	wg.Wait()
}

// parallel runs f over [0, n) split into one range per core.
func parallel(n int, f func(lo, hi int)) {
	p := min(runtime.GOMAXPROCS(0), max(1, n/64))
	var wg sync.WaitGroup
	for k := range p {
		lo, hi := n*k/p, n*(k+1)/p
		wg.Go(func() { f(lo, hi) })
	}
	wg.Wait()
}

// Stats describes the index.
func (w *Writer) Stats() Stats {
	if w.m == nil {
		return Stats{}
	}
	v := w.m.v
	n := int(v.count())
	return Stats{
		Nodes:      n,
		Live:       liveCount(v),
		Deleted:    int(atomic.LoadUint32(&v.h.Deleted)),
		Capacity:   v.l.capacity,
		FileBytes:  int64(len(w.m.data)),
		Generation: atomic.LoadUint64(&v.h.Gen),
		Dirty:      atomic.LoadUint32(&v.h.Dirty) != 0,
	}
}

// Close unmaps the file and releases the lock. It does not clear a dirty
// header: that is for an Apply that finishes.
func (w *Writer) Close() error {
	if w.m == nil {
		return ErrClosed
	}
	err := w.m.close()
	w.m = nil
	if cerr := w.lockF.Close(); err == nil {
		err = cerr
	}
	return err
}
