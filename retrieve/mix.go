package retrieve

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// mentionLimit bounds the MENTIONED_IN edges one path reads.
const mentionLimit = 2000

// mix is the multi-path pipeline: fact search, entity discovery, four chunk
// paths plus Personalized PageRank, relationship expansion, fusion, rerank
// against stored embeddings, fact filtering and document mapping.
func (r *Retriever) mix(ctx context.Context, res *Result) error {
	cfg := r.cfg
	if r.pathsErr != nil {
		return fmt.Errorf("path signal: %w", r.pathsErr)
	}
	st := &stages{res: res}
	q := res.Question
	terms := textQuery(q)
	// The extractor runs once: its names are both the offline keywords and
	// the entity names to look up.
	names := mentionNames(r.ner, q)

	var vec []float32 // nil: the embedder failed, the vector paths are off
	if err := st.time("embed", func() (err error) {
		var warning string
		vec, warning, err = embedOrWarn(ctx, r.emb, q)
		res.warn(warning)
		return err
	}); err != nil {
		return fmt.Errorf("embed question: %w", err)
	}

	// Text-to-Cypher runs beside everything and never fails the query.
	cypherDone := make(chan *CypherResult, 1)
	if runner, ok := r.store.(CypherRunner); ok && cfg.Cypher && r.model != nil {
		go func() {
			var cr *CypherResult
			_ = st.time("cypher", func() error {
				cr = textToCypher(ctx, r.model, runner, q, cfg.CypherLimit)
				return nil
			})
			cypherDone <- cr
		}()
	} else {
		cypherDone <- nil
	}

	var (
		kw                                     = offlineKeywords(names, q)
		ftHits, vecHits                        []store.ChunkHit
		factHits                               []store.RelationHit
		walk                                   *walker        // nil: no PageRank
		counts                                 map[string]int // chunk counts of the named entities
		named                                  []store.Entity
		textEnts                               []store.EntityHit
		mentionRanked, twoHopRanked, pprRanked []scoredID
		pathRanked                             []scoredID
		rel1, rel2                             []store.Relation
	)
	// The searches that need only the question run beside the graph path,
	// which goes entities -> seeds -> mentions, expansion and PageRank.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if vec == nil {
			return nil
		}
		return st.time("facts", func() (err error) {
			factHits, err = r.store.SearchRelations(gctx, vec, cfg.FactTopK)
			return wrap("fact search", err)
		})
	})
	g.Go(func() error {
		return st.time("fulltext", func() (err error) {
			ftHits, err = r.store.SearchChunksText(gctx, terms, cfg.Candidates)
			return wrap("full-text search", err)
		})
	})
	g.Go(func() error {
		if vec == nil {
			return nil
		}
		return st.time("vector", func() (err error) {
			vecHits, err = r.store.SearchChunks(gctx, vec, cfg.Candidates)
			return wrap("vector search", err)
		})
	})
	g.Go(func() error {
		if r.model != nil {
			_ = st.time("keywords", func() error {
				// A failed model call is not fatal: the offline keywords stand in.
				kw, _ = ExtractKeywords(gctx, r.model, r.ner, q)
				return nil
			})
		}
		if err := st.time("entities", func() (err error) {
			named, textEnts, err = r.discover(gctx, nameCandidates(names, kw), terms)
			return err
		}); err != nil {
			return err
		}
		if pgs, ok := r.store.(store.PassageGraph); ok {
			// The named entities' chunk counts weigh the seeds; reading
			// them also fetches PageRank's first round.
			_ = st.time("graph", func() error {
				w, err := r.startWalk(gctx, pgs)
				if err == nil {
					counts, err = w.entityCounts(gctx, entityIDs(named))
				}
				if err == nil {
					walk = w
				} // else the other paths still answer, without PageRank
				return nil
			})
		}
		namedChunks := make(map[string]int, len(named))
		for _, e := range named {
			namedChunks[e.ID] = entityChunks(counts, e)
		}
		seedEnts := seedEntities(namedChunks, cfg.Graph)
		mentioned := make([]string, 0, len(seedEnts))
		for id := range seedEnts {
			mentioned = append(mentioned, id)
		}
		sort.Strings(mentioned)
		h, hctx := errgroup.WithContext(gctx)
		h.Go(func() error {
			return st.time("mentions", func() error {
				ms, err := r.store.MentionsOf(hctx, mentioned, mentionLimit)
				if err != nil {
					return wrap("mentions", err)
				}
				mentionRanked = rankMentions(ms, func(id string) float64 {
					return seedEnts[id] / float64(max(namedChunks[id], 1))
				})
				return nil
			})
		})
		h.Go(func() error {
			return st.time("expand", func() (err error) {
				rel1, rel2, twoHopRanked, err = r.expand(hctx, mentioned, seedEnts, walk)
				return err
			})
		})
		if r.paths != nil && len(mentioned) > 0 {
			h.Go(func() error {
				return st.time("paths", func() error {
					ranked, found, err := r.pathSignal(hctx, q, mentioned)
					if found != nil {
						pathRanked, res.Paths = ranked, found.Paths
					}
					return err
				})
			})
		}
		if walk != nil {
			h.Go(func() error {
				return st.time("ppr", func() error {
					ranked, _, err := walk.rankChunks(hctx, seedEnts, counts, cfg.Damping, cfg.PushEpsilon, cfg.Candidates)
					if err != nil && hctx.Err() != nil {
						return err
					}
					pprRanked = ranked // nil after a failed read: the other paths still answer
					return nil
				})
			})
		}
		return h.Wait()
	})
	if err := g.Wait(); err != nil {
		return err
	}
	res.Keywords = &kw

	w := cfg.Weights
	f := NewFusion(cfg.RRFK)
	f.Add("fulltext", w.FullText, ftHits)
	f.Add("vector", w.Vector, vecHits)
	f.AddRanked("mentions", w.Mentions, mentionRanked)
	f.AddRanked("twohop", w.TwoHop, twoHopRanked)
	f.AddRanked("ppr", w.PPR, pprRanked)
	f.AddRanked("paths", w.Paths, pathRanked)

	// Rerank the best candidates by cosine against their stored embeddings,
	// folded in as one more signal so the graph's ranking still counts.
	if err := st.time("rerank", func() error {
		pool := f.Top(max(3*cfg.TopK, 30))
		if err := r.fillChunks(ctx, pool, embeddingsOf(ftHits, vecHits)); err != nil {
			return err
		}
		for _, p := range pool {
			f.update(p)
		}
		if vec != nil {
			f.AddRanked("rerank", w.Rerank, rankByCosine(vec, pool))
		}
		res.Passages = f.Top(cfg.TopK)
		return nil
	}); err != nil {
		return err
	}
	if err := st.time("documents", func() error { return r.fillPassages(ctx, res.Passages) }); err != nil {
		return err
	}
	// A chunk deleted since PageRank read it cannot be read: leave it out.
	res.Passages = dropEmpty(res.Passages)

	if err := st.time("assemble", func() error {
		return r.describe(ctx, res, named, textEnts, "fulltext", rel1, rel2, filterFacts(factHits, cfg.FactThreshold, cfg.MinFacts), counts)
	}); err != nil {
		return err
	}
	res.Cypher = <-cypherDone
	return nil
}

