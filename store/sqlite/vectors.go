package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// encodeVector stores a vector as little-endian float32s; nil stays NULL.
func encodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// vecIndex is an in-memory copy of one table's vectors, L2-normalised so a
// dot product is the cosine; loaded from a sidecar, the matrix is a private
// mapping of the file rather than a copy. It is loaded on the first search, patched by
// this process's writes, and when the store's write generation moved without
// it (another process wrote) patched from the vector log (veclog.go), or
// reloaded when the log cannot say what changed.
type vecIndex struct {
	table string // counted to size the matrix
	query string // selects id, doc id (or ''), embedding
	// sizes is query with the embedding's length in bytes for the
	// embedding, in the same order (streamFile's first pass).
	sizes string
	file  string // sidecar cache of the matrix; "" for none
	// instance is the store's random id, written into the sidecar.
	instance string

	mu     sync.RWMutex
	loaded bool
	gen    int64
	dim    int
	ids    []string
	docs   []string
	vecs   []float32 // len(ids)*dim; may point into mapped
	slot   map[string]int
	// mapped is the sidecar mapping x.vecs was loaded from, if any. It is
	// unmapped only under mu and once x.vecs no longer points into it.
	mapped []byte
	// catchUps counts loads served by the vector log, for tests.
	catchUps atomic.Int64
}

func newVecIndex(table, query string) *vecIndex { return &vecIndex{table: table, query: query} }

// vecUpdate is one row's change, applied after its transaction committed.
type vecUpdate struct {
	id, doc string
	vec     []float32 // nil removes
}

// ensure makes the index reflect generation gen, loading it if needed.
func (x *vecIndex) ensure(ctx context.Context, db *sql.DB, gen int64) error {
	x.mu.RLock()
	ok := x.loaded && x.gen == gen
	x.mu.RUnlock()
	if ok {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.loaded && x.gen == gen {
		return nil
	}
	tx, g, err := snapshot(ctx, db)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if ok, err := x.catchUp(ctx, tx, g); err != nil {
		return fmt.Errorf("catch up: %w", err)
	} else if ok {
		return nil
	}
	if x.loadFile(x.file, g) == nil {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+x.table).Scan(&n); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, x.query)
	if err != nil {
		return err
	}
	defer rows.Close()
	x.reset()
	x.ids, x.docs = make([]string, 0, n), make([]string, 0, n)
	x.slot = make(map[string]int, n)
	var blob sql.RawBytes // decoded before the next row, so never copied
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc, &blob); err != nil {
			x.reset()
			return err
		}
		if x.dim == 0 && len(blob) >= 4 {
			x.dim = len(blob) / 4
			// One allocation for the whole matrix, not a doubling per append.
			x.vecs = make([]float32, 0, n*x.dim)
		}
		x.putBlob(id, doc, blob)
	}
	if err := rows.Err(); err != nil {
		x.reset()
		return err
	}
	x.loaded, x.gen = true, g
	x.saveFile(x.file)
	return nil
}

func (x *vecIndex) reset() {
	x.loaded = false
	x.dim = 0
	x.ids, x.docs, x.vecs = nil, nil, nil
	x.slot = map[string]int{}
	x.releaseMap()
}

// apply patches a loaded index from generation from to generation to; an
// index at any other generation is left to reload on its next search.
func (x *vecIndex) apply(from, to int64, ups []vecUpdate) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.loaded && x.gen == to:
		return // a search loaded the committed state already
	case !x.loaded || x.gen != from:
		x.loaded = false
		return
	}
	for _, u := range ups {
		if u.vec == nil {
			x.remove(u.id)
		} else {
			x.put(u.id, u.doc, u.vec)
		}
	}
	x.gen = to
	x.releaseMap() // growth may have moved the matrix to the heap
}

// put inserts or replaces a vector (normalised copy). Vectors whose length
// differs from the first one seen are ignored: they cannot be compared.
func (x *vecIndex) put(id, doc string, v []float32) {
	if len(v) == 0 {
		x.remove(id)
		return
	}
	if x.dim == 0 {
		x.dim = len(v)
	}
	if len(v) != x.dim {
		x.remove(id)
		return
	}
	i := x.slotFor(id, doc)
	dst := x.vecs[i*x.dim : (i+1)*x.dim]
	copy(dst, v)
	normalize(dst)
}

