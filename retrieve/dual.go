package retrieve

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/docgraph/docgraph/store"
)

// level is what one of LightRAG's two retrieval levels found.
type level struct {
	entities  []store.EntityHit
	relations []store.RelationHit
	chunks    []scoredID
	warning   string // what the level did without (embedOrWarn)
}

// dual is LightRAG's dual-level retrieval: low-level keywords find
// entities, then their relations and the chunks mentioning them (local);
// high-level keywords find relations, then their entities and the chunks
// holding them (global); hybrid runs both and merges them.
func (r *Retriever) dual(ctx context.Context, res *Result) error {
	st := &stages{res: res}
	var kw Keywords
	_ = st.time("keywords", func() error {
		kw, _ = ExtractKeywords(ctx, r.model, r.ner, res.Question)
		return nil
	})
	res.Keywords = &kw

	var local, global level
	g, gctx := errgroup.WithContext(ctx)
	if res.Mode != ModeGlobal {
		g.Go(func() (err error) {
			return st.time("local", func() error {
				local, err = r.localLevel(gctx, kw.Low)
				return err
			})
		})
	}
	if res.Mode != ModeLocal {
		g.Go(func() (err error) {
			return st.time("global", func() error {
				global, err = r.globalLevel(gctx, kw.High)
				return err
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	res.warn(local.warning)
	res.warn(global.warning)

	f := NewFusion(0)
	f.AddRanked("local", 1, local.chunks)
	f.AddRanked("global", 1, global.chunks)
	res.Passages = f.Top(r.cfg.TopK)
	if err := st.time("documents", func() error { return r.fillPassages(ctx, res.Passages) }); err != nil {
		return err
	}
	res.Passages = dropEmpty(res.Passages)

	return st.time("assemble", func() error {
		// Merge: the local level's entities first, then the global level's
		// (describe keeps each once); relations likewise, deduplicated and
		// cut here, before describe orders them by weight.
		ents := append(local.entities[:len(local.entities):len(local.entities)], global.entities...)
		var rels []store.Relation
		relSeen := map[string]bool{}
		for _, list := range [][]store.RelationHit{local.relations, global.relations} {
			for _, h := range list {
				if !relSeen[h.ID] && len(rels) < r.cfg.MaxRelations {
					relSeen[h.ID] = true
					rels = append(rels, h.Relation)
				}
			}
		}
		return r.describe(ctx, res, nil, ents, "keywords", rels, nil, nil, nil)
	})
}

// localLevel: keywords -> entities (by exact name, vector and full text) ->
// their relations and the chunks that mention them.
func (r *Retriever) localLevel(ctx context.Context, keywords []string) (level, error) {
	var out level
	if len(keywords) == 0 {
		return out, nil
	}
	vec, warning, err := embedOrWarn(ctx, r.emb, strings.Join(keywords, ", "))
	if err != nil {
		return out, fmt.Errorf("embed keywords: %w", err)
	}
	out.warning = warning
	var byName []store.Entity
	var byVec, byText []store.EntityHit
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		byName, err = r.store.Entities(gctx, nameIDs(keywords))
		byName = longestNamed(byName)
		return wrap("entity lookup", err)
	})
	g.Go(func() (err error) {
		if vec == nil {
			return nil
		}
		byVec, err = r.store.SearchEntities(gctx, vec, r.cfg.MaxEntities)
		return wrap("entity vector search", err)
	})
	g.Go(func() (err error) {
		byText, err = r.store.SearchEntitiesText(gctx, strings.Join(keywords, " "), r.cfg.MaxEntities)
		return wrap("entity full-text search", err)
	})
	if err := g.Wait(); err != nil {
		return out, err
	}
	// Fuse the three entity lists by reciprocal rank; a named entity counts most.
	score := map[string]float64{}
	ent := map[string]store.Entity{}
	for i, e := range byName {
		score[e.ID] += 2 / (60 + float64(i+1))
		ent[e.ID] = e
	}
	for _, list := range [][]store.EntityHit{byVec, byText} {
		for i, h := range list {
			score[h.ID] += 1 / (60 + float64(i+1))
			ent[h.ID] = h.Entity
		}
	}
	for id, s := range score {
		out.entities = append(out.entities, store.EntityHit{Entity: ent[id], Score: s})
	}
	sort.Slice(out.entities, func(i, j int) bool {
		a, b := out.entities[i], out.entities[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.ID < b.ID
	})
	out.entities = out.entities[:min(len(out.entities), r.cfg.MaxEntities)]
	ids := make([]string, len(out.entities))
	for i, e := range out.entities {
		ids[i] = e.ID
	}

	g, gctx = errgroup.WithContext(ctx)
	g.Go(func() error {
		rels, err := r.store.RelationsOf(gctx, ids, 2*r.cfg.MaxRelations)
		if err != nil {
			return wrap("relations of entities", err)
		}
		for _, rel := range rels {
			out.relations = append(out.relations, store.RelationHit{Relation: rel, Score: score[rel.SourceID] + score[rel.TargetID]})
		}
		sort.SliceStable(out.relations, func(i, j int) bool { return out.relations[i].Score > out.relations[j].Score })
		out.relations = out.relations[:min(len(out.relations), r.cfg.MaxRelations)]
		return nil
	})
	g.Go(func() error {
		ms, err := r.store.MentionsOf(gctx, ids, mentionLimit)
		if err != nil {
			return wrap("mentions of entities", err)
		}
		out.chunks = rankMentions(ms, func(id string) float64 { return score[id] })
		return nil
	})
	return out, g.Wait()
}

// globalLevel: keywords -> relations by vector search -> their endpoint
// entities and the chunks that mention both endpoints (where the relation
// was read), then chunks naming one endpoint.
func (r *Retriever) globalLevel(ctx context.Context, keywords []string) (level, error) {
	var out level
	if len(keywords) == 0 {
		return out, nil
	}
	vec, warning, err := embedOrWarn(ctx, r.emb, strings.Join(keywords, ", "))
	if err != nil {
		return out, fmt.Errorf("embed keywords: %w", err)
	}
	if vec == nil {
		// The global level starts from a relation vector search.
		out.warning = warning
		return out, nil
	}
	out.relations, err = r.store.SearchRelations(ctx, vec, r.cfg.MaxRelations)
	if err != nil {
		return out, wrap("relation vector search", err)
	}
	endScore := map[string]float64{}
	var ids []string
	for _, h := range out.relations {
		for _, id := range []string{h.SourceID, h.TargetID} {
			if _, ok := endScore[id]; !ok {
				ids = append(ids, id)
			}
			endScore[id] += h.Score
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	var ms []store.Mention
	var ents []store.Entity
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		ms, err = r.store.MentionsOf(gctx, ids, mentionLimit)
		return wrap("mentions of relation endpoints", err)
	})
	g.Go(func() (err error) {
		ents, err = r.store.Entities(gctx, ids)
		return wrap("relation endpoints", err)
	})
	if err := g.Wait(); err != nil {
		return out, err
	}
	for _, e := range ents {
		out.entities = append(out.entities, store.EntityHit{Entity: e, Score: endScore[e.ID]})
	}
	sort.SliceStable(out.entities, func(i, j int) bool { return out.entities[i].Score > out.entities[j].Score })
	out.entities = out.entities[:min(len(out.entities), r.cfg.MaxEntities)]

	inChunk := map[string]map[string]bool{}
	for _, m := range ms {
		if inChunk[m.ChunkID] == nil {
			inChunk[m.ChunkID] = map[string]bool{}
		}
		inChunk[m.ChunkID][m.EntityID] = true
	}
	score := map[string]float64{}
	for chunk, ents := range inChunk {
		for _, h := range out.relations {
			switch {
			case ents[h.SourceID] && ents[h.TargetID]:
				score[chunk] += h.Score
			case ents[h.SourceID] || ents[h.TargetID]:
				score[chunk] += h.Score / 4
			}
		}
	}
	for id, s := range score {
		out.chunks = append(out.chunks, scoredID{id, s})
	}
	sortScored(out.chunks)
	return out, nil
}