func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// seedEntities weighs the entities the question names (with their chunk
// counts) as PPR seeds (1 each), leaving out those too common to carry signal.
func seedEntities(chunks map[string]int, o GraphOptions) map[string]float64 {
	seeds := map[string]float64{}
	for id, n := range chunks {
		if o.kept(max(n, 1)) {
			seeds[id] = 1
		}
	}
	return seeds
}

// entityChunks is the number of chunks mentioning e: its count in the
// passage graph when counts has it, else the store's Entity.Mentions (a
// store without the passage graph, or an entity in no done document).
func entityChunks(counts map[string]int, e store.Entity) int {
	if n, ok := counts[e.ID]; ok {
		return n
	}
	return e.Mentions
}

func entityIDs(es []store.Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// discover is entity discovery: each name is an entity id once normalised
// (exact match). When no name matches exactly, the entity full-text index
// looks for the names (or, with no names at all, for fallback: the
// question's content words), finding partial and stemmed matches. Keeping
// the full-text query for when exact matching fails keeps it off the common
// path, where it would cost more than the rest of the query.
func (r *Retriever) discover(ctx context.Context, names []string, fallback string) ([]store.Entity, []store.EntityHit, error) {
	named, err := r.store.Entities(ctx, nameIDs(names))
	if err != nil {
		return nil, nil, wrap("entity lookup", err)
	}
	named = longestNamed(named)
	if len(named) > 0 {
		return named, nil, nil
	}
	query := strings.Join(names, " ")
	if len(names) == 0 {
		query = fallback
	}
	if strings.TrimSpace(query) == "" {
		return nil, nil, nil
	}
	hits, err := r.store.SearchEntitiesText(ctx, query, r.cfg.MaxEntities)
	if err != nil {
		return nil, nil, wrap("entity full-text search", err)
	}
	return nil, hits, nil
}

// nameCandidates are the names the question mentions (by the extractor)
// and the model's low-level keywords, each once.
func nameCandidates(names []string, kw Keywords) []string {
	if kw.Source != "llm" {
		return names
	}
	var out []string
	seen := map[string]bool{}
	for _, n := range append(names[:len(names):len(names)], kw.Low...) {
		k := graphbuild.NormalizeKey(n)
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}

// rankMentions scores each chunk by the summed weight of the entities
// mentioning it.
func rankMentions(ms []store.Mention, weight func(entityID string) float64) []scoredID {
	score := map[string]float64{}
	for _, m := range ms {
		if w := weight(m.EntityID); w > 0 {
			score[m.ChunkID] += w
		}
	}
	out := make([]scoredID, 0, len(score))
	for id, s := range score {
		out = append(out, scoredID{id, s})
	}
	sortScored(out)
	return out
}

// expand follows relations from the found entities: the 1-hop relations,
// the neighbours they lead to, the neighbours' own relations (2 hops) and
// the chunks mentioning the neighbours, scored by the relations' weights.
// With the passage graph (walk), neighbours outside it (hubs, or in no
// done document) lead nowhere and are left out.
func (r *Retriever) expand(ctx context.Context, entities []string, seeds map[string]float64, walk *walker) (rel1, rel2 []store.Relation, chunks []scoredID, err error) {
	if len(entities) == 0 {
		return nil, nil, nil, nil
	}
	rel1, err = r.store.RelationsOf(ctx, entities, 4*r.cfg.MaxRelations)
	if err != nil {
		return nil, nil, nil, wrap("relationship expansion", err)
	}
	reach := map[string]float64{}
	for _, rel := range rel1 {
		w := math.Max(rel.Weight, 1)
		if _, in := seeds[rel.SourceID]; !in {
			reach[rel.SourceID] += w * seeds[rel.TargetID]
		}
		if _, in := seeds[rel.TargetID]; !in {
			reach[rel.TargetID] += w * seeds[rel.SourceID]
		}
	}
	var hop []scoredID
	for id, s := range reach {
		hop = append(hop, scoredID{id, s})
	}
	if walk != nil && len(hop) > 0 {
		ids := make([]string, len(hop))
		for i, h := range hop {
			ids[i] = h.ID
		}
		counts, err := walk.entityCounts(ctx, ids)
		if err != nil {
			return nil, nil, nil, err
		}
		hop = slices.DeleteFunc(hop, func(h scoredID) bool { return !walk.opts.kept(counts[h.ID]) })
	}
	sortScored(hop)
	hop = hop[:min(len(hop), r.cfg.MaxEntities)]
	if len(hop) == 0 {
		return rel1, nil, nil, nil
	}
	ids := make([]string, len(hop))
	weight := map[string]float64{}
	for i, h := range hop {
		ids[i] = h.ID
		weight[h.ID] = h.Score
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var err error
		rel2, err = r.store.RelationsOf(gctx, ids, 2*r.cfg.MaxRelations)
		return wrap("2-hop relationship expansion", err)
	})
	g.Go(func() error {
		ms, err := r.store.MentionsOf(gctx, ids, mentionLimit)
		if err != nil {
			return wrap("2-hop mentions", err)
		}
		count := map[string]int{}
		for _, m := range ms {
			count[m.EntityID]++
		}
		chunks = rankMentions(ms, func(id string) float64 { return weight[id] / float64(max(count[id], 1)) })
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, nil, nil, err
	}
	return rel1, rel2, chunks, nil
}

// filterFacts keeps facts scoring at least threshold, and the best min
// facts whatever their score.
func filterFacts(hits []store.RelationHit, threshold float64, minKeep int) []store.RelationHit {
	var out []store.RelationHit
	for i, h := range hits {
		if i < minKeep || h.Score >= threshold {
			out = append(out, h)
		}
	}
	return out
}

// embeddingsOf indexes the stored embeddings that came with search hits.
func embeddingsOf(lists ...[]store.ChunkHit) map[string]store.ChunkHit {
	out := map[string]store.ChunkHit{}
	for _, l := range lists {
		for _, h := range l {
			if _, ok := out[h.ID]; !ok {
				out[h.ID] = h
			}
		}
	}
	return out
}

// rankByCosine orders passages by the cosine of their embedding to vec (0
// for an embedding of another length, from another embedder).
func rankByCosine(vec []float32, ps []Passage) []scoredID {
	out := make([]scoredID, 0, len(ps))
	for _, p := range ps {
		if len(p.embedding) > 0 {
			out = append(out, scoredID{p.ChunkID, embedstore.Cosine(vec, p.embedding)})
		}
	}
	sortScored(out)
	return out
}