// putBlob is put for a stored little-endian vector, decoded in place.
func (x *vecIndex) putBlob(id, doc string, blob []byte) {
	if len(blob) == 0 || len(blob) != 4*x.dim {
		x.remove(id)
		return
	}
	i := x.slotFor(id, doc)
	dst := x.vecs[i*x.dim : (i+1)*x.dim]
	for j := range dst {
		dst[j] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*j:]))
	}
	normalize(dst)
}

// normalize scales v in place to unit length, summing in float64; it
// reports false for a zero vector, which it leaves zero.
func normalize(v []float32) bool {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	inv := float32(0)
	if n > 0 {
		inv = float32(1 / math.Sqrt(n))
	}
	for j := range v {
		v[j] *= inv
	}
	return n != 0
}

// slotFor returns id's slot, appending a zeroed one if it is new.
func (x *vecIndex) slotFor(id, doc string) int {
	i, ok := x.slot[id]
	if !ok {
		i = len(x.ids)
		x.slot[id] = i
		x.ids = append(x.ids, id)
		x.docs = append(x.docs, doc)
		x.vecs = slices.Grow(x.vecs, x.dim)[:len(x.vecs)+x.dim]
		clear(x.vecs[i*x.dim:])
	}
	x.docs[i] = doc
	return i
}

// remove deletes by moving the last slot into the hole.
func (x *vecIndex) remove(id string) {
	i, ok := x.slot[id]
	if !ok {
		return
	}
	last := len(x.ids) - 1
	if i != last {
		x.ids[i], x.docs[i] = x.ids[last], x.docs[last]
		copy(x.vecs[i*x.dim:(i+1)*x.dim], x.vecs[last*x.dim:])
		x.slot[x.ids[i]] = i
	}
	x.ids, x.docs = x.ids[:last], x.docs[:last]
	x.vecs = x.vecs[:last*x.dim]
	delete(x.slot, id)
}

// scored is a search candidate.
type scored struct {
	id    string
	score float64
}

// better orders hits: higher score first, then id, so ties are deterministic.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.id < b.id
}

// topK is a bounded min-heap (worst hit at the root) of at most k hits.
type topK struct {
	k int
	h []scored
}

func (t *topK) offer(c scored) {
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		t.up(len(t.h) - 1)
		return
	}
	if !better(c, t.h[0]) {
		return
	}
	t.h[0] = c
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(t.h[p], t.h[i]) {
			break
		}
		t.h[p], t.h[i] = t.h[i], t.h[p]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.h)
	for {
		w := i
		l, r := 2*i+1, 2*i+2
		if l < n && better(t.h[w], t.h[l]) {
			w = l
		}
		if r < n && better(t.h[w], t.h[r]) {
			w = r
		}
		if w == i {
			return
		}
		t.h[w], t.h[i] = t.h[i], t.h[w]
		i = w
	}
}

// parallelMin is the number of floats below which one goroutine scans.
const parallelMin = 1 << 19

// search returns the k best cosine matches of q, best first, skipping slots
// whose doc id skip reports. A query of another dimension matches nothing.
func (x *vecIndex) search(q []float32, k int, skip func(doc string) bool) []scored {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if k <= 0 || len(x.ids) == 0 || len(q) != x.dim {
		return nil
	}
	qn := slices.Clone(q)
	if !normalize(qn) {
		return nil
	}

	total := len(x.ids)
	parts := 1
	if total*x.dim >= parallelMin {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	heaps := make([]topK, parts)
	var wg sync.WaitGroup
	per := (total + parts - 1) / parts
	for p := 0; p < parts; p++ {
		lo, hi := p*per, min((p+1)*per, total)
		heaps[p] = topK{k: k}
		scan := func(h *topK) {
			for i := lo; i < hi; i++ {
				s := float64(dot(qn, x.vecs[i*x.dim:(i+1)*x.dim]))
				if len(h.h) == h.k && s < h.h[0].score {
					continue
				}
				if skip != nil && skip(x.docs[i]) {
					continue
				}
				h.offer(scored{id: x.ids[i], score: s})
			}
		}
		if parts == 1 {
			scan(&heaps[p])
			continue
		}
		wg.Add(1)
		go func(h *topK) { defer wg.Done(); scan(h) }(&heaps[p])
	}
	wg.Wait()
	merged := topK{k: k}
	for _, h := range heaps {
		for _, c := range h.h {
			merged.offer(c)
		}
	}
	out := merged.h
	sort.Slice(out, func(i, j int) bool { return better(out[i], out[j]) })
	return out
}

// dot is the inner loop of every vector search; unrolled because the
// compiler does not vectorise it.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
