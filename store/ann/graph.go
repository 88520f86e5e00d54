package ann

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// view is a file's arrays, read and written in place through its mapping.
// Neighbour slots, list counts, info words and the mutable header fields
// change while readers search, so they are only touched with atomic loads
// and stores; codes, scales and ids of a node are written once, before the
// node is published.
type view struct {
	l      layout
	h      *header
	codes  []uint64
	scale  []float32
	ids    []int64
	info   []uint32
	upOff  []uint32
	links0 []uint32
	upper  []uint32

	base unsafe.Pointer // the mapping's first byte
	data []byte         // the whole mapping
	// changed, in a writer's file, collects the blocks an Apply wrote,
	// whose sums it computes again when it ends (checksum.go).
	changed *blockSet
}

func sliceAt[T any](b []byte, off int64, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[off])), n)
}

func newView(b []byte, l layout) *view {
	c := l.capacity
	return &view{
		l:      l,
		h:      (*header)(unsafe.Pointer(&b[0])),
		base:   unsafe.Pointer(&b[0]),
		data:   b,
		codes:  sliceAt[uint64](b, l.codes, c*l.words),
		scale:  sliceAt[float32](b, l.scale, c),
		ids:    sliceAt[int64](b, l.ids, c),
		info:   sliceAt[uint32](b, l.info, c),
		upOff:  sliceAt[uint32](b, l.upOff, c),
		links0: sliceAt[uint32](b, l.links0, c*(1+l.m0)),
		upper:  sliceAt[uint32](b, l.upper, l.upperCap),
	}
}

// count is the number of published nodes (bounded by the capacity, in
// case the file was damaged after it was opened).
func (v *view) count() uint32 { return min(atomic.LoadUint32(&v.h.Count), uint32(v.l.capacity)) }

func (v *view) code(i uint32) []uint64 {
	w := v.l.words
	return v.codes[int(i)*w : int(i)*w+w : int(i)*w+w]
}

func (v *view) level(i uint32) int { return int(atomic.LoadUint32(&v.info[i]) & levelMask) }

func (v *view) deleted(i uint32) bool { return atomic.LoadUint32(&v.info[i])&deletedBit != 0 }

// block is node i's list at layer l: the count word followed by the
// slots. It is nil when the node has no list there or the file's records
// for it are out of range (a damaged file), so a search just skips it.
func (v *view) block(i uint32, l int) []uint32 {
	if l == 0 {
		s := v.l.m0 + 1
		return v.links0[int(i)*s : int(i)*s+s : int(i)*s+s]
	}
	if l > v.level(i) {
		return nil
	}
	s := v.l.m + 1
	base := int(v.upOff[i]) + (l-1)*s
	if base+s > int(atomic.LoadUint32(&v.h.UpperUsed)) || base < 0 {
		return nil
	}
	return v.upper[base : base+s : base+s]
}

// entry returns the entry node and the top level, or ok false when the
// graph is empty (or its entry is not yet published).
func (v *view) entry(n uint32) (node uint32, top int, ok bool) {
	e := atomic.LoadUint64(&v.h.Entry)
	if e == noEntry || uint32(e) >= n {
		return 0, 0, false
	}
	return uint32(e), min(int(e>>32), maxLevel), true
}

// cand is a node with its similarity to the query (higher is closer).
type cand struct {
	s float32
	n uint32
}

// maxHeap keeps the closest candidate on top; minHeap the farthest.
type (
	maxHeap []cand
	minHeap []cand
)

func (h *maxHeap) push(c cand) {
	a := append(*h, c)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].s >= c.s {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = c
	*h = a
}

func (h *maxHeap) pop() cand {
	a := *h
	top := a[0]
	last := a[len(a)-1]
	a = a[:len(a)-1]
	n := len(a)
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1].s > a[c].s {
			c++
		}
		if last.s >= a[c].s {
			break
		}
		a[i] = a[c]
		i = c
	}
	if n > 0 {
		a[i] = last
	}
	*h = a
	return top
}

func (h *minHeap) push(c cand) {
	a := append(*h, c)
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].s <= c.s {
			break
		}
		a[i] = a[p]
		i = p
	}
	a[i] = c
	*h = a
}

