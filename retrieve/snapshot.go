package retrieve

import (
	"context"
	"sort"
	"sync"
	"time"

	"docgraph/store"
)

// WithPassageSnapshot makes a long-running retriever (a server) hold the
// whole passage graph in memory, read once per graph version in the
// background, and walk PageRank over it instead of asking the store a
// statement per round: at x4 those statements were half a served query's
// CPU. Queries answer from the store, as without it, until the snapshot of
// the version they saw is ready, so start-up waits for nothing. It needs a
// store that hands over its graph (store.GraphScanner) and lists its
// documents; for a store on a server (Neo4j) leave it off, so that no
// process streams the whole graph.
func WithPassageSnapshot() Option { return func(r *Retriever) { r.snapshots = true } }

// passageSnapshot is the passage graph of one graph version, in the form
// the store's PassageGraph answers take in the cache (adjEntry), for the
// hub threshold of its cache.
type passageSnapshot struct {
	version string
	nodes   map[nodeKey]*adjEntry
}

// snapshotter builds snapshots for a neighborCache: one at a time, in the
// background, and not more often than ten times the last build's length,
// so a server beside a busy `ingest --watch` spends at most a tenth of a
// core on them.
type snapshotter struct {
	src interface {
		store.GraphScanner
		Documents(ctx context.Context) ([]store.Document, error)
	}
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
func readSnapshot(ctx context.Context, src interface {
	store.GraphScanner
	Documents(ctx context.Context) ([]store.Document, error)
}, maxChunks int, version string) (*passageSnapshot, error) {
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
	// Ids are interned: each appears once in memory however many edges name it.
	intern := map[string]string{}
	in := func(s string) string {
		if v, ok := intern[s]; ok {
			return v
		}
		intern[s] = s
		return s
	}
	entityChunks := map[string][]string{}
	chunkEntities := map[string][]string{}
	chunkDoc := map[string]string{}
	if err := src.ScanMentions(ctx, func(m store.Mention) error {
		e, ch := in(m.EntityID), in(m.ChunkID)
		entityChunks[e] = append(entityChunks[e], ch)
		chunkEntities[ch] = append(chunkEntities[ch], e)
		chunkDoc[ch] = m.DocID
		return nil
	}); err != nil {
		return nil, err
	}
	if v, err := src.GraphVersion(ctx); err != nil || v != version {
		return nil, err
	}
	hub := func(n int) bool { return maxChunks > 0 && n > maxChunks }
	titles := map[string][2]string{}
	titleIDs := func(doc string) [2]string {
		t, ok := titles[doc]
		if !ok {
			t = titleEntityIDs(titleOf[doc])
			titles[doc] = t
		}
		return t
	}
	nodes := make(map[nodeKey]*adjEntry, len(entityChunks)+len(chunkEntities))
	for e, chunks := range entityChunks {
		entry := &adjEntry{chunks: len(chunks)}
		if !hub(len(chunks)) {
			sort.Strings(chunks)
			entry.to, entry.title = chunks, make([]bool, len(chunks))
			for i, ch := range chunks {
				t := titleIDs(chunkDoc[ch])
				entry.title[i] = e == t[0] || e == t[1]
			}
		}
		nodes[nodeKey{id: e}] = entry
	}
	for ch, ents := range chunkEntities {
		t := titleIDs(chunkDoc[ch])
		kept := make([]string, 0, len(ents))
		for _, e := range ents {
			if !hub(len(entityChunks[e])) {
				kept = append(kept, e)
			}
		}
		sort.Strings(kept)
		entry := &adjEntry{to: kept, title: make([]bool, len(kept))}
		for i, e := range kept {
			entry.title[i] = e == t[0] || e == t[1]
		}
		nodes[nodeKey{chunk: true, id: ch}] = entry
	}
	return &passageSnapshot{version: version, nodes: nodes}, nil
}

// entry answers a node from the snapshot: what the store would, an empty
// entry for a node it does not know.
func (s *passageSnapshot) entry(k nodeKey) *adjEntry {
	if e, ok := s.nodes[k]; ok {
		return e
	}
	return &adjEntry{}
}

// newNeighborCache returns a passage graph cache for the hub threshold,
// with snapshots when the retriever asked for them and its store can give
// them.
func (r *Retriever) newNeighborCache(maxChunks int) *neighborCache {
	c := newNeighborCache(maxChunks)
	if !r.snapshots {
		return c
	}
	if src, ok := r.store.(interface {
		store.GraphScanner
		Documents(ctx context.Context) ([]store.Document, error)
	}); ok {
		c.snap = &snapshotter{src: src}
	}
	return c
}
