package server

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/store"
)

// The routes the web page needs beyond the browse API: a document's
// stored text, and the graph around the passages of an answer.

func (a *api) documentText(w http.ResponseWriter, r *http.Request) error {
	d, err := a.e.documentText(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, d)
	return nil
}

func (a *api) subgraph(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	g, err := a.e.subgraph(r.Context(), q["chunk"], q["entity"], limit)
	if err != nil {
		return err
	}
	writeHTTPJSON(w, http.StatusOK, g)
	return nil
}

// SegmentJSON is the part of a document's text that one chunk adds to the
// chunks before it: the chunks overlap, and a segment leaves the overlap
// out, so the segments in order are the document's text.
type SegmentJSON struct {
	ChunkID string `json:"chunk_id"`
	Index   int    `json:"chunk_index"`
	Text    string `json:"text"`
}

// DocumentTextJSON is a document with its stored text.
type DocumentTextJSON struct {
	DocJSON
	// Segments are the text, chunk by chunk; [] unless the document is done.
	Segments []SegmentJSON `json:"segments"`
	// Truncated says the text was cut at maxDocumentText bytes.
	Truncated bool `json:"truncated"`
}

// maxDocumentText bounds the text of one answer: a book's worth, not a
// whole corpus file that someone ingested as one document.
const maxDocumentText = 4 << 20

// documentText reads a document (by id or path) and the text its chunks
// hold. The store keeps chunks, not files: each chunk is its document's
// text between two byte offsets, so the text is rebuilt from them, and a
// gap between two chunks (the blank the splitter trimmed) becomes a line
// break.
func (e *Engine) documentText(ctx context.Context, idOrPath string) (*DocumentTextJSON, error) {
	d, err := e.document(ctx, idOrPath)
	if err != nil {
		return nil, err
	}
	out := &DocumentTextJSON{DocJSON: docOf(*d), Segments: []SegmentJSON{}}
	if d.Status != store.StatusDone {
		return out, nil
	}
	cs, err := e.st.DocumentChunks(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cs, func(a, b store.Chunk) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Index, b.Index))
	})
	size := 0
	for i, text := range pipeline.Segments(cs) {
		if size+len(text) > maxDocumentText {
			out.Truncated = true
			break
		}
		size += len(text)
		out.Segments = append(out.Segments, SegmentJSON{ChunkID: cs[i].ID, Index: cs[i].Index, Text: text})
	}
	return out, nil
}

// SubgraphNode is an entity of the graph around some passages.
type SubgraphNode struct {
	EntityJSON
	// Chunks are the requested passages that mention it.
	Chunks []string `json:"chunks"`
	// Seed says the request named it (entity=).
	Seed bool `json:"seed"`
}

// SubgraphJSON is the graph around a set of passages.
type SubgraphJSON struct {
	Nodes []SubgraphNode `json:"nodes"`
	Edges []RelationJSON `json:"edges"`
	// Truncated says the node limit left entities out.
	Truncated bool `json:"truncated"`
}

// Bounds of a subgraph request: a page of passages and the entities a
// query found, and a graph small enough to draw.
const (
	maxSubgraphIDs  = 50
	maxSubgraphSize = 200
)