// replaceTop puts c in place of the farthest candidate.
func (h minHeap) replaceTop(c cand) {
	n := len(h)
	i := 0
	for {
		k := 2*i + 1
		if k >= n {
			break
		}
		if k+1 < n && h[k+1].s < h[k].s {
			k++
		}
		if c.s <= h[k].s {
			break
		}
		h[i] = h[k]
		i = k
	}
	h[i] = c
}

func (h *minHeap) pop() cand {
	a := *h
	top := a[0]
	last := a[len(a)-1]
	a = a[:len(a)-1]
	n := len(a)
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && a[c+1].s < a[c].s {
			c++
		}
		if last.s <= a[c].s {
			break
		}
		a[i] = a[c]
		i = c
	}
	if n > 0 {
		a[i] = last
	}
	*h = a
	return top
}

// searcher is the reusable state of one search or insertion: visited set,
// heaps, the query in its two forms, and output buffers.
type searcher struct {
	visited []uint64
	touched []uint32 // words of visited that are not zero
	cands   maxHeap
	res     minHeap
	out     []cand
	rot     []float32
	lut     []lutWord // asymmetric estimator (search)
	qcode   []uint64  // symmetric Hamming (construction)
	sel     [maxLevel + 1][]cand
	batch   []cand
	touch   uint64 // sink for the touch loop, so it is not optimised away
	tmp     []cand
	tmp2    []cand
	ids     []int64
	scores  []float32
	ls      layerSearch
	cq, rq  buckets // a construction search's candidates and results
}

// buckets holds nodes by Hamming distance, a list per distance. A
// construction search's distances are small integers (at most the code's
// bits), so its candidates and results are kept in buckets, where a push
// or pop is a step or two, rather than in binary heaps, whose sifting took
// a fifth of a build's CPU. Building x1's relation index: 0.79x the CPU,
// with the same recall.
type buckets struct {
	b      [][]uint32
	n      int
	lo, hi int // every node is in b[lo..hi]
}

// reset empties q for distances 0 to maxD.
func (q *buckets) reset(maxD int) {
	for d := q.lo; d <= q.hi && d < len(q.b); d++ {
		q.b[d] = q.b[d][:0]
	}
	if len(q.b) < maxD+1 {
		q.b = make([][]uint32, maxD+1)
	}
	q.n, q.lo, q.hi = 0, maxD+1, -1
}

func (q *buckets) push(d int, n uint32) {
	q.b[d] = append(q.b[d], n)
	q.n++
	q.lo, q.hi = min(q.lo, d), max(q.hi, d)
}

// peekClosest is a node at the smallest distance.
func (q *buckets) peekClosest() (uint32, bool) {
	if q.n == 0 {
		return 0, false
	}
	for len(q.b[q.lo]) == 0 {
		q.lo++
	}
	l := q.b[q.lo]
	return l[len(l)-1], true
}

// popClosest removes a node at the smallest distance; q is not empty.
func (q *buckets) popClosest() (int, uint32) {
	n, _ := q.peekClosest()
	q.b[q.lo] = q.b[q.lo][:len(q.b[q.lo])-1]
	q.n--
	return q.lo, n
}

// farthest is the largest distance held; q is not empty.
func (q *buckets) farthest() int {
	for len(q.b[q.hi]) == 0 {
		q.hi--
	}
	return q.hi
}

// popFarthest removes a node at the largest distance; q is not empty.
func (q *buckets) popFarthest() {
	d := q.farthest()
	q.b[d] = q.b[d][:len(q.b[d])-1]
	q.n--
}

func (s *searcher) resetVisited(n uint32) {
	for _, w := range s.touched {
		s.visited[w] = 0
	}
	s.touched = s.touched[:0]
	if need := int(n+63) / 64; len(s.visited) < need {
		s.visited = make([]uint64, need+need/4)
		// visitNew appends without growing: a word is listed once, and
		// it writes one slot past the last.
		s.touched = make([]uint32, 0, len(s.visited)+1)
	}
}

