package retrieve

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
)

// The logic-form operators' reads of the store (see operators in logic.go).

// entity finds the entity a name refers to: the one with that name, else
// the best full-text match; note says when it was not an exact match.
func (lr *logicRun) entity(ctx context.Context, name string) (*store.Entity, string, error) {
	ents, err := lr.r.store.Entities(ctx, []string{graphbuild.EntityID(name)})
	if err != nil {
		return nil, "", wrap("entity lookup", err)
	}
	if len(ents) > 0 {
		return &ents[0], "", nil
	}
	hits, err := lr.r.store.SearchEntitiesText(ctx, name, 1)
	if err != nil {
		return nil, "", wrap("entity full-text search", err)
	}
	if len(hits) == 0 {
		return nil, fmt.Sprintf("no entity named %q", name), nil
	}
	return &hits[0].Entity, fmt.Sprintf("%q read as %q", name, hits[0].Name), nil
}

func (lr *logicRun) lookup(ctx context.Context, name string) ([]LogicItem, string, error) {
	ents, err := lr.r.store.Entities(ctx, []string{graphbuild.EntityID(name)})
	if err != nil {
		return nil, "", wrap("entity lookup", err)
	}
	note := ""
	if len(ents) == 0 {
		hits, err := lr.r.store.SearchEntitiesText(ctx, name, lr.cfg.MaxEntities)
		if err != nil {
			return nil, "", wrap("entity full-text search", err)
		}
		for _, h := range hits {
			ents = append(ents, h.Entity)
		}
		note = fmt.Sprintf("no entity is named %q exactly; closest by full-text search", name)
		if len(ents) == 0 {
			note = fmt.Sprintf("no entity named %q", name)
		}
	}
	items := make([]LogicItem, len(ents))
	for i, e := range ents {
		items[i] = LogicItem{Kind: "entity", Name: e.Name, ID: e.ID, Text: entityText(e)}
	}
	return items, note, nil
}

func entityText(e store.Entity) string {
	t := clip(e.Description, 400)
	if e.Type != "" {
		t = "(" + e.Type + ") " + t
	}
	return strings.TrimSpace(t)
}

// follow lists the entities linked to name, those whose relation matches
// rel best first (BM25 over the relation's type, keywords and description,
// as path retrieval scores triples); with rel empty, by weight.
func (lr *logicRun) follow(ctx context.Context, name, rel string) ([]LogicItem, string, error) {
	e, note, err := lr.entity(ctx, name)
	if err != nil || e == nil {
		return nil, note, err
	}
	rels, err := lr.r.store.RelationsOf(ctx, []string{e.ID}, 500)
	if err != nil {
		return nil, "", wrap("relations", err)
	}
	if len(rels) == 0 {
		return nil, joinNotes(note, fmt.Sprintf("%s has no relations", e.Name)), nil
	}
	texts := make([]string, len(rels))
	for i, r := range rels {
		texts[i] = strings.ReplaceAll(r.Type, "_", " ") + " " + r.Keywords + " " + r.Description
	}
	scores := make([]float64, len(rels))
	if strings.TrimSpace(rel) != "" {
		if scores, err = (&paths.BM25{Flat: true}).Score(ctx, rel, texts); err != nil {
			return nil, "", err
		}
	}
	order := make([]int, 0, len(rels))
	for i := range rels {
		if rel == "" || scores[i] > 0 {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return nil, joinNotes(note, fmt.Sprintf("no relation of %s matches %q (it has: %s)", e.Name, rel, relationWords(rels))), nil
	}
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if scores[i] != scores[j] {
			return scores[i] > scores[j]
		}
		return rels[i].Weight > rels[j].Weight
	})
	ids := make([]string, 0, len(order))
	for _, i := range order {
		other := rels[i].TargetID
		if other == e.ID {
			other = rels[i].SourceID
		}
		ids = append(ids, other)
	}
	ents, err := lr.r.store.Entities(ctx, ids)
	if err != nil {
		return nil, "", wrap("entity lookup", err)
	}
	names := map[string]string{e.ID: e.Name}
	for _, x := range ents {
		names[x.ID] = x.Name
	}
	var items []LogicItem
	seen := map[string]bool{}
	for k, i := range order {
		id := ids[k]
		if seen[id] || names[id] == "" {
			continue
		}
		seen[id] = true
		r := rels[i]
		info := relationInfo(r, names, scores[i], 1)
		info.Description = clip(info.Description, 300)
		items = append(items, LogicItem{Kind: "entity", Name: names[id], ID: id, Text: "via " + strings.TrimPrefix(relationLines([]RelationInfo{info})[0], "- ")})
		if len(items) == lr.cfg.MaxLinks {
			break
		}
	}
	return items, note, nil
}

