package retrieve

import (
	"context"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/retrieve/graphalg"
	"github.com/docgraph/docgraph/store"
)

// GraphOptions shape the passage graph (entities and the chunks they are
// mentioned in) that Personalized PageRank walks.
type GraphOptions struct {
	// MaxEntityChunks drops entities mentioned in more chunks than this:
	// names that common ("United States", a year) connect everything and
	// carry no signal. 0 keeps all.
	MaxEntityChunks int
	// TitleWeight is the weight of the edge between a chunk and the entity
	// its document is titled by; MentionWeight that of every other mention.
	// A title edge says the chunk is about the entity, not just naming it.
	TitleWeight, MentionWeight float64
}

// DefaultGraphOptions are the values tuned on the 2Wiki and MuSiQue sets.
func DefaultGraphOptions() GraphOptions {
	return GraphOptions{MaxEntityChunks: 40, TitleWeight: 4, MentionWeight: 1}
}

// neighborCacheEdges bounds a Retriever's cache of the passage graph, in
// edges plus entries, 75 bytes each as measured: some 75 MB, about the
// whole graph of the 4x 2wiki corpus (24,000 passages; 1x's is 226k, 16 MB).
const neighborCacheEdges = 1 << 20

// neighborCache keeps what the store answered about the passage graph
// (store.PassageGraph) for one graph version, shared by the concurrent
// queries of a Retriever and of those WithConfig derives from it with the
// same MaxEntityChunks. A query reads the store's GraphVersion first and
// uses the generation of that version, replacing the cache when the
// version moved: what a generation holds was read after its version was
// seen, so a query never answers from an older graph than the one it saw
// (another process's write is seen by the first query after it).
type neighborCache struct {
	maxChunks int
	limit     int
	mu        sync.Mutex
	gen       *neighborGen
	snap      *snapshotter // nil: no whole-graph snapshots (WithPassageSnapshot)
}

func newNeighborCache(maxChunks int) *neighborCache {
	return &neighborCache{maxChunks: maxChunks, limit: neighborCacheEdges}
}

// forVersion returns the generation for version, a new empty one when the
// cache holds another.
func (c *neighborCache) forVersion(version string) *neighborGen {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil || c.gen.version != version {
		c.gen = &neighborGen{version: version, maxChunks: c.maxChunks, half: max(c.limit/2, 1),
			young: map[nodeKey]*adjEntry{}, old: map[nodeKey]*adjEntry{}}
	}
	return c.gen
}

// nodeKey names a node of the passage graph.
type nodeKey struct {
	chunk bool
	id    string
}

// adjEntry is the store's answer about one node: for an entity its chunk
// count and (unless it is a hub) chunks; for a chunk the entities
// mentioning it that are not hubs. title marks the edges between a chunk
// and an entity its document's title names. A node the store does not
// know (or no longer) has an empty entry.
type adjEntry struct {
	chunks int      // an entity's chunk count
	to     []string // neighbour ids
	title  []bool   // parallel to to
}

func (e *adjEntry) cost() int { return 1 + len(e.to) }

// neighborGen is the cache of one graph version, bounded the simple way:
// entries go into a young map; when it holds half the limit it becomes
// the old map, whose previous entries are dropped, and an entry found in
// the old map moves back to the young one. What queries keep using stays,
// and the whole never passes the limit (unless one entry alone is over
// half of it).
type neighborGen struct {
	version   string
	maxChunks int
	half      int

	mu         sync.Mutex
	young, old map[nodeKey]*adjEntry
	youngCost  int
}

// put adds an entry under the lock, first turning the young map old when
// the entry would take it past half the limit.
func (g *neighborGen) put(k nodeKey, e *adjEntry) {
	if _, ok := g.young[k]; ok {
		return
	}
	if g.youngCost+e.cost() > g.half && len(g.young) > 0 {
		g.old, g.young, g.youngCost = g.young, map[nodeKey]*adjEntry{}, 0
	}
	g.young[k] = e
	g.youngCost += e.cost()
}

