package retrieve

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"docgraph/graphbuild"
	"docgraph/retrieve/graphalg"
	"docgraph/store"
)

// GraphOptions shape the in-memory entity-chunk graph that Personalized
// PageRank runs on.
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

// docInfo is what a passage shows of its document.
type docInfo struct {
	Path, Title string
}

// passageGraph is the entity-chunk graph of one store version: chunks are
// nodes 0..len(chunks)-1, entities the nodes after them.
type passageGraph struct {
	g        *graphalg.Graph
	chunks   []string // node -> chunk id
	chunkDoc []string // node -> document id
	chunkIdx map[string]int
	entities []string // node-len(chunks) -> entity id
	entIdx   map[string]int
	// chunkCount is every entity's number of chunks, including dropped ones.
	chunkCount map[string]int
	docs       map[string]docInfo
}

func (pg *passageGraph) isChunk(node int) bool { return node < len(pg.chunks) }

// entityChunks is the number of chunks mentioning e: the graph's count
// when pg holds e (dropped entities included), else the store's.
func (pg *passageGraph) entityChunks(e store.Entity) int {
	if pg != nil {
		if n, ok := pg.chunkCount[e.ID]; ok {
			return n
		}
	}
	return e.Mentions
}

// entityNode returns the node of an entity kept in the graph.
func (pg *passageGraph) entityNode(id string) (int, bool) {
	n, ok := pg.entIdx[id]
	return n, ok
}

// buildGraph reads the whole graph from the store.
func buildGraph(ctx context.Context, st store.Reader, gs store.GraphScanner, o GraphOptions) (*passageGraph, error) {
	docs, err := st.Documents(ctx)
	if err != nil {
		return nil, fmt.Errorf("load graph: documents: %w", err)
	}
	pg := &passageGraph{
		chunkIdx:   map[string]int{},
		entIdx:     map[string]int{},
		chunkCount: map[string]int{},
		docs:       make(map[string]docInfo, len(docs)),
	}
	titleIDs := map[string][2]string{}
	for _, d := range docs {
		if d.Status != store.StatusDone {
			continue
		}
		pg.docs[d.ID] = docInfo{Path: d.Path, Title: d.Title}
		titleIDs[d.ID] = titleEntityIDs(d.Title)
	}
	type edge struct {
		chunk  int
		entity string
		title  bool
	}
	var edges []edge
	err = gs.ScanMentions(ctx, func(m store.Mention) error {
		c, ok := pg.chunkIdx[m.ChunkID]
		if !ok {
			c = len(pg.chunks)
			pg.chunkIdx[m.ChunkID] = c
			pg.chunks = append(pg.chunks, m.ChunkID)
			pg.chunkDoc = append(pg.chunkDoc, m.DocID)
		}
		t := titleIDs[m.DocID]
		edges = append(edges, edge{chunk: c, entity: m.EntityID, title: m.EntityID == t[0] || m.EntityID == t[1]})
		pg.chunkCount[m.EntityID]++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load graph: %w", err)
	}
	keep := func(e string) bool {
		return o.MaxEntityChunks <= 0 || pg.chunkCount[e] <= o.MaxEntityChunks
	}
	// Number entities in a stable order so equal stores give equal graphs.
	var ents []string
	for e := range pg.chunkCount {
		if keep(e) {
			ents = append(ents, e)
		}
	}
	sort.Strings(ents)
	for i, e := range ents {
		pg.entIdx[e] = len(pg.chunks) + i
	}
	pg.entities = ents
	b := graphalg.NewBuilder(len(pg.chunks) + len(ents))
	for _, e := range edges {
		n, ok := pg.entIdx[e.entity]
		if !ok {
			continue
		}
		w := o.MentionWeight
		if e.title {
			w = o.TitleWeight
		}
		b.AddUndirected(e.chunk, n, w)
	}
	pg.g = b.Build()
	return pg, nil
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

// versioned keeps one value built from the store's graph, rebuilding it
// when GraphVersion moves. Concurrent queries share one build. In
// background mode only the first build blocks: after a change, callers get
// the previous value while one goroutine builds the new one, so a
// long-running server never stalls on a reload (and a chunk the old value
// names but the store no longer holds is dropped when passages are filled).
type versioned[T any] struct {
	mu         sync.Mutex
	built      bool
	version    string
	val        T
	background bool
	building   bool // a background build is under way
}

func (c *versioned[T]) get(ctx context.Context, gs store.GraphScanner, build func(context.Context) (T, error)) (T, error) {
	var zero T
	version, err := gs.GraphVersion(ctx)
	if err != nil {
		return zero, fmt.Errorf("graph version: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built && c.version == version {
		return c.val, nil
	}
	if c.background && c.built {
		if !c.building {
			c.building = true
			// The build outlives the query that noticed the change.
			go c.rebuild(context.WithoutCancel(ctx), version, build)
		}
		return c.val, nil
	}
	v, err := build(ctx)
	if err != nil {
		return zero, err
	}
	c.val, c.version, c.built = v, version, true
	return v, nil
}

// rebuild is a background build; a failed one leaves the old value for the
// next change (or query) to try again.
func (c *versioned[T]) rebuild(ctx context.Context, version string, build func(context.Context) (T, error)) {
	v, err := build(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.building = false
	if err == nil {
		c.val, c.version = v, version
	}
}

// seedWeights turns the question's entities into PPR seeds, each weighted
// by its specificity (1 / number of chunks mentioning it, as HippoRAG's node
// specificity) times the given weight.
func (pg *passageGraph) seedWeights(entities map[string]float64) map[int]float64 {
	seeds := map[int]float64{}
	for id, w := range entities {
		n, ok := pg.entityNode(id)
		if !ok || w <= 0 {
			continue
		}
		seeds[n] += w / float64(max(pg.chunkCount[id], 1))
	}
	return seeds
}

// rankChunks runs PPR from the seeds and returns chunk ids by score, best
// first, at most k of them.
// With eps > 0 it uses the forward-push approximation, touching only the
// seeds' neighbourhood; otherwise exact power iteration.
func (pg *passageGraph) rankChunks(seeds map[int]float64, damping, eps float64, k int) []scoredID {
	if len(seeds) == 0 {
		return nil
	}
	out := make([]scoredID, 0, 64)
	if eps > 0 {
		for n, s := range graphalg.PPRPush(pg.g, seeds, damping, eps) {
			if pg.isChunk(n) && s > 0 {
				out = append(out, scoredID{ID: pg.chunks[n], Score: s})
			}
		}
	} else {
		scores := graphalg.PPR(pg.g, seeds, damping, 1e-7, 60)
		for n := range pg.chunks {
			if scores[n] > 0 {
				out = append(out, scoredID{ID: pg.chunks[n], Score: scores[n]})
			}
		}
	}
	sortScored(out)
	if k > 0 && len(out) > k {
		out = out[:k]
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
