package retrieve

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/docgraph/docgraph/store"
)

// WithPassageSnapshot makes a long-running retriever (a server) hold the
// whole passage graph in memory, read once per graph version in the
// background, and walk PageRank over it instead of asking the store a
// statement per round: at x4 those statements were half a served query's
// CPU. Queries answer from the store, as without it, until the snapshot of
// the version they saw is ready, so start-up waits for nothing. A store
// that answers from a current passage graph file (passageFiler) is read
// in place instead, and snapshotted only while its file lags. It needs a
// store that hands over its graph (store.GraphScanner) and lists its
// documents; for a store on a server (Neo4j) leave it off, so that no
// process streams the whole graph.
func WithPassageSnapshot() Option { return func(r *Retriever) { r.snapshots = true } }

// passageSnapshot is the passage graph of one graph version for the hub
// threshold of its cache, in arrays: each node (entity or chunk) has an
// index, and its kept neighbours are a run of edges (CSR), with a bit for
// title edges. At x16 (850,000 nodes, 3 million edge ends) it is some
// 100 MB where maps of entries took five times that.
type passageSnapshot struct {
	version string
	index   map[nodeKey]int32
	keys    []nodeKey
	count   []int32 // an entity's chunks; 0 for a chunk
	start   []int32 // node u's edges are edges[start[u]:start[u+1]]
	edges   []int32
	title   []bool // parallel to edges
}

// snapshotSource is what a snapshot is read from: the whole graph and the
// documents' titles.
type snapshotSource interface {
	store.GraphScanner
	Documents(ctx context.Context) ([]store.Document, error)
}

// passageFiler is a store that answers its passage graph from a mapped
// file when the file is of the current graph version (the SQLite store's
// graph.db.pgraph). A snapshot would copy that file into the heap: at x16
// the server held 280 MB more for it (RSS 1.48 against 1.19 GB) and
// answered no faster (c=1 p50 37-42 against 29-31 ms), so while the file is
// current no snapshot is built and the walks read the file through the
// neighbour cache; while it lags behind (writes under way) the snapshot
// serves as before.
type passageFiler interface {
	PassageFileCurrent(ctx context.Context) bool
}

// fileRecheck is how long a snapshotter that found the store's passage
// file current waits before looking again.
const fileRecheck = time.Second

// snapshotter builds snapshots for a neighborCache: one at a time, in the
// background, and not more often than ten times the last build's length,
// so a server beside a busy `ingest --watch` spends at most a tenth of a
// core on them.
type snapshotter struct {
	src      snapshotSource
	file     passageFiler // nil: snapshots are always built
	mu       sync.Mutex
	building bool
	next     time.Time // no build starts before
	current  *passageSnapshot
}

// snapshot returns the snapshot of version, or nil, starting a build for
// it when none runs and the last is old enough.
func (c *neighborCache) snapshot(version string) *passageSnapshot {
	s := c.snap
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil && s.current.version == version {
		return s.current
	}
	if !s.building && !time.Now().Before(s.next) {
		s.building = true
		go c.buildSnapshot(version)
	}
	return nil
}

func (c *neighborCache) buildSnapshot(version string) {
	s := c.snap
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if s.file != nil && s.file.PassageFileCurrent(ctx) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.building, s.current, s.next = false, nil, time.Now().Add(fileRecheck)
		return
	}
	snap, err := readSnapshot(ctx, s.src, c.maxChunks, version)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.building = false
	s.next = time.Now().Add(10 * time.Since(start))
	if err == nil && snap != nil {
		s.current = snap
	}
}