// visitNew marks the nodes of blk[1:1+cnt] below n and appends the ones
// not seen before to batch. It is free of branches on the visited bits,
// which are as good as random and cost a misprediction each.
func (s *searcher) visitNew(blk []uint32, cnt int, n uint32, batch []cand) []cand {
	k := len(batch)
	batch = batch[:k+cnt]
	touched := s.touched
	t := len(touched)
	touched = touched[:cap(touched)]
	vis := s.visited
	for j := 1; j <= cnt; j++ {
		nb := atomic.LoadUint32(&blk[j])
		if nb >= n { // never true in a sound file
			continue
		}
		w := nb >> 6
		bit := uint64(1) << (nb & 63)
		x := vis[w]
		vis[w] = x | bit
		batch[k] = cand{n: nb}
		k += int((x&bit)>>(nb&63)) ^ 1
		touched[t] = w
		if x == 0 {
			t++
		}
	}
	s.touched = touched[:t]
	return batch[:k]
}

// visit marks node i and reports whether it was new.
func (s *searcher) visit(i uint32) bool {
	w := i >> 6
	b := uint64(1) << (i & 63)
	x := s.visited[w]
	if x&b != 0 {
		return false
	}
	if x == 0 {
		s.touched = append(s.touched, w)
	}
	s.visited[w] = x | b
	return true
}

func (s *searcher) sim(v *view, i uint32) float32 {
	if s.lut != nil {
		return dotLUT(s.lut, v.code(i)) * v.scale[i]
	}
	return -float32(hamming(s.qcode, v.code(i)))
}

// greedy walks layer l from cur to a local best.
func (s *searcher) greedy(v *view, n uint32, cur cand, l int) cand {
	for changed := true; changed; {
		changed = false
		blk := v.block(cur.n, l)
		if blk == nil {
			break
		}
		cnt := min(int(atomic.LoadUint32(&blk[0])), len(blk)-1)
		if havePrefetch {
			// Upper-layer nodes are scattered over the whole graph: asked
			// for together, their codes arrive in the time of one load
			// rather than one after another.
			s.prefetchCodes(v, blk[1:1+cnt], n)
		}
		for j := 1; j <= cnt; j++ {
			nb := atomic.LoadUint32(&blk[j])
			if nb >= n {
				continue
			}
			if sc := s.sim(v, nb); sc > cur.s {
				cur, changed = cand{sc, nb}, true
			}
		}
	}
	return cur
}

// prefetchCodes asks for the codes (and scales, for a reader's search) of
// the nodes of list below n, as fetchAhead does for a batch.
func (s *searcher) prefetchCodes(v *view, list []uint32, n uint32) {
	w := v.l.words
	for j := range list {
		if nb := atomic.LoadUint32(&list[j]); nb < n {
			prefetch(unsafe.Pointer(&v.codes[int(nb)*w]))
			if s.lut != nil {
				prefetch(unsafe.Pointer(&v.scale[nb]))
			}
		}
	}
}

// searchLayer is the beam search of layer l from eps, keeping the ef best
// nodes that keep accepts (all when keep is nil) in s.res; nodes it rejects
// are still traversed.
func (s *searcher) searchLayer(v *view, n uint32, eps []cand, ef, l int, keep func(uint32) bool) {
	s.beginLayer(v, n, eps, ef, l, keep)
	for s.expand() {
		s.score()
	}
}

// layerSearch is what the steps of a beam search need between calls.
type layerSearch struct {
	v    *view
	n    uint32
	ef   int
	l    int
	keep func(uint32) bool
	ham  bool // a construction search: s.cq and s.rq in place of the heaps
}

// beginLayer starts a beam search of layer l from eps; expand and score
// then run it a step at a time, so that two searches can take turns on one
// goroutine (group.insert).
func (s *searcher) beginLayer(v *view, n uint32, eps []cand, ef, l int, keep func(uint32) bool) {
	s.ls = layerSearch{v: v, n: n, ef: ef, l: l, keep: keep, ham: s.lut == nil && keep == nil}
	s.resetVisited(n)
	if s.ls.ham {
		maxD := 64 * v.l.words
		s.cq.reset(maxD)
		s.rq.reset(maxD)
		for _, e := range eps {
			if s.visit(e.n) {
				d := int(-e.s)
				s.cq.push(d, e.n)
				s.rq.push(d, e.n)
			}
		}
		return
	}
	s.cands, s.res = s.cands[:0], s.res[:0]
	for _, e := range eps {
		if !s.visit(e.n) {
			continue
		}
		s.cands.push(e)
		if keep == nil || keep(e.n) {
			s.res.push(e)
		}
	}
}

