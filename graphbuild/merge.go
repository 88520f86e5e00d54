package graphbuild

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/store"
)

// Summarizer condenses many description fragments of one entity or relation
// into one text; the LLM summariser implements it.
type Summarizer interface {
	Summarize(ctx context.Context, kind, name string, descriptions []string) (string, error)
}

// Merger implements store.Merger: it computes an entity's or relation's
// stored form from all of its mentions, so the result depends only on the set
// of mentions and never on the order documents arrived in.
type Merger struct {
	emb        embedstore.Embedder
	summarizer Summarizer
	budget     int  // description budget in bytes
	vectorless bool // mark changed vectors instead of making them (WithoutVectors)
}

// MergerOption configures NewMerger.
type MergerOption func(*Merger)

// WithSummarizer summarises descriptions that exceed the budget instead of truncating them.
func WithSummarizer(s Summarizer) MergerOption { return func(m *Merger) { m.summarizer = s } }

// WithDescriptionBudget bounds a merged description, in approximate tokens (default 300).
func WithDescriptionBudget(tokens int) MergerOption {
	return func(m *Merger) {
		if tokens > 0 {
			m.budget = tokens * 4
		}
	}
}

// NewMerger returns a Merger embedding merged entities and relations with emb.
func NewMerger(emb embedstore.Embedder, opts ...MergerOption) *Merger {
	m := &Merger{emb: emb, budget: 300 * 4}
	for _, o := range opts {
		o(m)
	}
	return m
}

var (
	_ store.PrefixMerger     = (*Merger)(nil)
	_ store.VectorlessMerger = (*Merger)(nil)
)

// Reproducible reports whether the merger's embedder makes the same vector
// for the same text every time, with nothing outside the process: then a
// store need not keep merged vectors (store.Reembedder).
func (m *Merger) Reproducible() bool {
	d, ok := m.emb.(interface{ Deterministic() bool })
	return ok && d.Deterministic()
}

// WithoutVectors returns a copy of m whose merges set an empty, non-nil
// Embedding where m's would set a new vector, and embed nothing: for a
// store that keeps no merged vectors (store.VectorlessMerger).
func (m *Merger) WithoutVectors() store.PrefixMerger {
	c := *m
	c.vectorless = true
	return &c
}

// EntityVectors makes the vectors of merged entities again.
func (m *Merger) EntityVectors(ctx context.Context, es []store.Entity) ([][]float32, error) {
	texts := make([]string, len(es))
	for i, e := range es {
		texts[i] = entityText(e)
	}
	return m.embed(ctx, texts)
}

// RelationVectors makes the vectors of merged relations again.
func (m *Merger) RelationVectors(ctx context.Context, rs []store.Relation) ([][]float32, error) {
	texts := make([]string, len(rs))
	for i, r := range rs {
		texts[i] = relationText(r)
	}
	return m.embed(ctx, texts)
}

// MergeEntities merges each group of mentions (all of one entity) into an entity.
func (m *Merger) MergeEntities(ctx context.Context, groups [][]store.EntityMention) ([]store.Entity, error) {
	gs := make([]store.EntityGroup, 0, len(groups))
	for _, g := range groups {
		if len(g) > 0 {
			gs = append(gs, EntityGroupOf(g))
		}
	}
	return m.MergeEntityGroups(ctx, gs)
}

// EntityGroupOf summarises all mentions of one entity as a store that
// keeps counts would: every mention, in chunk-id order, with its counts.
func EntityGroupOf(g []store.EntityMention) store.EntityGroup {
	grp := store.EntityGroup{ID: g[0].EntityID, Mentions: sortedByChunk(g, func(x store.EntityMention) string { return x.ChunkID }),
		Names: map[string]int{}, Types: map[string]int{}}
	chunks := map[string]bool{}
	for _, x := range g {
		grp.Names[x.Name]++
		if x.Type != "" {
			grp.Types[x.Type]++
		}
		chunks[x.ChunkID] = true
	}
	grp.Chunks = len(chunks)
	return grp
}