// readSnapshot reads the whole passage graph as the store's PassageGraph
// would answer it node by node, or nil when the store moved on from
// version while it read (the graph version moves with every write, so an
// unchanged version after the reads means they saw one state).
func readSnapshot(ctx context.Context, src snapshotSource, maxChunks int, version string) (*passageSnapshot, error) {
	if v, err := src.GraphVersion(ctx); err != nil || v != version {
		return nil, err
	}
	docs, err := src.Documents(ctx)
	if err != nil {
		return nil, err
	}
	titleOf := make(map[string]string, len(docs))
	for _, d := range docs {
		titleOf[d.ID] = d.Title
	}
	s := &passageSnapshot{version: version, index: map[nodeKey]int32{}}
	node := func(k nodeKey) int32 {
		if u, ok := s.index[k]; ok {
			return u
		}
		u := int32(len(s.keys))
		s.index[k] = u
		s.keys = append(s.keys, k)
		return u
	}
	var pairs [][2]int32 // entity, chunk
	chunkDoc := map[int32]string{}
	if err := src.ScanMentions(ctx, func(m store.Mention) error {
		e, ch := node(nodeKey{id: m.EntityID}), node(nodeKey{chunk: true, id: m.ChunkID})
		pairs = append(pairs, [2]int32{e, ch})
		if _, ok := chunkDoc[ch]; !ok {
			chunkDoc[ch] = m.DocID
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if v, err := src.GraphVersion(ctx); err != nil || v != version {
		return nil, err
	}
	n := len(s.keys)
	s.count = make([]int32, n)
	for _, p := range pairs {
		s.count[p[0]]++
	}
	hub := func(u int32) bool { return maxChunks > 0 && int(s.count[u]) > maxChunks }
	// Edge runs: an entity lists its chunks unless it is a hub; a chunk
	// lists its entities that are not.
	s.start = make([]int32, n+1)
	for _, p := range pairs {
		if !hub(p[0]) {
			s.start[p[0]+1]++
			s.start[p[1]+1]++
		}
	}
	for u := range n {
		s.start[u+1] += s.start[u]
	}
	s.edges = make([]int32, s.start[n])
	fill := append([]int32(nil), s.start[:n]...)
	for _, p := range pairs {
		if !hub(p[0]) {
			s.edges[fill[p[0]]], fill[p[0]] = p[1], fill[p[0]]+1
			s.edges[fill[p[1]]], fill[p[1]] = p[0], fill[p[1]]+1
		}
	}
	// Neighbours by id, as the store sorts them; title edges marked.
	s.title = make([]bool, len(s.edges))
	titles := map[string][2]string{}
	for u := range n {
		run := s.edges[s.start[u]:s.start[u+1]]
		sort.Slice(run, func(i, j int) bool { return s.keys[run[i]].id < s.keys[run[j]].id })
		for i, v := range run {
			e, ch := int32(u), v
			if s.keys[u].chunk {
				e, ch = v, int32(u)
			}
			doc := chunkDoc[ch]
			t, ok := titles[doc]
			if !ok {
				t = titleEntityIDs(titleOf[doc])
				titles[doc] = t
			}
			id := s.keys[e].id
			s.title[int(s.start[u])+i] = id == t[0] || id == t[1]
		}
	}
	return s, nil
}

// entry answers a node from the snapshot: what the store would, an empty
// entry for a node it does not know.
func (s *passageSnapshot) entry(k nodeKey) *adjEntry {
	u, ok := s.index[k]
	if !ok {
		return &adjEntry{}
	}
	run := s.edges[s.start[u]:s.start[u+1]]
	e := &adjEntry{chunks: int(s.count[u]), title: s.title[s.start[u]:s.start[u+1]]}
	if len(run) > 0 {
		e.to = make([]string, len(run))
		for i, v := range run {
			e.to[i] = s.keys[v].id
		}
	}
	return e
}

// newNeighborCache returns a passage graph cache for the hub threshold,
// with snapshots when the retriever asked for them and its store can give
// them.
func (r *Retriever) newNeighborCache(maxChunks int) *neighborCache {
	c := newNeighborCache(maxChunks)
	if !r.snapshots {
		return c
	}
	if src, ok := r.store.(snapshotSource); ok {
		c.snap = &snapshotter{src: src}
		c.snap.file, _ = r.store.(passageFiler)
	}
	return c
}