// expand takes the closest candidate, gathers its neighbours not seen
// before into s.batch and asks for their codes; it reports false when the
// search is done. score, which reads those codes, should come as late as
// other work allows.
func (s *searcher) expand() bool {
	v, l := s.ls.v, s.ls.l
	for {
		c, ok := s.popNext()
		if !ok {
			break
		}
		blk := v.block(c, l)
		if blk == nil {
			continue
		}
		cnt := min(int(atomic.LoadUint32(&blk[0])), len(blk)-1)
		// Gather the new neighbours first and score them in a loop of
		// their own: their codes are cache misses, and with no
		// data-dependent branch between them the CPU overlaps the loads.
		if cap(s.batch) < cnt {
			s.batch = make([]cand, 0, len(blk))
		}
		s.batch = s.visitNew(blk, cnt, s.ls.n, s.batch[:0])
		s.fetchAhead(v, s.batch, l)
		return true
	}
	s.cands = s.cands[:0]
	return false
}

// score scores the batch expand gathered and keeps the good ones.
func (s *searcher) score() {
	v, ef, keep := s.ls.v, s.ls.ef, s.ls.keep
	batch := s.batch
	if s.lut != nil {
		for k := range batch {
			batch[k].s = dotLUT(s.lut, v.code(batch[k].n)) * v.scale[batch[k].n]
		}
	} else {
		for k := range batch {
			batch[k].s = -float32(hamming(s.qcode, v.code(batch[k].n)))
		}
	}
	if s.ls.ham {
		for _, c := range batch {
			d := int(-c.s)
			if s.rq.n < ef {
				s.cq.push(d, c.n)
				s.rq.push(d, c.n)
			} else if d < s.rq.farthest() {
				s.cq.push(d, c.n)
				s.rq.push(d, c.n)
				s.rq.popFarthest()
			}
		}
		return
	}
	for _, c := range batch {
		if len(s.res) < ef {
			s.cands.push(c)
			if keep == nil || keep(c.n) {
				s.res.push(c)
			}
		} else if c.s > s.res[0].s {
			s.cands.push(c)
			if keep == nil || keep(c.n) {
				s.res.replaceTop(c)
			}
		}
	}
}

// fetchAhead starts loading what the next steps read: the codes (and, for
// a search, the scales) of the batch about to be scored, and the list of
// the node likely expanded next (above layer 0, after reading where it
// is). They are cache misses once the graph outgrows the cache. A
// prefetch asks for each line without waiting (0.95x the CPU of touching
// them, building x1's relation index and x4's entity index); without one,
// every code is touched in a loop short enough for all the misses to be in
// flight at once, where the scoring loop, long per node, lets the CPU run
// ahead by a few nodes only.
func (s *searcher) fetchAhead(v *view, batch []cand, l int) {
	w := v.l.words
	nx, haveNext := s.peekNext()
	var next []uint32
	if l == 0 && haveNext {
		base := int(nx) * (v.l.m0 + 1)
		next = v.links0[base : base+v.l.m0+1]
	}
	if havePrefetch {
		for j := 0; j < len(next); j += 16 {
			prefetch(unsafe.Pointer(&next[j]))
		}
		if len(next) > 0 {
			prefetch(unsafe.Pointer(&next[len(next)-1]))
		}
		for _, c := range batch {
			prefetch(unsafe.Pointer(&v.codes[int(c.n)*w]))
		}
		if s.lut != nil {
			for _, c := range batch {
				prefetch(unsafe.Pointer(&v.scale[c.n]))
			}
		}
		if l > 0 && haveNext && int(nx) < len(v.upOff) {
			// An upper list's place is read from upOff first: read it now,
			// while the codes above are on their way.
			prefetch(unsafe.Pointer(&v.info[nx]))
			base := int(v.upOff[nx]) + (l-1)*(v.l.m+1)
			if base >= 0 && base+v.l.m+1 <= len(v.upper) {
				prefetch(unsafe.Pointer(&v.upper[base]))
				prefetch(unsafe.Pointer(&v.upper[base+v.l.m]))
			}
		}
		return
	}
	var touch uint64
	if len(next) > 0 {
		touch = uint64(next[0])
	}
	if s.lut != nil {
		for _, c := range batch {
			touch += v.codes[int(c.n)*w] + uint64(math.Float32bits(v.scale[c.n]))
		}
	} else { // Hamming needs no scale
		for _, c := range batch {
			touch += v.codes[int(c.n)*w]
		}
	}
	s.touch += touch
}

