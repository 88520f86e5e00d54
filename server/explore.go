package server

import (
	"context"
	"errors"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// The lookups behind the browse endpoints and tools: documents, entities,
// their neighbourhood and chunks, read from the store as they are now.

// DocJSON is a document as the API lists it.
type DocJSON struct {
	ID        string    `json:"id"`
	Path      string    `json:"path"`
	Title     string    `json:"title"`
	Format    string    `json:"format"`
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	Chunks    int       `json:"chunks"`
	Size      int64     `json:"size"`
	ModTime   time.Time `json:"mod_time"`
	UpdatedAt time.Time `json:"updated_at"`
	Warnings  []string  `json:"warnings"`
}

func docOf(d store.Document) DocJSON {
	return DocJSON{ID: d.ID, Path: d.Path, Title: d.Title, Format: d.Format, Status: string(d.Status), Error: d.Error,
		Chunks: d.Chunks, Size: d.Size, ModTime: d.ModTime.UTC(), UpdatedAt: d.UpdatedAt.UTC(), Warnings: orEmpty(d.Warnings)}
}

// DocPage is one page of the document list.
type DocPage struct {
	Documents []DocJSON `json:"documents"`
	Total     int       `json:"total"`
	Offset    int       `json:"offset"`
	Limit     int       `json:"limit"`
	// NextOffset is the offset of the next page; absent on the last.
	NextOffset *int `json:"next_offset,omitempty"`
}

// docQuery selects a page of documents.
type docQuery struct {
	Offset, Limit int
	Status        string // "" for all
	PathPrefix    string
}

const maxPage = 500

func (e *Engine) documents(ctx context.Context, q docQuery) (*DocPage, error) {
	if q.Limit == 0 {
		q.Limit = 50
	}
	if q.Offset < 0 || q.Limit < 1 || q.Limit > maxPage {
		return nil, badRequest(CodeOutOfRange, "offset must be >= 0 and limit in [1, %d]", maxPage)
	}
	switch store.Status(q.Status) {
	case "", store.StatusPending, store.StatusProcessing, store.StatusDone, store.StatusFailed:
	default:
		return nil, badRequest(CodeInvalidParam, "status %q: one of pending, processing, done, failed", q.Status)
	}
	all, err := e.st.Documents(ctx)
	if err != nil {
		return nil, err
	}
	var sel []store.Document
	for _, d := range all {
		if (q.Status == "" || string(d.Status) == q.Status) && strings.HasPrefix(d.Path, q.PathPrefix) {
			sel = append(sel, d)
		}
	}
	p := &DocPage{Documents: []DocJSON{}, Total: len(sel), Offset: q.Offset, Limit: q.Limit}
	// Offset+Limit would overflow for an offset near the integer limit.
	for i := q.Offset; i < len(sel) && i-q.Offset < q.Limit; i++ {
		p.Documents = append(p.Documents, docOf(sel[i]))
	}
	if q.Offset < len(sel) && len(sel)-q.Offset > q.Limit {
		next := q.Offset + q.Limit
		p.NextOffset = &next
	}
	return p, nil
}

// EntityJSON is an entity in lists and graphs.
type EntityJSON struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Description string  `json:"description"`
	Mentions    int     `json:"mentions"`
	Score       float64 `json:"score,omitempty"`
	// Via says how a lookup found it: "name" (exact) or "fulltext".
	Via string `json:"via,omitempty"`
}

func entityOf(e store.Entity) EntityJSON {
	return EntityJSON{ID: e.ID, Name: e.Name, Type: e.Type, Description: e.Description, Mentions: e.Mentions}
}

// findEntities looks a name up: the entity of that exact (normalised)
// name first, then full-text matches over names and descriptions.
func (e *Engine) findEntities(ctx context.Context, name string, limit int) ([]EntityJSON, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, badRequest(CodeMissingParam, "name is required")
	}
	if len(name) > 1024 {
		return nil, badRequest(CodeOutOfRange, "name is %d bytes, at most 1024 are taken", len(name))
	}
	if limit == 0 {
		limit = 10
	}
	if limit < 1 || limit > 100 {
		return nil, badRequest(CodeOutOfRange, "limit %d is out of range [1, 100]", limit)
	}
	out := []EntityJSON{}
	seen := map[string]bool{}
	exact, err := e.st.Entities(ctx, []string{graphbuild.EntityID(name)})
	if err != nil {
		return nil, err
	}
	for _, x := range exact {
		j := entityOf(x)
		j.Via, j.Score = "name", 1
		out = append(out, j)
		seen[x.ID] = true
	}
	hits, err := e.st.SearchEntitiesText(ctx, name, limit)
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		if len(out) >= limit {
			break
		}
		if !seen[h.ID] {
			j := entityOf(h.Entity)
			j.Via, j.Score = "fulltext", h.Score
			out = append(out, j)
			seen[h.ID] = true
		}
	}
	return out, nil
}