// subgraph is the entities the chunks mention (those of done documents)
// and the entities named, at most limit, and the relations among them.
// Named entities come first, then those the chunks, best first, weigh
// most: the chunk of rank r (from 0) gives each entity it mentions
// 1/(r+1), so the top passage's entities come before the tenth's, and an
// entity that links several passages before one only one of them names.
// Ties go to the entity mentioned more often in the store.
func (e *Engine) subgraph(ctx context.Context, chunkIDs, entityIDs []string, limit int) (*SubgraphJSON, error) {
	if limit == 0 {
		limit = 40
	}
	switch {
	case limit < 1 || limit > maxSubgraphSize:
		return nil, badRequest(CodeOutOfRange, "limit %d is out of range [1, %d]", limit, maxSubgraphSize)
	case len(chunkIDs) == 0 && len(entityIDs) == 0:
		return nil, badRequest(CodeMissingParam, "give passages, entities or both: /v1/subgraph?chunk=ID&entity=ID")
	case len(chunkIDs) > maxSubgraphIDs || len(entityIDs) > maxSubgraphIDs:
		return nil, badRequest(CodeOutOfRange, "at most %d chunk and %d entity parameters", maxSubgraphIDs, maxSubgraphIDs)
	}
	chunks, err := e.doneChunks(ctx, chunkIDs)
	if err != nil {
		return nil, err
	}
	ms, err := e.st.EntitiesOfChunks(ctx, chunks)
	if err != nil {
		return nil, err
	}
	mentioned := map[string][]string{}
	for _, m := range ms {
		if !slices.Contains(mentioned[m.EntityID], m.ChunkID) {
			mentioned[m.EntityID] = append(mentioned[m.EntityID], m.ChunkID)
		}
	}
	rank := map[string]int{}
	for i, id := range chunkIDs {
		if _, ok := rank[id]; !ok {
			rank[id] = i
		}
	}
	weight := map[string]float64{}
	var cands []string
	for id, cs := range mentioned {
		for _, c := range cs {
			weight[id] += 1 / float64(rank[c]+1)
		}
		cands = append(cands, id)
	}
	// Only the entities that can make the cut are read: those weighing at
	// least the limit-th, ties included for the tie-break.
	truncated := false
	if len(cands) > limit {
		slices.SortFunc(cands, func(a, b string) int { return -cmp.Compare(weight[a], weight[b]) })
		cut := weight[cands[limit-1]]
		n := limit
		for n < len(cands) && weight[cands[n]] >= cut {
			n++
		}
		cands, truncated = cands[:n], true
	}
	ents, err := e.st.Entities(ctx, append(slices.Clone(entityIDs), cands...))
	if err != nil {
		return nil, err
	}
	g := &SubgraphJSON{Nodes: []SubgraphNode{}, Edges: []RelationJSON{}, Truncated: truncated}
	seen := map[string]bool{}
	for _, x := range ents {
		if seen[x.ID] {
			continue
		}
		seen[x.ID] = true
		g.Nodes = append(g.Nodes, SubgraphNode{EntityJSON: entityOf(x), Chunks: orEmpty(mentioned[x.ID]), Seed: slices.Contains(entityIDs, x.ID)})
	}
	slices.SortFunc(g.Nodes, func(a, b SubgraphNode) int {
		if a.Seed != b.Seed {
			if a.Seed {
				return -1
			}
			return 1
		}
		return cmp.Or(-cmp.Compare(weight[a.ID], weight[b.ID]), -cmp.Compare(a.Mentions, b.Mentions), cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	if len(g.Nodes) > limit {
		g.Nodes, g.Truncated = g.Nodes[:limit], true
	}
	in := map[string]store.Entity{}
	nodeIDs := make([]string, len(g.Nodes))
	for i, n := range g.Nodes {
		nodeIDs[i] = n.ID
		in[n.ID] = store.Entity{ID: n.ID, Name: n.Name}
	}
	if len(nodeIDs) == 0 {
		return g, nil
	}
	// Relations touching the nodes, heaviest first; those between two of
	// them are kept, at most four a node, which a drawing can still show.
	rels, err := e.st.RelationsOf(ctx, nodeIDs, min(50*len(nodeIDs), 10000))
	if err != nil {
		return nil, err
	}
	var between []store.Relation
	for _, r := range rels {
		_, s := in[r.SourceID]
		_, t := in[r.TargetID]
		if s && t && len(between) < 4*len(nodeIDs) {
			between = append(between, r)
		}
	}
	g.Edges = relationsOf(between, in)
	return g, nil
}

// doneChunks is those of ids that are chunks of done documents.
func (e *Engine) doneChunks(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cs, err := e.st.Chunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	var out []string
	for _, c := range cs {
		ok, known := done[c.DocID]
		if !known {
			d, err := e.st.Document(ctx, c.DocID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			ok = d != nil && d.Status == store.StatusDone
			done[c.DocID] = ok
		}
		if ok {
			out = append(out, c.ID)
		}
	}
	return out, nil
}