// popNext takes the closest candidate, or reports false when none is left
// or the closest is farther than the ef results held.
func (s *searcher) popNext() (uint32, bool) {
	ef := s.ls.ef
	if s.ls.ham {
		if s.cq.n == 0 {
			return 0, false
		}
		d, c := s.cq.popClosest()
		return c, s.rq.n < ef || d <= s.rq.farthest()
	}
	if len(s.cands) == 0 {
		return 0, false
	}
	c := s.cands.pop()
	return c.n, len(s.res) < ef || c.s >= s.res[0].s
}

// peekNext is the candidate expand would take next.
func (s *searcher) peekNext() (uint32, bool) {
	if s.ls.ham {
		return s.cq.peekClosest()
	}
	if len(s.cands) == 0 {
		return 0, false
	}
	return s.cands[0].n, true
}

// sortedRes moves the search's results into s.out, closest first (by
// node number among equals).
func (s *searcher) sortedRes() []cand {
	if s.ls.ham {
		s.out = s.out[:0]
		for d := s.rq.lo; d <= s.rq.hi; d++ {
			from := len(s.out)
			for _, n := range s.rq.b[d] {
				s.out = append(s.out, cand{-float32(d), n})
			}
			slices.SortFunc(s.out[from:], func(a, b cand) int { return int(a.n) - int(b.n) })
		}
		return s.out
	}
	s.out = append(s.out[:0], s.res...)
	slices.SortFunc(s.out, func(a, b cand) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return int(a.n) - int(b.n)
	})
	return s.out
}

// builder inserts nodes into a view's graph by their codes (Hamming
// similarity between sign codes), from one goroutine or several.
type builder struct {
	v     *view
	locks []sync.Mutex // striped by node number: guards writes of a node's lists
	top   sync.Mutex   // guards raising the entry point
	// dead, when not nil, holds the deleted bits of the nodes below
	// 64*len(dead), copied by newBulkBuilder: a bit per node stays in
	// the cache where the info words (32 bits each) do not.
	dead []uint64
}

func newBuilder(v *view) *builder { return &builder{v: v, locks: make([]sync.Mutex, 1024)} }

// newBulkBuilder is newBuilder for linking many nodes while none is
// deleted (Build, a draft's steps): it copies the deleted bits once.
func newBulkBuilder(v *view) *builder {
	b := newBuilder(v)
	if atomic.LoadUint32(&v.h.Deleted) == 0 {
		return b
	}
	n := v.count()
	b.dead = make([]uint64, (n+63)/64)
	for i := range n {
		if v.deleted(i) {
			b.dead[i>>6] |= 1 << (i & 63)
		}
	}
	return b
}

// deleted reports whether node i is deleted.
func (b *builder) deleted(i uint32) bool {
	if w := int(i >> 6); w < len(b.dead) {
		return b.dead[w]&(1<<(i&63)) != 0
	}
	return b.v.deleted(i)
}

func (b *builder) lock(i uint32) *sync.Mutex { return &b.locks[i&1023] }

// selectNeighbors is HNSW's diversity heuristic over cands (closest to base
// first): a candidate is kept when it is closer to base than to every one
// kept before it. Deleted nodes are never chosen.
func (b *builder) selectNeighbors(dst, cands []cand, max int) []cand {
	dst = dst[:0]
	// Whether a node is deleted can be a cache miss, so it is asked only
	// of the candidates the heuristic would keep, and not at all while no
	// node is deleted. The kept ones are all live, so the order of the two
	// tests changes nothing else. (Asked of every candidate in the info
	// words, the lookups took 3.4% of an x4 ingest's CPU, whose drafts
	// hold replaced nodes; a bulk builder's bits take less again.)
	anyDeleted := atomic.LoadUint32(&b.v.h.Deleted) != 0
	for _, c := range cands {
		if len(dst) >= max {
			break
		}
		cc := b.v.code(c.n)
		good := true
		for _, o := range dst {
			if -float32(hamming(cc, b.v.code(o.n))) > c.s {
				good = false
				break
			}
		}
		if good && !(anyDeleted && b.deleted(c.n)) {
			dst = append(dst, c)
		}
	}
	return dst
}