// lookup returns the entries of keys, in order, asking the store for those
// not cached: at most one EntityNeighbors and one ChunkNeighbors call, run
// side by side.
func (g *neighborGen) lookup(ctx context.Context, pg store.PassageGraph, keys []nodeKey) ([]*adjEntry, error) {
	out := make([]*adjEntry, len(keys))
	var entities, chunks []string
	g.mu.Lock()
	for i, k := range keys {
		if e, ok := g.young[k]; ok {
			out[i] = e
			continue
		}
		if e, ok := g.old[k]; ok {
			out[i] = e
			delete(g.old, k)
			g.put(k, e)
			continue
		}
		if k.chunk {
			chunks = append(chunks, k.id)
		} else {
			entities = append(entities, k.id)
		}
	}
	g.mu.Unlock()
	if len(entities) == 0 && len(chunks) == 0 {
		return out, nil
	}
	fetched := map[nodeKey]*adjEntry{}
	var ens []store.EntityNeighbors
	var cns []store.ChunkNeighbors
	eg, ectx := errgroup.WithContext(ctx)
	if len(entities) > 0 {
		eg.Go(func() (err error) {
			ens, err = pg.EntityNeighbors(ectx, entities, g.maxChunks)
			return wrap("passage graph", err)
		})
	}
	if len(chunks) > 0 {
		eg.Go(func() (err error) {
			cns, err = pg.ChunkNeighbors(ectx, chunks, g.maxChunks)
			return wrap("passage graph", err)
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	// Chunks of one document share its title: name its entities once.
	titles := map[string][2]string{}
	titleIDs := func(title string) [2]string {
		t, ok := titles[title]
		if !ok {
			t = titleEntityIDs(title)
			titles[title] = t
		}
		return t
	}
	for _, n := range ens {
		e := &adjEntry{chunks: n.Chunks, to: make([]string, len(n.ChunkList)), title: make([]bool, len(n.ChunkList))}
		for i, c := range n.ChunkList {
			t := titleIDs(c.DocTitle)
			e.to[i] = c.ID
			e.title[i] = n.ID == t[0] || n.ID == t[1]
		}
		fetched[nodeKey{id: n.ID}] = e
	}
	for _, n := range cns {
		t := titleIDs(n.DocTitle)
		e := &adjEntry{to: n.Entities, title: make([]bool, len(n.Entities))}
		for i, id := range n.Entities {
			e.title[i] = id == t[0] || id == t[1]
		}
		fetched[nodeKey{chunk: true, id: n.ID}] = e
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, k := range keys {
		if out[i] != nil {
			continue
		}
		e := fetched[k]
		if e == nil {
			e = &adjEntry{}
		}
		out[i] = e
		g.put(k, e)
	}
	return out, nil
}

// kept reports whether an entity in n chunks belongs to the graph PageRank
// walks: mentioned somewhere, and not a hub.
func (o GraphOptions) kept(n int) bool {
	return n >= 1 && (o.MaxEntityChunks <= 0 || n <= o.MaxEntityChunks)
}

// walker is one query's view of the passage graph, for PPRRounds: it numbers
// the nodes it meets and turns the cached answers into weighted edges.
type walker struct {
	pg   store.PassageGraph
	gen  *neighborGen
	full *passageSnapshot // the whole graph of gen's version, when held
	opts GraphOptions

	keys    []nodeKey
	index   map[nodeKey]int32
	targets [][]int32
	weights [][]float64
	// seen counts each node's edges from fetched nodes: in the undirected
	// passage graph, a bound its degree is at least.
	seen []int32
}

// startWalk reads the store's graph version and returns a walker on its
// cache generation.
func (r *Retriever) startWalk(ctx context.Context, pg store.PassageGraph) (*walker, error) {
	version, err := pg.GraphVersion(ctx)
	if err != nil {
		return nil, wrap("graph version", err)
	}
	return &walker{pg: pg, gen: r.neighbors.forVersion(version), full: r.neighbors.snapshot(version),
		opts: r.cfg.Graph, index: map[nodeKey]int32{}}, nil
}

// lookup answers keys from the snapshot when one is held, else through the
// cache from the store.
func (w *walker) lookup(ctx context.Context, keys []nodeKey) ([]*adjEntry, error) {
	if w.full == nil {
		return w.gen.lookup(ctx, w.pg, keys)
	}
	out := make([]*adjEntry, len(keys))
	for i, k := range keys {
		out[i] = w.full.entry(k)
	}
	return out, nil
}

// entityCounts returns the chunk counts of the entities the store knows
// in the passage graph (counted up to past MaxEntityChunks).
func (w *walker) entityCounts(ctx context.Context, ids []string) (map[string]int, error) {
	keys := make([]nodeKey, len(ids))
	for i, id := range ids {
		keys[i] = nodeKey{id: id}
	}
	es, err := w.lookup(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(ids))
	for i, e := range es {
		if e.chunks > 0 {
			out[ids[i]] = e.chunks
		}
	}
	return out, nil
}

func (w *walker) node(k nodeKey) int32 {
	if u, ok := w.index[k]; ok {
		return u
	}
	u := int32(len(w.keys))
	w.index[k] = u
	w.keys = append(w.keys, k)
	w.targets = append(w.targets, nil)
	w.weights = append(w.weights, nil)
	w.seen = append(w.seen, 0)
	return u
}

func (w *walker) weight(title bool) float64 {
	if title {
		return w.opts.TitleWeight
	}
	return w.opts.MentionWeight
}

// Fetch looks the nodes up (graphalg.Neighborhood) and keeps their edges:
// an entity's chunks (none for a hub), a chunk's entities that are not hubs.
func (w *walker) Fetch(ctx context.Context, nodes []int32) error {
	keys := make([]nodeKey, len(nodes))
	for i, u := range nodes {
		keys[i] = w.keys[u]
	}
	es, err := w.lookup(ctx, keys)
	if err != nil {
		return err
	}
	for i, u := range nodes {
		e, k := es[i], keys[i]
		if !k.chunk && !w.opts.kept(e.chunks) {
			continue // a hub (or gone since it was met): no edges
		}
		var ts []int32
		var ws []float64
		if len(e.to) > 0 {
			ts, ws = make([]int32, len(e.to)), make([]float64, len(e.to))
		}
		for j, id := range e.to {
			v := w.node(nodeKey{chunk: !k.chunk, id: id})
			ts[j], ws[j] = v, w.weight(e.title[j])
			w.seen[v]++
		}
		w.targets[u], w.weights[u] = ts, ws
	}
	return nil
}

// MinDegree is a bound a node's degree is at least before it is fetched
// (graphalg.DegreeBounder).
func (w *walker) MinDegree(u int32) int { return int(w.seen[u]) }

// Edges returns a fetched node's edges (graphalg.Neighborhood).
func (w *walker) Edges(u int32) ([]int32, []float64) { return w.targets[u], w.weights[u] }

// rankChunks runs PageRank from the seed entities (weight each, divided by
// its chunk count in counts, as HippoRAG's node specificity) and returns
// the best k chunks, best first.
func (w *walker) rankChunks(ctx context.Context, seeds map[string]float64, counts map[string]int, damping, eps float64, k int) ([]scoredID, graphalg.RoundStats, error) {
	start := map[int]float64{}
	for id, wt := range seeds {
		n := counts[id]
		if wt <= 0 || !w.opts.kept(n) {
			continue
		}
		start[int(w.node(nodeKey{id: id}))] += wt / float64(n)
	}
	if len(start) == 0 {
		return nil, graphalg.RoundStats{}, nil
	}
	scores, st, err := graphalg.PPRRounds(ctx, w, start, damping, eps)
	if err != nil {
		return nil, st, err
	}
	out := make([]scoredID, 0, 64)
	for _, s := range scores {
		if key := w.keys[s.Node]; key.chunk && s.Score > 0 {
			out = append(out, scoredID{ID: key.id, Score: s.Score})
		}
	}
	sortScored(out)
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out, st, nil
}

// titleEntityIDs are the ids of the entities a document title names: the
// title itself and, for "Brother (Pearl Jam song)", the name before the
// parenthesis, as the extractor records both.
func titleEntityIDs(title string) [2]string {
	var out [2]string
	if strings.TrimSpace(title) == "" {
		return out
	}
	out[0] = graphbuild.EntityID(title)
	if strings.HasSuffix(title, ")") {
		if i := strings.LastIndex(title, "("); i > 0 {
			if base := strings.TrimSpace(title[:i]); base != "" {
				out[1] = graphbuild.EntityID(base)
			}
		}
	}
	return out
}

// scoredID is an id with a score, higher is better.
type scoredID struct {
	ID    string
	Score float64
}

func sortScored(s []scoredID) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].Score != s[j].Score {
			return s[i].Score > s[j].Score
		}
		return s[i].ID < s[j].ID
	})
}
