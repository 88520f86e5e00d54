package ann

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
)

// mapped is one open index file.
type mapped struct {
	fi   os.FileInfo
	data []byte
	v    *view
	rot  *rotator
}

// openMapped maps the file at path and checks its header, then runs check
// (when not nil) with the open file: the contents are the caller's to
// check (a reader's checked, a writer's verify).
func openMapped(path string, write bool, check func(m *mapped, f *os.File) error) (*mapped, error) {
	if !supported {
		return nil, fmt.Errorf("ann: %w", errors.ErrUnsupported)
	}
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < headerSize {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrCorrupt, path, fi.Size())
	}
	if fi.Size() > math.MaxInt {
		return nil, fmt.Errorf("%w: %s: too large", ErrCorrupt, path)
	}
	data, err := mapFile(f, fi.Size(), write)
	if err != nil {
		return nil, err
	}
	l, err := parseLayout(data)
	if err != nil {
		unmapFile(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &mapped{fi: fi, data: data, v: newView(data, l), rot: newRotator(l.dim, l.seed)}
	if check != nil {
		if err := check(m, f); err != nil {
			m.close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return m, nil
}

func (m *mapped) close() error {
	if m == nil {
		return nil
	}
	err := unmapFile(m.data)
	m.data, m.v = nil, nil
	return err
}

// Reader searches an index file. It is safe for concurrent use; a writer
// in this or another process may update the file meanwhile, and searches
// see its changes as they are published, including a new file the writer
// renamed over the old one (growth, Build, Compact).
type Reader struct {
	path string
	mu   sync.RWMutex // held for reading by searches, for writing by Refresh and Close
	m    *mapped
	pool sync.Pool
}

// OpenReader maps the index at path and checks it: every block holding
// published records is read and compared with its CRC, so the cost grows
// with the index (12-13 ms for x4's relation index, 133 MB, in the page
// cache; 1.2-1.6 ms for its chunk index, 7 MB). A missing file gives an
// error matching fs.ErrNotExist; a damaged one, or one not an index file
// of this version, ErrCorrupt. A file a writer is applying to (or died
// applying to: Dirty) cannot be checked and is opened as it is. Label
// says what the file holds: the caller compares it with its own.
func OpenReader(path string) (*Reader, error) {
	m, err := openChecked(path)
	if err != nil {
		return nil, err
	}
	return &Reader{path: path, m: m}, nil
}

// openChecked maps the file at path for reading and checks it.
func openChecked(path string) (*mapped, error) {
	return openMapped(path, false, func(m *mapped, f *os.File) error {
		_, err := m.v.checked(f)
		return err
	})
}

// follow moves to the newer file when a writer has marked this one
// replaced. An error leaves the reader on the old file, which stays valid;
// Refresh reports it.
func (r *Reader) follow() {
	r.mu.RLock()
	stale := r.m != nil && atomic.LoadUint32(&r.m.v.h.Replaced) != 0
	r.mu.RUnlock()
	if stale {
		r.Refresh()
	}
}

// Refresh picks up a file that a writer replaced (Build, Compact, growth).
// Search, Generation, Len and Dirty do so by themselves when the writer
// marked the old file replaced, as it does before letting go of it; Refresh
// also catches a replacement whose writer died before marking (it stats
// the path). Changes applied in place need no refresh.
func (r *Reader) Refresh() error {
	r.mu.RLock()
	cur := r.m
	r.mu.RUnlock()
	if cur == nil {
		return ErrClosed
	}
	fi, err := os.Stat(r.path)
	if err != nil {
		return err
	}
	if os.SameFile(fi, cur.fi) {
		return nil
	}
	m, err := openChecked(r.path)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.m == nil {
		r.mu.Unlock()
		m.close()
		return ErrClosed
	}
	old := r.m
	r.m = m
	r.mu.Unlock()
	return old.close()
}

// Close unmaps the file. Searches under way finish first.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.m.close()
	r.m = nil
	return err
}

// Generation is the last generation a writer fully applied.
func (r *Reader) Generation() uint64 {
	r.follow()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.m == nil {
		return 0
	}
	return atomic.LoadUint64(&r.m.v.h.Gen)
}

// Dirty reports that a writer started an Apply that has not finished (it
// may be under way, or it crashed): the index may lack some changes made
// after Generation.
func (r *Reader) Dirty() bool {
	r.follow()
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m != nil && atomic.LoadUint32(&r.m.v.h.Dirty) != 0
}

// Len is the number of vectors searches can return.
func (r *Reader) Len() int {
	r.follow()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.m == nil {
		return 0
	}
	return liveCount(r.m.v)
}

// Label is the label the file was made with (Options.Label).
func (r *Reader) Label() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.m == nil {
		return ""
	}
	return r.m.v.l.label
}

// Dim is the dimension of the index's vectors.
func (r *Reader) Dim() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.m == nil {
		return 0
	}
	return r.m.v.l.dim
}