// insert links node i, whose code, scale, id and info are written, into the
// graph. Nodes below n may be searched. publish runs after i's own lists
// are written and before any other node links to i.
func (b *builder) insert(s *searcher, i, n uint32, lvl int, efc int, publish func()) {
	top, ok := b.descend(s, i, n, lvl, efc, publish)
	if !ok {
		return
	}
	s.searchLayer(b.v, n, s.out, efc, 0, nil)
	b.link(s, i, lvl, top, publish)
}

const (
	// groupSize is how many inserts one goroutine runs at once (group).
	groupSize = 4
	// warmNodes are the first nodes of a graph, inserted one at a time
	// so that inserts at once start from a graph with some shape.
	warmNodes = 512
)

// group inserts nodes a few at a time on one goroutine, taking turns
// between their layer-0 searches: each asks for the codes it will score
// next, then the others work while those arrive. A lone search waits on
// each of those loads once the graph outgrows the caches (building x4's
// relation index: 0.9x the CPU; x1's, whose graph fits the cache: 1.0x).
// The nodes of a group are as nodes inserted by goroutines at once: none
// finds the others.
type group struct {
	ss   [groupSize]searcher
	ids  [groupSize]uint32
	lvl  [groupSize]int
	top  [groupSize]int
	live [groupSize]bool
	did  [groupSize]bool
}

// insert links the nodes of [lo, hi), at most groupSize, that are not
// deleted; nodes below n may be searched.
func (g *group) insert(b *builder, lo, hi, n uint32) {
	v, efc := b.v, b.v.l.efc
	ids := g.ids[:0]
	for i := lo; i < hi; i++ {
		if !b.deleted(i) {
			ids = append(ids, i)
		}
	}
	for k, i := range ids {
		s := &g.ss[k]
		g.lvl[k] = v.level(i)
		g.top[k], g.live[k] = b.descend(s, i, n, g.lvl[k], efc, nil)
		if g.live[k] {
			s.beginLayer(v, n, s.out, efc, 0, nil)
		}
		g.did[k] = g.live[k]
	}
	for busy := true; busy; {
		busy = false
		for k := range ids {
			if g.live[k] {
				g.live[k] = g.ss[k].expand()
				busy = busy || g.live[k]
			}
		}
		for k := range ids {
			if g.live[k] {
				g.ss[k].score()
			}
		}
	}
	for k, i := range ids {
		if g.did[k] {
			b.link(&g.ss[k], i, g.lvl[k], g.top[k], nil)
		}
	}
}

// descend finds node i's neighbours on the layers above 0 and leaves in
// s.out where the layer-0 search starts, returning the top level it saw;
// ok is false when i became the entry of an empty graph (and is done).
func (b *builder) descend(s *searcher, i, n uint32, lvl int, efc int, publish func()) (top int, ok bool) {
	v := b.v
	s.lut, s.qcode = nil, v.code(i)
	ep, top, ok := v.entry(n)
	if !ok {
		b.top.Lock()
		if _, _, ok = v.entry(n); !ok {
			if publish != nil {
				publish()
			}
			atomic.StoreUint64(&v.h.Entry, uint64(i)|uint64(lvl)<<32)
			b.top.Unlock()
			return 0, false
		}
		b.top.Unlock()
		ep, top, _ = v.entry(n)
	}
	cur := cand{s.sim(v, ep), ep}
	for l := top; l > lvl; l-- {
		cur = s.greedy(v, n, cur, l)
	}
	eps := append(s.out[:0], cur)
	for l := min(lvl, top); l >= 1; l-- {
		s.searchLayer(v, n, eps, efc, l, nil)
		eps = s.sortedRes()
		s.sel[l] = b.selectNeighbors(s.sel[l], eps, v.l.m)
	}
	s.out = eps
	return top, true
}