// entity finds an entity by id, or by name when no id matches.
func (e *Engine) entity(ctx context.Context, idOrName string) (*store.Entity, error) {
	if strings.TrimSpace(idOrName) == "" {
		return nil, badRequest(CodeMissingParam, "entity id is required")
	}
	for _, id := range []string{idOrName, graphbuild.EntityID(idOrName)} {
		ents, err := e.st.Entities(ctx, []string{id})
		if err != nil {
			return nil, err
		}
		if len(ents) > 0 {
			return &ents[0], nil
		}
	}
	return nil, notFound("no entity %q", idOrName)
}

// MentionJSON is one passage an entity was extracted from.
type MentionJSON struct {
	ChunkID  string `json:"chunk_id"`
	DocID    string `json:"doc_id"`
	DocPath  string `json:"doc_path"`
	DocTitle string `json:"doc_title"`
	Index    int    `json:"chunk_index"`
	Text     string `json:"text"`
}

// RelationJSON is a relation with its endpoints' names.
type RelationJSON struct {
	ID          string  `json:"id"`
	Source      string  `json:"source"`
	SourceName  string  `json:"source_name"`
	Target      string  `json:"target"`
	TargetName  string  `json:"target_name"`
	Type        string  `json:"type"`
	Keywords    string  `json:"keywords"`
	Description string  `json:"description"`
	Weight      float64 `json:"weight"`
}

// EntityDetail is an entity with where it is mentioned and what it relates to.
type EntityDetail struct {
	EntityJSON
	Passages  []MentionJSON  `json:"passages"`
	Relations []RelationJSON `json:"relations"`
}

func (e *Engine) entityDetail(ctx context.Context, idOrName string, limit int) (*EntityDetail, error) {
	if limit == 0 {
		limit = 20
	}
	if limit < 1 || limit > 200 {
		return nil, badRequest(CodeOutOfRange, "limit %d is out of range [1, 200]", limit)
	}
	ent, err := e.entity(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	// Mentions in documents not (or no longer) done are skipped, so read a
	// few more than asked.
	ms, err := e.st.MentionsOf(ctx, []string{ent.ID}, 2*limit)
	if err != nil {
		return nil, err
	}
	passages, err := e.passages(ctx, ms, limit)
	if err != nil {
		return nil, err
	}
	rels, err := e.st.RelationsOf(ctx, []string{ent.ID}, limit)
	if err != nil {
		return nil, err
	}
	relations, err := e.relations(ctx, rels)
	if err != nil {
		return nil, err
	}
	return &EntityDetail{EntityJSON: entityOf(*ent), Passages: passages, Relations: relations}, nil
}

// passages reads the chunks of mentions with their documents, keeping
// only chunks of done documents, at most limit.
func (e *Engine) passages(ctx context.Context, ms []store.Mention, limit int) ([]MentionJSON, error) {
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		ids = append(ids, m.ChunkID)
	}
	chunks, err := e.st.Chunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	docs := map[string]*store.Document{}
	out := []MentionJSON{}
	for _, c := range chunks {
		if len(out) >= limit {
			break
		}
		d, ok := docs[c.DocID]
		if !ok {
			d, err = e.st.Document(ctx, c.DocID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			docs[c.DocID] = d
		}
		if d == nil || d.Status != store.StatusDone {
			continue
		}
		out = append(out, MentionJSON{ChunkID: c.ID, DocID: c.DocID, DocPath: d.Path, DocTitle: d.Title, Index: c.Index, Text: c.Text})
	}
	return out, nil
}

// relations names the endpoints of rels.
func (e *Engine) relations(ctx context.Context, rels []store.Relation) ([]RelationJSON, error) {
	names, err := e.names(ctx, rels)
	if err != nil {
		return nil, err
	}
	return relationsOf(rels, names), nil
}

// relationsOf names the endpoints of rels from names, which holds them.
func relationsOf(rels []store.Relation, names map[string]store.Entity) []RelationJSON {
	out := make([]RelationJSON, 0, len(rels))
	for _, r := range rels {
		out = append(out, RelationJSON{ID: r.ID, Source: r.SourceID, SourceName: names[r.SourceID].Name, Target: r.TargetID,
			TargetName: names[r.TargetID].Name, Type: r.Type, Keywords: r.Keywords, Description: r.Description, Weight: r.Weight})
	}
	return out
}

// names reads the endpoint entities of rels.
func (e *Engine) names(ctx context.Context, rels []store.Relation) (map[string]store.Entity, error) {
	var ids []string
	for _, r := range rels {
		ids = append(ids, r.SourceID, r.TargetID)
	}
	ents, err := e.st.Entities(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]store.Entity, len(ents))
	for _, x := range ents {
		out[x.ID] = x
	}
	return out, nil
}

