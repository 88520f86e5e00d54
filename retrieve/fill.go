package retrieve

import (
	"context"
	"errors"
	"sort"

	"github.com/docgraph/docgraph/store"
)

// fillChunks gives every passage its chunk's text, position and stored
// embedding: from search hits that carried them, else from the store.
func (r *Retriever) fillChunks(ctx context.Context, ps []Passage, known map[string]store.ChunkHit) error {
	var missing []string
	for i := range ps {
		p := &ps[i]
		if p.Text != "" && len(p.embedding) > 0 {
			continue
		}
		if h, ok := known[p.ChunkID]; ok {
			copyChunk(p, h.Chunk)
			if p.DocPath == "" {
				p.DocPath, p.DocTitle = h.DocPath, h.DocTitle
			}
			continue
		}
		missing = append(missing, p.ChunkID)
	}
	if len(missing) == 0 {
		return nil
	}
	cs, err := r.store.Chunks(ctx, missing)
	if err != nil {
		return wrap("read chunks", err)
	}
	byID := make(map[string]store.Chunk, len(cs))
	for _, c := range cs {
		byID[c.ID] = c
	}
	for i := range ps {
		if c, ok := byID[ps[i].ChunkID]; ok {
			copyChunk(&ps[i], c)
		}
	}
	return nil
}

func copyChunk(p *Passage, c store.Chunk) {
	p.DocID, p.Index, p.Text, p.embedding = c.DocID, c.Index, c.Text, c.Embedding
}

// docInfo is what a passage shows of its document.
type docInfo struct {
	Path, Title string
}

// fillPassages completes the passages' chunk data and maps each to its
// document (path and title), reading the documents search hits did not
// name. Passages whose chunk has vanished since the search are dropped.
func (r *Retriever) fillPassages(ctx context.Context, ps []Passage) error {
	if err := r.fillChunks(ctx, ps, nil); err != nil {
		return err
	}
	docs := map[string]docInfo{}
	for i := range ps {
		p := &ps[i]
		if p.DocPath != "" || p.DocID == "" {
			continue
		}
		d, ok := docs[p.DocID]
		if !ok {
			doc, err := r.store.Document(ctx, p.DocID)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return wrap("document mapping", err)
			default:
				d = docInfo{Path: doc.Path, Title: doc.Title}
			}
			docs[p.DocID] = d
		}
		p.DocPath, p.DocTitle = d.Path, d.Title
	}
	return nil
}

// dropEmpty removes passages whose chunk could not be read.
func dropEmpty(ps []Passage) []Passage {
	out := ps[:0]
	for _, p := range ps {
		if p.Text != "" {
			out = append(out, p)
		}
	}
	return out
}

// describe fills the result's entities, relations and facts, naming every
// relation endpoint. It lists the entities in order: named ones first, then the hits
// (labelled via).
func (r *Retriever) describe(ctx context.Context, res *Result, named []store.Entity, hits []store.EntityHit, via string,
	rel1, rel2 []store.Relation, facts []store.RelationHit, counts map[string]int) error {
	cfg := r.cfg
	seen := map[string]bool{}
	addEntity := func(e store.Entity, score float64, via string) {
		if seen[e.ID] || len(res.Entities) >= cfg.MaxEntities {
			return
		}
		seen[e.ID] = true
		res.Entities = append(res.Entities, EntityInfo{ID: e.ID, Name: e.Name, Type: e.Type, Description: e.Description,
			Chunks: entityChunks(counts, e), Score: score, Via: via})
	}
	for _, e := range named {
		addEntity(e, 1, "name")
	}
	for _, h := range hits {
		addEntity(h.Entity, h.Score, via)
	}

	// Relations: 1 hop first, heaviest first, then 2 hops; each once.
	type hopRel struct {
		rel  store.Relation
		hops int
	}
	var rels []hopRel
	relSeen := map[string]bool{}
	for hops, list := range [][]store.Relation{rel1, rel2} {
		sorted := append([]store.Relation(nil), list...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Weight > sorted[j].Weight })
		for _, rel := range sorted {
			if relSeen[rel.ID] || len(rels) >= cfg.MaxRelations {
				continue
			}
			relSeen[rel.ID] = true
			rels = append(rels, hopRel{rel, hops + 1})
		}
	}
	relList := make([]store.Relation, len(rels))
	for i, hr := range rels {
		relList[i] = hr.rel
	}
	names, err := r.entityNames(ctx, relList, facts, res.Entities)
	if err != nil {
		return err
	}
	for _, hr := range rels {
		res.Relations = append(res.Relations, relationInfo(hr.rel, names, hr.rel.Weight, hr.hops))
	}
	for _, h := range facts {
		res.Facts = append(res.Facts, relationInfo(h.Relation, names, h.Score, 0))
	}
	return nil
}

// entityNames looks up the names of every relation endpoint not already known.
func (r *Retriever) entityNames(ctx context.Context, rels []store.Relation, facts []store.RelationHit, known []EntityInfo) (map[string]string, error) {
	names := map[string]string{}
	for _, e := range known {
		names[e.ID] = e.Name
	}
	var ids []string
	need := func(id string) {
		if _, ok := names[id]; !ok && id != "" {
			names[id] = ""
			ids = append(ids, id)
		}
	}
	for _, rel := range rels {
		need(rel.SourceID)
		need(rel.TargetID)
	}
	for _, h := range facts {
		need(h.SourceID)
		need(h.TargetID)
	}
	if len(ids) == 0 {
		return names, nil
	}
	ents, err := r.store.Entities(ctx, ids)
	if err != nil {
		return nil, wrap("relation endpoints", err)
	}
	for _, e := range ents {
		names[e.ID] = e.Name
	}
	return names, nil
}

func relationInfo(rel store.Relation, names map[string]string, score float64, hops int) RelationInfo {
	name := func(id string) string {
		if n := names[id]; n != "" {
			return n
		}
		return id
	}
	return RelationInfo{ID: rel.ID, Source: name(rel.SourceID), Target: name(rel.TargetID), Type: rel.Type,
		Keywords: rel.Keywords, Description: rel.Description, Weight: rel.Weight, Score: score, Hops: hops}
}