// relationWords lists the distinct relation types (or keywords) of rels,
// for a note when none matched.
func relationWords(rels []store.Relation) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rels {
		w := r.Type
		if w == "" {
			w, _, _ = strings.Cut(r.Keywords, ",")
		}
		w = strings.TrimSpace(w)
		if w != "" && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
		if len(out) == 8 {
			out = append(out, "...")
			break
		}
	}
	if len(out) == 0 {
		return "untyped links"
	}
	return strings.Join(out, ", ")
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// mentions lists the passages that mention name, best matching about first.
func (lr *logicRun) mentions(ctx context.Context, name, about string) ([]LogicItem, string, error) {
	e, note, err := lr.entity(ctx, name)
	if err != nil || e == nil {
		return nil, note, err
	}
	ms, err := lr.r.store.MentionsOf(ctx, []string{e.ID}, mentionLimit)
	if err != nil {
		return nil, "", wrap("mentions", err)
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		ids = append(ids, m.ChunkID)
	}
	chunks, err := lr.r.store.Chunks(ctx, ids)
	if err != nil {
		return nil, "", wrap("read chunks", err)
	}
	if len(chunks) == 0 {
		return nil, joinNotes(note, fmt.Sprintf("no passage mentions %s", e.Name)), nil
	}
	texts := make([]string, len(chunks))
	for i, c := range chunks {
		texts[i] = c.Text
	}
	scores, err := paths.NewBM25().Score(ctx, about, texts)
	if err != nil {
		return nil, "", err
	}
	order := make([]int, len(chunks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	var items []LogicItem
	for _, i := range order[:min(len(order), lr.cfg.MaxPassages)] {
		items = append(items, lr.passage(chunks[i].ID, chunks[i].DocID, chunks[i].Index, chunks[i].Text, lr.title(ctx, chunks[i].DocID)))
	}
	return items, note, nil
}

func (lr *logicRun) search(ctx context.Context, query string) ([]LogicItem, string, error) {
	hits, err := lr.r.store.SearchChunksText(ctx, textQuery(query), lr.cfg.MaxPassages)
	if err != nil {
		return nil, "", wrap("full-text search", err)
	}
	var items []LogicItem
	for _, h := range hits {
		items = append(items, lr.passage(h.ID, h.DocID, h.Index, h.Text, h.DocTitle))
	}
	return items, "", nil
}

// title is a document's title ("" when it cannot be read: the passage is
// then named by its first words).
func (lr *logicRun) title(ctx context.Context, docID string) string {
	t, ok := lr.titles[docID]
	if !ok {
		if d, err := lr.r.store.Document(ctx, docID); err == nil {
			t = d.Title
		}
		lr.titles[docID] = t
	}
	return t
}

// passage adds a chunk to the result's passages (once) and returns its item.
func (lr *logicRun) passage(id, docID string, index int, text, title string) LogicItem {
	if _, ok := lr.chunkAt[id]; !ok {
		lr.chunkAt[id] = len(lr.res.Passages)
		lr.res.Passages = append(lr.res.Passages, Passage{ChunkID: id, DocID: docID, Index: index, Text: text, DocTitle: title,
			Score: 1 / float64(len(lr.res.Passages)+1)})
	}
	name := title
	if name == "" {
		name = firstWords(text, 8)
	}
	return LogicItem{Kind: "passage", Name: name, ID: id}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		return strings.Join(f[:n], " ") + "…"
	}
	return strings.Join(f, " ")
}

// itemText is what compute reads of an item: an entity's name and
// description, a passage's text, a value.
func (lr *logicRun) itemText(it LogicItem) string {
	if it.Kind == "passage" {
		if i, ok := lr.chunkAt[it.ID]; ok {
			return lr.res.Passages[i].Text
		}
	}
	return it.Name + ": " + it.Text
}