func liveCount(v *view) int {
	return max(0, int(v.count())-int(atomic.LoadUint32(&v.h.Deleted)))
}

// Search returns up to k nearest ids to q by cosine similarity, best
// first.
func (r *Reader) Search(q []float32, k int, o SearchOptions) ([]Hit, error) {
	r.follow()
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.m == nil {
		return nil, ErrClosed
	}
	s, _ := r.pool.Get().(*searcher)
	if s == nil {
		s = new(searcher)
	}
	defer r.pool.Put(s)
	return search(r.m.v, r.m.rot, s, q, k, o)
}

func search(v *view, rot *rotator, s *searcher, q []float32, k int, o SearchOptions) ([]Hit, error) {
	if len(q) != v.l.dim {
		return nil, fmt.Errorf("%w: query has %d dimensions, index %d", ErrMismatch, len(q), v.l.dim)
	}
	if k <= 0 {
		return nil, nil
	}
	n := v.count()
	ef := o.Ef
	if ef <= 0 {
		ef = DefaultEf
		if n > 250_000 {
			ef *= 2 // recall falls as the graph grows
		}
	}
	ef = max(ef, k)
	rerank := o.Rerank
	if rerank <= 0 {
		rerank = DefaultRerank
	}
	rerank = min(max(rerank, k), ef)

	ep, top, ok := v.entry(n)
	if !ok {
		return nil, nil
	}
	if len(s.rot) < v.l.pdim {
		s.rot = make([]float32, v.l.pdim)
	}
	if !rot.rotate(s.rot, q) {
		return nil, nil
	}
	if len(s.lut) < v.l.words {
		s.lut = make([]lutWord, v.l.words)
	}
	s.lut = s.lut[:v.l.words]
	fillLUT(s.lut, s.rot)
	s.qcode = nil

	cur := cand{s.sim(v, ep), ep}
	for l := top; l > 0; l-- {
		cur = s.greedy(v, n, cur, l)
	}
	keep := func(i uint32) bool {
		return !v.deleted(i) && (o.Skip == nil || !o.Skip(v.ids[i]))
	}
	s.searchLayer(v, n, append(s.out[:0], cur), ef, 0, keep)
	res := s.sortedRes()
	if len(res) > rerank {
		res = res[:rerank]
	}
	if o.Exact != nil && len(res) > 0 {
		s.ids = s.ids[:0]
		for _, c := range res {
			s.ids = append(s.ids, v.ids[c.n])
		}
		scores, err := o.Exact(s.ids)
		if err != nil {
			return nil, err
		}
		if len(scores) != len(res) {
			return nil, fmt.Errorf("ann: Exact returned %d scores for %d ids", len(scores), len(res))
		}
		for i := range res {
			res[i].s = scores[i]
		}
		slices.SortStableFunc(res, func(a, b cand) int { return cmpSim(a.s, b.s) })
	}
	res = res[:min(k, len(res))]
	hits := make([]Hit, len(res))
	for i, c := range res {
		hits[i] = Hit{ID: v.ids[c.n], Score: c.s}
	}
	return hits, nil
}
