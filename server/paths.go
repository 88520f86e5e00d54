package server

import (
	"context"
	"fmt"

	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
)

// PathSource says where a chunk a path came from lives.
type PathSource struct {
	// DocPath is the document's file.
	DocPath string
	// Index is the chunk's position in its document, from 0.
	Index int
}

// PathSeeds resolves the names of seed entities (--seed) to their ids,
// or, when none are given and the graph links nothing in the question,
// asks the store's entity full-text search.
func PathSeeds(ctx context.Context, kg *paths.KG, st store.Store, names []string, question string) ([]string, error) {
	var ids []string
	for _, n := range names {
		node, ok := kg.Lookup(n)
		if !ok {
			return nil, fmt.Errorf("--seed %q: no such entity in the graph", n)
		}
		id, _ := kg.Entity(node)
		ids = append(ids, id)
	}
	if len(ids) > 0 || len(kg.Link(question)) > 0 {
		return ids, nil
	}
	hits, err := st.SearchEntitiesText(ctx, question, 3)
	if err != nil {
		return nil, fmt.Errorf("find the question's entities: %w", err)
	}
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	return ids, nil
}

// PathPassages looks up every chunk the result's paths came from: as
// passages (best path first, scored by the best path through them) and as
// locations by chunk id.
func PathPassages(ctx context.Context, st store.Store, res *paths.Result) ([]retrieve.Passage, map[string]PathSource, error) {
	ids := res.Chunks()
	if len(ids) == 0 {
		return nil, nil, nil
	}
	chunks, err := st.Chunks(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	score := map[string]float64{}
	for _, p := range res.Paths {
		for _, c := range p.Chunks() {
			if _, ok := score[c]; !ok {
				score[c] = p.Score // paths come best first
			}
		}
	}
	docs := map[string]*store.Document{}
	byID := make(map[string]retrieve.Passage, len(chunks))
	sources := make(map[string]PathSource, len(chunks))
	for _, c := range chunks {
		d, ok := docs[c.DocID]
		if !ok {
			d, _ = st.Document(ctx, c.DocID)
			docs[c.DocID] = d
		}
		p := retrieve.Passage{ChunkID: c.ID, DocID: c.DocID, Index: c.Index, Text: c.Text, Score: score[c.ID]}
		if d != nil {
			p.DocPath, p.DocTitle = d.Path, d.Title
		}
		byID[c.ID] = p
		sources[c.ID] = PathSource{DocPath: p.DocPath, Index: c.Index}
	}
	passages := make([]retrieve.Passage, 0, len(ids))
	for _, id := range ids {
		if p, ok := byID[id]; ok {
			passages = append(passages, p)
		}
	}
	return passages, sources, nil
}
