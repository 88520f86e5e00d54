package retrieve

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"docgraph/graphbuild"
	"docgraph/store"
)

// mentionLimit bounds the MENTIONED_IN edges one path reads.
const mentionLimit = 2000

// mix is the multi-path pipeline: fact search, entity discovery, four chunk
// paths plus Personalized PageRank, relationship expansion, fusion, rerank
// against stored embeddings, fact filtering and document mapping.
func (r *Retriever) mix(ctx context.Context, res *Result) error {
	cfg := r.cfg
	st := &stages{res: res}
	q := res.Question
	// Full-text queries leave out stop words: they add nothing to BM25 but
	// make the index walk every posting list they have.
	terms := strings.Join(ContentWords(q), " ")
	if terms == "" {
		terms = q
	}
	// Entity full-text search looks for the question's names (names weigh
	// most in that index); without names, for its content words.
	offline := OfflineKeywords(r.ner, q)
	entityTerms := strings.Join(offline.Low, " ")

	var vec []float32
	if err := st.time("embed", func() (err error) {
		vec, err = r.emb.EmbedQuery(ctx, q)
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
		kw        Keywords
		ftHits    []store.ChunkHit
		vecHits   []store.ChunkHit
		factHits  []store.RelationHit
		pg        *passageGraph
		named     []store.Entity
		textEnts  []store.EntityHit
		graphErr  error
		mentioned []string
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return st.time("keywords", func() error {
			// A failed model call is not fatal: the offline keywords stand in.
			if r.model == nil {
				kw = offline
				return nil
			}
			kw, _ = ExtractKeywords(gctx, r.model, r.ner, q)
			return nil
		})
	})
	g.Go(func() error {
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
		return st.time("vector", func() (err error) {
			vecHits, err = r.store.SearchChunks(gctx, vec, cfg.Candidates)
			return wrap("vector search", err)
		})
	})
	g.Go(func() error {
		return st.time("entities_fulltext", func() (err error) {
			textEnts, err = r.store.SearchEntitiesText(gctx, entityTerms, cfg.MaxEntities)
			return wrap("entity full-text search", err)
		})
	})
	if gs, ok := r.store.(store.GraphScanner); ok {
		g.Go(func() error {
			_ = st.time("graph", func() error {
				// Without the graph the other paths still answer.
				pg, graphErr = r.graph.get(gctx, r.store, gs)
				return nil
			})
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if graphErr != nil && ctx.Err() != nil {
		return graphErr
	}
	res.Keywords = &kw

	// Entity discovery by name: the question's names (and the model's
	// low-level keywords) are entity ids once normalised.
	names := nameCandidates(r.ner, q, kw)
	if err := st.time("entities_name", func() error {
		ids := make([]string, 0, len(names))
		for _, n := range names {
			ids = append(ids, graphbuild.EntityID(n))
		}
		var err error
		named, err = r.store.Entities(ctx, ids)
		return wrap("entity lookup", err)
	}); err != nil {
		return err
	}

	chunkCount := func(e store.Entity) int {
		if pg != nil {
			if n, ok := pg.chunkCount[e.ID]; ok {
				return n
			}
		}
		return max(e.Mentions, 1)
	}
	specific := func(e store.Entity) bool {
		return cfg.Graph.MaxEntityChunks <= 0 || chunkCount(e) <= cfg.Graph.MaxEntityChunks
	}
	// seedEnts weighs each found entity: 1 for a named one, less for a
	// full-text hit, in proportion to its score against the best.
	seedEnts := map[string]float64{}
	for _, e := range named {
		if specific(e) {
			seedEnts[e.ID] = 1
		}
	}
	if len(textEnts) > 0 && cfg.SeedFullText > 0 {
		best := textEnts[0].Score
		for _, h := range textEnts {
			if _, ok := seedEnts[h.ID]; ok || !specific(h.Entity) || best <= 0 {
				continue
			}
			seedEnts[h.ID] = cfg.SeedFullText * h.Score / best
		}
	}
	for id := range seedEnts {
		mentioned = append(mentioned, id)
	}
	sort.Strings(mentioned)

	var (
		mentionRanked, twoHopRanked, pprRanked []scoredID
		rel1, rel2                             []store.Relation
	)
	g, gctx = errgroup.WithContext(ctx)
	g.Go(func() error {
		return st.time("mentions", func() error {
			ms, err := r.store.MentionsOf(gctx, mentioned, mentionLimit)
			if err != nil {
				return wrap("mentions", err)
			}
			counts := entityCounts(pg, named, textEnts)
			mentionRanked = rankMentions(ms, func(id string) float64 {
				return seedEnts[id] / float64(max(counts[id], 1))
			})
			return nil
		})
	})
	g.Go(func() error {
		return st.time("expand", func() error {
			var err error
			rel1, rel2, twoHopRanked, err = r.expand(gctx, mentioned, seedEnts, pg)
			return err
		})
	})
	if pg != nil {
		g.Go(func() error {
			return st.time("ppr", func() error {
				seeds := pg.seedWeights(seedEnts)
				if cfg.SeedPassages > 0 && len(seeds) > 0 {
					addPassageSeeds(pg, seeds, ftHits, cfg.SeedPassages)
				}
				pprRanked = pg.rankChunks(seeds, cfg.Damping, cfg.PushEpsilon, cfg.Candidates)
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}

	w := cfg.Weights
	f := NewFusion(cfg.RRFK)
	f.Add("fulltext", w.FullText, ftHits)
	f.Add("vector", w.Vector, vecHits)
	f.AddRanked("mentions", w.Mentions, mentionRanked)
	f.AddRanked("twohop", w.TwoHop, twoHopRanked)
	f.AddRanked("ppr", w.PPR, pprRanked)

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
		f.AddRanked("rerank", w.Rerank, rankByCosine(vec, pool))
		res.Passages = f.Top(cfg.TopK)
		return nil
	}); err != nil {
		return err
	}
	if err := st.time("documents", func() error { return r.fillPassages(ctx, res.Passages, pg) }); err != nil {
		return err
	}

	if err := st.time("assemble", func() error {
		return r.describe(ctx, res, named, textEnts, "fulltext", rel1, rel2, filterFacts(factHits, cfg.FactThreshold, cfg.MinFacts), pg)
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

// nameCandidates are the names the question mentions (by the extractor)
// and the model's low-level keywords, each once.
func nameCandidates(m Mentioner, q string, kw Keywords) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		k := graphbuild.NormalizeKey(n)
		if k != "" && !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	if m != nil {
		for _, e := range m.Mentions(q) {
			add(e.Name)
		}
	}
	if kw.Source == "llm" {
		for _, n := range kw.Low {
			add(n)
		}
	}
	return out
}

// entityCounts is the number of chunks mentioning each entity found.
func entityCounts(pg *passageGraph, named []store.Entity, hits []store.EntityHit) map[string]int {
	out := map[string]int{}
	put := func(e store.Entity) {
		if pg != nil {
			if n, ok := pg.chunkCount[e.ID]; ok {
				out[e.ID] = n
				return
			}
		}
		out[e.ID] = e.Mentions
	}
	for _, e := range named {
		put(e)
	}
	for _, h := range hits {
		put(h.Entity)
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
func (r *Retriever) expand(ctx context.Context, entities []string, seeds map[string]float64, pg *passageGraph) (rel1, rel2 []store.Relation, chunks []scoredID, err error) {
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
		if pg != nil {
			if _, kept := pg.entIdx[id]; !kept {
				continue // too common to lead anywhere
			}
		}
		hop = append(hop, scoredID{id, s})
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

// addPassageSeeds adds the top full-text passages as PPR seeds carrying a
// share of the total seed weight, decaying with rank.
func addPassageSeeds(pg *passageGraph, seeds map[int]float64, hits []store.ChunkHit, share float64) {
	var total float64
	for _, w := range seeds {
		total += w
	}
	n := min(len(hits), 5)
	var norm float64
	for i := 0; i < n; i++ {
		norm += 1 / float64(i+1)
	}
	for i := 0; i < n; i++ {
		if c, ok := pg.chunkIdx[hits[i].ID]; ok {
			seeds[c] += share * total * (1 / float64(i+1)) / norm
		}
	}
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

// rankByCosine orders passages by the cosine of their embedding to vec.
func rankByCosine(vec []float32, ps []Passage) []scoredID {
	out := make([]scoredID, 0, len(ps))
	for _, p := range ps {
		if len(p.embedding) > 0 {
			out = append(out, scoredID{p.ChunkID, cosine(vec, p.embedding)})
		}
	}
	sortScored(out)
	return out
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