// MergeEntityGroups merges each group (its counts and first mentions in
// chunk-id order) into an entity: the majority of the names that are the
// entity's key (short forms resolved into it are not), the majority type,
// and the description of the first fragments.
func (m *Merger) MergeEntityGroups(ctx context.Context, groups []store.EntityGroup) ([]store.Entity, error) {
	out := make([]store.Entity, 0, len(groups))
	var texts []string
	var embedAt []int
	for _, g := range groups {
		if len(g.Mentions) == 0 {
			continue
		}
		first := sortedByChunk(g.Mentions, func(x store.EntityMention) string { return x.ChunkID })
		names := map[string]int{}
		for name, n := range g.Names {
			if EntityID(name) == g.ID {
				names[name] += n
			}
		}
		e := store.Entity{
			ID:       g.ID,
			Name:     majority(names, first[0].Name),
			Type:     majority(g.Types, ""),
			Mentions: g.Chunks,
		}
		desc, err := m.describe(ctx, "entity", e.Name, entityFragments(first, m.fragmentLimit()))
		if err != nil {
			return nil, err
		}
		e.Description = desc
		if st := g.Stored; st == nil || st.Name != e.Name || st.Description != e.Description {
			embedAt = append(embedAt, len(out))
			texts = append(texts, entityText(e))
		}
		out = append(out, e)
	}
	vecs, err := m.mergedVectors(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, at := range embedAt {
		out[at].Embedding = vecs[i]
	}
	return out, nil
}

// MergeRelations merges each group of mentions (all of one relation) into a relation.
func (m *Merger) MergeRelations(ctx context.Context, groups [][]store.RelationMention) ([]store.Relation, error) {
	gs := make([]store.RelationGroup, 0, len(groups))
	for _, g := range groups {
		if len(g) > 0 {
			gs = append(gs, RelationGroupOf(g))
		}
	}
	return m.MergeRelationGroups(ctx, gs)
}

// RelationGroupOf summarises all mentions of one relation.
func RelationGroupOf(g []store.RelationMention) store.RelationGroup {
	grp := store.RelationGroup{ID: g[0].RelationID, SourceID: g[0].SourceID, TargetID: g[0].TargetID, Type: g[0].Type,
		Mentions: sortedByChunk(g, func(x store.RelationMention) string { return x.ChunkID })}
	for _, x := range g {
		grp.Weight += mentionWeight(x.Weight)
	}
	return grp
}

// mentionWeight is what one mention adds to its relation's weight.
func mentionWeight(w float64) float64 {
	if w <= 0 {
		return 1
	}
	return w
}

// MergeRelationGroups merges each group (its summed weight and first
// mentions in chunk-id order) into a relation: the first keywords and the
// description of the first fragments.
func (m *Merger) MergeRelationGroups(ctx context.Context, groups []store.RelationGroup) ([]store.Relation, error) {
	out := make([]store.Relation, 0, len(groups))
	var texts []string
	var embedAt []int
	for _, g := range groups {
		if len(g.Mentions) == 0 {
			continue
		}
		first := sortedByChunk(g.Mentions, func(x store.RelationMention) string { return x.ChunkID })
		r := store.Relation{ID: g.ID, SourceID: g.SourceID, TargetID: g.TargetID, Type: g.Type, Weight: g.Weight}
		kws := make([]string, 0, len(first))
		for _, x := range first {
			kws = append(kws, x.Keywords)
		}
		r.Keywords = mergeKeywords(kws, maxKeywords)
		desc, err := m.describe(ctx, "relation", r.SourceID+" -> "+r.TargetID, relationFragments(first, m.fragmentLimit()))
		if err != nil {
			return nil, err
		}
		r.Description = desc
		if st := g.Stored; st == nil || relationText(*st) != relationText(r) {
			embedAt = append(embedAt, len(out))
			texts = append(texts, relationText(r))
		}
		out = append(out, r)
	}
	vecs, err := m.mergedVectors(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, at := range embedAt {
		out[at].Embedding = vecs[i]
	}
	return out, nil
}

// EntityPrefixDone reports whether these first mentions (in chunk-id
// order) hold more distinct description than the merge uses.
func (m *Merger) EntityPrefixDone(first []store.EntityMention) bool {
	return uniqueSize(entityFragments(first, -1)) > m.fragmentLimit()
}

// RelationPrefixDone reports whether these first mentions hold more
// distinct description than the merge uses and all the keywords it keeps.
func (m *Merger) RelationPrefixDone(first []store.RelationMention) bool {
	if uniqueSize(relationFragments(first, -1)) <= m.fragmentLimit() {
		return false
	}
	kws := make([]string, len(first))
	for i, x := range first {
		kws[i] = x.Keywords
	}
	return strings.Count(mergeKeywords(kws, maxKeywords), ",")+1 >= maxKeywords
}

// summaryLimit bounds, in multiples of the description budget, the
// fragments an LLM summary reads: an entity a thousand documents mention
// is summarised from its first fragments in chunk-id order, which bounds
// both the prompt and the re-merge.
const summaryLimit = 16

// fragmentLimit is how many bytes of distinct fragments a merge reads:
// one more than the budget when descriptions are truncated (enough to
// know the budget is exceeded), summaryLimit budgets when summarised.
func (m *Merger) fragmentLimit() int {
	if m.summarizer != nil {
		return summaryLimit * m.budget
	}
	return m.budget
}

// entityFragments are the description lines of mentions in order, cut
// once their distinct lines exceed limit bytes (all of them for limit < 0).
func entityFragments(ms []store.EntityMention, limit int) []string {
	var frags []string
	for _, x := range ms {
		frags = append(frags, strings.Split(x.Description, "\n")...)
		if limit >= 0 && uniqueSize(frags) > limit {
			break
		}
	}
	return frags
}

// relationFragments is entityFragments for relation mentions.
func relationFragments(ms []store.RelationMention, limit int) []string {
	var frags []string
	for _, x := range ms {
		frags = append(frags, strings.Split(x.Description, "\n")...)
		if limit >= 0 && uniqueSize(frags) > limit {
			break
		}
	}
	return frags
}

// uniqueSize is the size describe counts: distinct non-empty trimmed
// lines, each with its separator.
func uniqueSize(frags []string) int {
	seen := make(map[string]bool, len(frags))
	size := 0
	for _, f := range frags {
		f = strings.TrimSpace(f)
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		size += len(f) + 1
	}
	return size
}

// entityText is what an entity's vector is made from.
func entityText(e store.Entity) string { return e.Name + "\n" + e.Description }

// relationText is what a relation's vector is made from.
func relationText(r store.Relation) string {
	return strings.TrimSpace(r.Type + " " + r.Keywords + "\n" + r.Description)
}

// mergedVectors are the new vectors of merged texts: empty, non-nil
// marks when m is vectorless.
func (m *Merger) mergedVectors(ctx context.Context, texts []string) ([][]float32, error) {
	if !m.vectorless {
		return m.embed(ctx, texts)
	}
	changed := make([][]float32, len(texts))
	for i := range changed {
		changed[i] = []float32{}
	}
	return changed, nil
}

func (m *Merger) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := m.emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("merge: embed %d texts: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("merge: embedder %s returned %d vectors for %d texts", m.emb.Name(), len(vecs), len(texts))
	}
	return vecs, nil
}

// describe de-duplicates fragments and keeps them within the budget,
// summarising with the LLM when one is configured and truncating otherwise.
func (m *Merger) describe(ctx context.Context, kind, name string, frags []string) (string, error) {
	seen := make(map[string]bool, len(frags))
	uniq := frags[:0:0]
	size := 0
	for _, f := range frags {
		f = strings.TrimSpace(f)
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		uniq = append(uniq, f)
		size += len(f) + 1
	}
	if size <= m.budget {
		return strings.Join(uniq, "\n"), nil
	}
	if m.summarizer != nil {
		s, err := m.summarizer.Summarize(ctx, kind, name, uniq)
		var u interface{ Unusable() bool }
		switch {
		case errors.As(err, &u) && u.Unusable():
			// The summariser has counted it; the descriptions cut to the
			// budget are still true, where failing the document would
			// lose its whole graph over one description.
		case err != nil:
			return "", fmt.Errorf("summarise %s %q: %w", kind, name, err)
		default:
			return strings.TrimSpace(s), nil
		}
	}
	var sb strings.Builder
	for _, f := range uniq {
		if sb.Len()+len(f)+1 > m.budget {
			if sb.Len() == 0 {
				sb.WriteString(truncateUTF8(f, m.budget))
			}
			break
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(f)
	}
	return sb.String(), nil
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// majority picks the most frequent key, breaking ties by the smallest key so
// the choice is deterministic.
func majority(counts map[string]int, fallback string) string {
	best, bestN := fallback, 0
	for k, n := range counts {
		if n > bestN || (n == bestN && k < best) {
			best, bestN = k, n
		}
	}
	return best
}

func sortedByChunk[T any](g []T, chunk func(T) string) []T {
	s := append([]T(nil), g...)
	sort.SliceStable(s, func(i, j int) bool { return chunk(s[i]) < chunk(s[j]) })
	return s
}