// GraphNode is an entity of a neighbourhood: Hops is its distance from the centre.
type GraphNode struct {
	EntityJSON
	Hops int `json:"hops"`
}

// GraphJSON is an entity's neighbourhood, for a graph viewer.
type GraphJSON struct {
	Center string         `json:"center"`
	Hops   int            `json:"hops"`
	Nodes  []GraphNode    `json:"nodes"`
	Edges  []RelationJSON `json:"edges"`
	// Truncated says the edge limit cut the neighbourhood short.
	Truncated bool `json:"truncated"`
}

// neighbourhood is the entities within hops (1 or 2) relations of an
// entity and the relations between them, at most limit relations, the
// heaviest first at each hop.
func (e *Engine) neighbourhood(ctx context.Context, idOrName string, hops, limit int) (*GraphJSON, error) {
	if hops == 0 {
		hops = 1
	}
	if limit == 0 {
		limit = 50
	}
	if hops != 1 && hops != 2 {
		return nil, badRequest(CodeOutOfRange, "hops %d: 1 or 2", hops)
	}
	if limit < 1 || limit > 1000 {
		return nil, badRequest(CodeOutOfRange, "limit %d is out of range [1, 1000]", limit)
	}
	center, err := e.entity(ctx, idOrName)
	if err != nil {
		return nil, err
	}
	g := &GraphJSON{Center: center.ID, Hops: hops, Nodes: []GraphNode{}, Edges: []RelationJSON{}}
	dist := map[string]int{center.ID: 0}
	order := []string{center.ID}
	var edges []store.Relation
	seenEdge := map[string]bool{}
	frontier := []string{center.ID}
	for h := 1; h <= hops && len(frontier) > 0 && len(edges) < limit; h++ {
		// One more than fits tells whether the limit cut anything.
		rels, err := e.st.RelationsOf(ctx, frontier, limit-len(edges)+1)
		if err != nil {
			return nil, err
		}
		var next []string
		for _, r := range rels {
			if seenEdge[r.ID] {
				continue
			}
			if len(edges) == limit {
				g.Truncated = true
				break
			}
			seenEdge[r.ID] = true
			edges = append(edges, r)
			for _, id := range []string{r.SourceID, r.TargetID} {
				if _, ok := dist[id]; !ok {
					dist[id] = h
					order = append(order, id)
					next = append(next, id)
				}
			}
		}
		frontier = next
	}
	ents, err := e.st.Entities(ctx, order)
	if err != nil {
		return nil, err
	}
	byID := map[string]store.Entity{}
	for _, x := range ents {
		byID[x.ID] = x
	}
	for _, id := range order {
		if x, ok := byID[id]; ok {
			g.Nodes = append(g.Nodes, GraphNode{EntityJSON: entityOf(x), Hops: dist[id]})
		}
	}
	// Every edge's endpoints are in order, so the entities read above name them.
	g.Edges = relationsOf(edges, byID)
	return g, nil
}