// link ends an insertion whose layer-0 search has run: it picks i's
// layer-0 neighbours, writes i's lists, publishes i and links it back from
// its neighbours.
func (b *builder) link(s *searcher, i uint32, lvl, top int, publish func()) {
	v := b.v
	s.sel[0] = b.selectNeighbors(s.sel[0], s.sortedRes(), v.l.m)
	for l := min(lvl, top); l >= 0; l-- {
		b.setList(i, l, s.sel[l])
	}
	if publish != nil {
		publish()
	}
	for l := min(lvl, top); l >= 0; l-- {
		for _, c := range s.sel[l] {
			b.addLink(s, c.n, i, l)
		}
	}
	if lvl > top {
		b.top.Lock()
		if _, t, _ := v.entry(math.MaxUint32); lvl > t {
			atomic.StoreUint64(&v.h.Entry, uint64(i)|uint64(lvl)<<32)
		}
		b.top.Unlock()
	}
}

func (b *builder) maxLinks(l int) int {
	if l == 0 {
		return b.v.l.m0
	}
	return b.v.l.m
}

// setList writes node i's own list at layer l. Another builder goroutine
// may already have linked back to i there (it met i as an entry point one
// layer up), so those links are merged in rather than overwritten.
func (b *builder) setList(i uint32, l int, sel []cand) {
	blk := b.v.block(i, l)
	if blk == nil {
		return
	}
	mu := b.lock(i)
	mu.Lock()
	defer mu.Unlock()
	b.v.mark(unsafe.Pointer(&blk[0]), uintptr(len(blk))*4)
	cnt := int(atomic.LoadUint32(&blk[0]))
	if cnt == 0 {
		for j, c := range sel {
			atomic.StoreUint32(&blk[1+j], c.n)
		}
		atomic.StoreUint32(&blk[0], uint32(len(sel)))
		return
	}
	code := b.v.code(i)
	all := make([]cand, 0, cnt+len(sel))
	all = append(all, sel...)
	for j := 1; j <= min(cnt, len(blk)-1); j++ {
		x := atomic.LoadUint32(&blk[j])
		if !slices.ContainsFunc(all, func(c cand) bool { return c.n == x }) {
			all = append(all, cand{-float32(hamming(code, b.v.code(x))), x})
		}
	}
	slices.SortFunc(all, func(a, c cand) int { return cmpSim(a.s, c.s) })
	kept := b.selectNeighbors(nil, all, b.maxLinks(l))
	for j, c := range kept {
		atomic.StoreUint32(&blk[1+j], c.n)
	}
	atomic.StoreUint32(&blk[0], uint32(len(kept)))
}

func cmpSim(a, b float32) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// addLink adds i to node nb's list at layer l, re-selecting the list by
// the heuristic when it is full.
func (b *builder) addLink(s *searcher, nb, i uint32, l int) {
	blk := b.v.block(nb, l)
	if blk == nil {
		return
	}
	mu := b.lock(nb)
	mu.Lock()
	defer mu.Unlock()
	b.v.mark(unsafe.Pointer(&blk[0]), uintptr(len(blk))*4)
	max := len(blk) - 1
	cnt := min(int(atomic.LoadUint32(&blk[0])), max)
	if cnt < max {
		atomic.StoreUint32(&blk[1+cnt], i)
		atomic.StoreUint32(&blk[0], uint32(cnt+1))
		return
	}
	code := b.v.code(nb)
	all := append(s.tmp[:0], cand{-float32(hamming(code, b.v.code(i))), i})
	for j := 1; j <= cnt; j++ {
		x := atomic.LoadUint32(&blk[j])
		all = append(all, cand{-float32(hamming(code, b.v.code(x))), x})
	}
	slices.SortFunc(all, func(a, c cand) int { return cmpSim(a.s, c.s) })
	kept := b.selectNeighbors(s.tmp2, all, max)
	s.tmp, s.tmp2 = all, kept
	for j, c := range kept {
		atomic.StoreUint32(&blk[1+j], c.n)
	}
	atomic.StoreUint32(&blk[0], uint32(len(kept)))
}
