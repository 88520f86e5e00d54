package graphbuild

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"docgraph/embedstore"
	"docgraph/store"
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
	budget     int // description budget in bytes
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

// MergeEntities merges each group of mentions (all of one entity) into an entity.
func (m *Merger) MergeEntities(ctx context.Context, groups [][]store.EntityMention) ([]store.Entity, error) {
	out := make([]store.Entity, 0, len(groups))
	texts := make([]string, 0, len(groups))
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		g = sortedByChunk(g, func(x store.EntityMention) string { return x.ChunkID })
		names := map[string]int{} // names that are the entity's key; short forms resolved into it are not
		types := map[string]int{}
		chunks := map[string]bool{}
		frags := make([]string, 0, len(g))
		for _, x := range g {
			if EntityID(x.Name) == x.EntityID {
				names[x.Name]++
			}
			if x.Type != "" {
				types[x.Type]++
			}
			chunks[x.ChunkID] = true
			frags = append(frags, strings.Split(x.Description, "\n")...)
		}
		e := store.Entity{
			ID:       g[0].EntityID,
			Name:     majority(names, g[0].Name),
			Type:     majority(types, ""),
			Mentions: len(chunks),
		}
		desc, err := m.describe(ctx, "entity", e.Name, frags)
		if err != nil {
			return nil, err
		}
		e.Description = desc
		out = append(out, e)
		texts = append(texts, entityText(e))
	}
	vecs, err := m.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Embedding = vecs[i]
	}
	return out, nil
}

// MergeRelations merges each group of mentions (all of one relation) into a relation.
func (m *Merger) MergeRelations(ctx context.Context, groups [][]store.RelationMention) ([]store.Relation, error) {
	out := make([]store.Relation, 0, len(groups))
	texts := make([]string, 0, len(groups))
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		g = sortedByChunk(g, func(x store.RelationMention) string { return x.ChunkID })
		r := store.Relation{ID: g[0].RelationID, SourceID: g[0].SourceID, TargetID: g[0].TargetID, Type: g[0].Type}
		kws := make([]string, 0, len(g))
		frags := make([]string, 0, len(g))
		for _, x := range g {
			w := x.Weight
			if w <= 0 {
				w = 1
			}
			r.Weight += w
			kws = append(kws, x.Keywords)
			frags = append(frags, strings.Split(x.Description, "\n")...)
		}
		r.Keywords = mergeKeywords(kws, maxKeywords)
		desc, err := m.describe(ctx, "relation", r.SourceID+" -> "+r.TargetID, frags)
		if err != nil {
			return nil, err
		}
		r.Description = desc
		out = append(out, r)
		texts = append(texts, relationText(r))
	}
	vecs, err := m.embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Embedding = vecs[i]
	}
	return out, nil
}

// entityText is what an entity's vector is made from.
func entityText(e store.Entity) string { return e.Name + "\n" + e.Description }

// relationText is what a relation's vector is made from.
func relationText(r store.Relation) string {
	return strings.TrimSpace(r.Type + " " + r.Keywords + "\n" + r.Description)
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
		if err != nil {
			return "", fmt.Errorf("summarise %s %q: %w", kind, name, err)
		}
		return strings.TrimSpace(s), nil
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