// ChunkJSON is one chunk with its document and the entities it mentions.
type ChunkJSON struct {
	ID       string `json:"id"`
	DocID    string `json:"doc_id"`
	DocPath  string `json:"doc_path"`
	DocTitle string `json:"doc_title"`
	// Index is the chunk's position in its document; DocChunks the count.
	Index     int          `json:"chunk_index"`
	DocChunks int          `json:"doc_chunks"`
	Tokens    int          `json:"tokens"`
	Text      string       `json:"text"`
	Entities  []EntityJSON `json:"entities"`
}

// chunk reads a chunk by id, or by document (id or path) and index.
func (e *Engine) chunk(ctx context.Context, id, doc string, index int) (*ChunkJSON, error) {
	var c *store.Chunk
	var d *store.Document
	switch {
	case id != "":
		cs, err := e.st.Chunks(ctx, []string{id})
		if err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			return nil, notFound("no chunk %q", id)
		}
		c = &cs[0]
	case doc != "":
		var err error
		if d, err = e.document(ctx, doc); err != nil {
			return nil, err
		}
		cs, err := e.st.DocumentChunks(ctx, d.ID)
		if err != nil {
			return nil, err
		}
		i := sort.Search(len(cs), func(i int) bool { return cs[i].Index >= index })
		if i == len(cs) || cs[i].Index != index {
			return nil, notFound("document %q has no chunk %d (it has %d)", doc, index, len(cs))
		}
		c = &cs[i]
	default:
		return nil, badRequest(CodeMissingParam, "give a chunk id, or a document and a chunk index")
	}
	if d == nil {
		var err error
		if d, err = e.st.Document(ctx, c.DocID); err != nil {
			return nil, err
		}
	}
	if d.Status != store.StatusDone {
		return nil, notFound("chunk %q belongs to a document that is %s", c.ID, d.Status)
	}
	ms, err := e.st.EntitiesOfChunks(ctx, []string{c.ID})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.EntityID
	}
	ents, err := e.st.Entities(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := &ChunkJSON{ID: c.ID, DocID: c.DocID, DocPath: d.Path, DocTitle: d.Title, Index: c.Index, DocChunks: d.Chunks,
		Tokens: c.Tokens, Text: c.Text, Entities: []EntityJSON{}}
	for _, x := range ents {
		out.Entities = append(out.Entities, entityOf(x))
	}
	return out, nil
}

// document finds a document by id or path.
func (e *Engine) document(ctx context.Context, idOrPath string) (*store.Document, error) {
	d, err := e.st.Document(ctx, idOrPath)
	if errors.Is(err, store.ErrNotFound) {
		d, err = e.st.DocumentByPath(ctx, idOrPath)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound("no document %q (give its id or path)", idOrPath)
	}
	return d, err
}

// StatsJSON is what a store holds and how the server is doing.
type StatsJSON struct {
	Store        string         `json:"store"`
	Embedder     string         `json:"embedder"`
	Dimension    int            `json:"dimension"`
	Documents    int            `json:"documents"`
	ByStatus     map[string]int `json:"by_status"`
	Chunks       int            `json:"chunks"`
	Entities     int            `json:"entities"`
	Relations    int            `json:"relations"`
	Mentions     int            `json:"mentions"`
	GraphVersion string         `json:"graph_version"`
	LLM          bool           `json:"llm"`
	Cypher       bool           `json:"cypher"`
	Goroutines   int            `json:"goroutines"`
	HeapBytes    uint64         `json:"heap_bytes"`
}

func (e *Engine) stats(ctx context.Context) (*StatsJSON, error) {
	s, err := e.st.Stats(ctx)
	if err != nil {
		return nil, err
	}
	out := &StatsJSON{Store: store.Redact(e.storeURL), Embedder: s.Embedder.Name, Dimension: s.Embedder.Dimension,
		Documents: s.Documents, ByStatus: map[string]int{}, Chunks: s.Chunks, Entities: s.Entities, Relations: s.Relations,
		Mentions: s.Mentions, LLM: e.model != nil, Cypher: e.cfg.Retrieval.Cypher && e.model != nil, Goroutines: runtime.NumGoroutine()}
	for k, v := range s.ByStatus {
		out.ByStatus[string(k)] = v
	}
	if gs, ok := e.st.(store.GraphScanner); ok {
		if out.GraphVersion, err = gs.GraphVersion(ctx); err != nil {
			return nil, err
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	out.HeapBytes = m.HeapAlloc
	return out, nil
}
