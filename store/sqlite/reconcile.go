package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/docgraph/docgraph/cjk"
	"github.com/docgraph/docgraph/store"
)

// reconcilePage is how many touched entities (or relations) reconcile
// merges at a time: their stored rows, first mentions and merged rows are
// what it holds, so a write touching a whole book's graph stays within
// bounded memory.
var reconcilePage = 4096

// smallGroup is the number of chunks up to which an entity's (or
// relation's) mentions are all read in one query shared by many; bigger
// ones are read one at a time, only as far as the merge needs.
const smallGroup = 24

// Reconcile brings the merged rows of every entity and relation a write
// touched up to date. A store never merges incrementally in the sense of
// folding new text into old: a merged row is a function of the set of its
// mentions (majority name and type, the first fragments in chunk-id order,
// summed weights), which is what makes writes order-independent and
// deletes exact. What makes it cheap is that the counts over all mentions
// are kept in the row and moved by each write's deltas, and that the text
// depends on the first mentions only (store.PrefixMerger): an entity a
// thousand documents mention is re-merged from its first few mentions.
func (s *Store) reconcile(ctx context.Context, tx *sql.Tx, ch *change) error {
	var deleted []int64
	appeared := false
	for page := range pages(slices.Collect(maps.Keys(ch.ents))) {
		del, app, err := s.reconcileEntities(ctx, tx, ch, page)
		if err != nil {
			return err
		}
		deleted = append(deleted, del...)
		appeared = appeared || app
	}
	// Relations: those the write mentions, those whose endpoint entity
	// vanished, and, when entities appeared, the dangling ones waiting for one.
	touched := map[int64]bool{}
	for id := range ch.rels {
		touched[id] = true
	}
	if len(deleted) > 0 {
		var ids []int64
		list := intList(deleted)
		if err := collectInts(ctx, tx, &ids, `
			SELECT r.id FROM json_each(?) j CROSS JOIN relations r ON r.source = j.value
			UNION SELECT r.id FROM json_each(?) j CROSS JOIN relations r ON r.target = j.value`, list, list); err != nil {
			return fmt.Errorf("relations of deleted entities: %w", err)
		}
		for _, id := range ids {
			touched[id] = true
		}
	}
	if appeared {
		var ids []int64
		if err := collectInts(ctx, tx, &ids, `SELECT id FROM dangling_relations`); err != nil {
			return fmt.Errorf("dangling relations: %w", err)
		}
		for _, id := range ids {
			touched[id] = true
		}
	}
	for page := range pages(slices.Collect(maps.Keys(touched))) {
		if err := s.reconcileRelations(ctx, tx, ch, page); err != nil {
			return err
		}
	}
	return nil
}

// pages yields ids sorted, in pages of at most reconcilePage.
func pages(ids []int64) func(func([]int64) bool) {
	return func(yield func([]int64) bool) {
		slices.Sort(ids)
		for len(ids) > 0 {
			n := min(len(ids), reconcilePage)
			if !yield(ids[:n]) {
				return
			}
			ids = ids[n:]
		}
	}
}

// storedEntity is an entity row as reconcile reads it.
type storedEntity struct {
	seq          int64
	e            store.Entity
	names, types map[string]int
}

// reconcileEntities re-merges one page of touched entities. It returns the
// ids it deleted and whether any entity appeared.
func (s *Store) reconcileEntities(ctx context.Context, tx *sql.Tx, ch *change, page []int64) ([]int64, bool, error) {
	stored := map[int64]*storedEntity{}
	rows, err := tx.QueryContext(ctx, `SELECT e.seq, e.id, e.name, e.type, e.description, k.mentions, k.names, k.types
		FROM json_each(?) j CROSS JOIN entities e ON e.id = j.value JOIN entity_counts k ON k.seq = e.seq`, intList(page))
	if err != nil {
		return nil, false, fmt.Errorf("load touched entities: %w", err)
	}
	for rows.Next() {
		var id int64
		var names, types string
		st := &storedEntity{}
		if err := rows.Scan(&st.seq, &id, &st.e.Name, &st.e.Type, &st.e.Description, &st.e.Mentions, &names, &types); err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("load touched entities: %w", err)
		}
		st.e.ID = entityName(id)
		st.names, st.types = decodeCounts(names), decodeCounts(types)
		stored[id] = st
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("load touched entities: %w", err)
	}

	pm, prefix := s.merger.(store.PrefixMerger)
	groups := map[int64]*store.EntityGroup{}
	var deleted, fromDB []int64
	appeared := false
	for _, id := range page {
		st, d := stored[id], ch.ents[id]
		g := &store.EntityGroup{ID: entityName(id), Names: map[string]int{}, Types: map[string]int{}}
		if st != nil {
			g.Chunks = st.e.Mentions
			addCounts(g.Names, st.names)
			addCounts(g.Types, st.types)
			g.Stored = &st.e
		}
		if d != nil {
			g.Chunks += d.chunks
			addCounts(g.Names, d.names)
			addCounts(g.Types, d.types)
		}
		switch {
		case g.Chunks <= 0:
			if st != nil {
				deleted = append(deleted, id)
			}
			continue
		case st == nil:
			// No row, so no mentions before this write: all are here.
			g.Mentions = ch.newEnts[id]
			appeared = true
		default:
			fromDB = append(fromDB, id)
		}
		groups[id] = g
	}
	if err := s.readEntityPrefixes(ctx, tx, pm, prefix, groups, fromDB); err != nil {
		return nil, false, err
	}
	ordered := make([]store.EntityGroup, 0, len(groups))
	for _, id := range page {
		if g := groups[id]; g != nil {
			ordered = append(ordered, *g)
		}
	}
	var merged []store.Entity
	if len(ordered) > 0 {
		if prefix {
			merged, err = pm.MergeEntityGroups(ctx, ordered)
		} else {
			full := make([][]store.EntityMention, len(ordered))
			for i, g := range ordered {
				full[i] = g.Mentions
			}
			merged, err = s.merger.MergeEntities(ctx, full)
		}
		if err != nil {
			return nil, false, fmt.Errorf("merge %d entities: %w", len(ordered), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}

	// Decide first, then write: the old texts of changed and deleted rows
	// must leave the full-text index before the new ones go in (a
	// contentless index holds one entry per rowid).
	type entityWrite struct {
		id           int64
		e            store.Entity
		names, types string
		text, counts bool // the row's text, its counts changed
	}
	var writes []entityWrite
	var unindex, unvector []int64
	for _, id := range deleted {
		unindex = append(unindex, stored[id].seq)
		unvector = append(unvector, stored[id].seq)
	}
	for _, e := range merged {
		id, ok := canonicalID(e.ID, 'e')
		g := groups[id]
		if !ok || g == nil {
			return nil, false, fmt.Errorf("merger returned entity %s, which no mention names", e.ID)
		}
		e.Mentions = g.Chunks
		st := stored[id]
		w := entityWrite{id: id, e: e, names: encodeCounts(g.Names), types: encodeCounts(g.Types)}
		w.text = st == nil || st.e.Name != e.Name || st.e.Type != e.Type || st.e.Description != e.Description
		w.counts = st == nil || st.e.Mentions != e.Mentions || !maps.Equal(st.names, g.Names) || !maps.Equal(st.types, g.Types)
		if !w.text && !w.counts && e.Embedding == nil {
			continue
		}
		if st != nil && (st.e.Name != e.Name || st.e.Description != e.Description) {
			unindex = append(unindex, st.seq)
		}
		writes = append(writes, w)
	}
	if len(unindex) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM entities_fts WHERE rowid IN (SELECT value FROM json_each(?))`, intList(unindex)); err != nil {
			return nil, false, fmt.Errorf("unindex entities: %w", err)
		}
	}
	if len(deleted) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM entities WHERE id IN (SELECT value FROM json_each(?))`, intList(deleted)); err != nil {
			return nil, false, fmt.Errorf("delete entities: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM entity_counts WHERE seq IN (SELECT value FROM json_each(?))`, intList(unvector)); err != nil {
			return nil, false, fmt.Errorf("delete entities: %w", err)
		}
	}
	up := newBatch(ctx, tx, `INSERT OR FAIL INTO entities(id, name, type, description)`, 4,
		` ON CONFLICT(id) DO UPDATE SET name = excluded.name, type = excluded.type, description = excluded.description`)
	var fresh []int64
	for _, w := range writes {
		if !w.text {
			continue
		}
		if err := up.add(w.id, w.e.Name, w.e.Type, w.e.Description); err != nil {
			return nil, false, fmt.Errorf("upsert entities: %w", err)
		}
		if stored[w.id] == nil {
			fresh = append(fresh, w.id)
		}
	}
	if err := up.flush(); err != nil {
		return nil, false, fmt.Errorf("upsert entities: %w", err)
	}
	seqs, err := seqsOf(ctx, tx, "entities", fresh)
	if err != nil {
		return nil, false, err
	}
	for id, st := range stored {
		seqs[id] = st.seq
	}
	counts := newBatch(ctx, tx, `INSERT OR FAIL INTO entity_counts(seq, mentions, names, types)`, 4,
		` ON CONFLICT(seq) DO UPDATE SET mentions = excluded.mentions, names = excluded.names, types = excluded.types`)
	for _, w := range writes {
		if w.counts {
			if err := counts.add(seqs[w.id], w.e.Mentions, w.names, w.types); err != nil {
				return nil, false, fmt.Errorf("entity counts: %w", err)
			}
		}
	}
	if err := counts.flush(); err != nil {
		return nil, false, fmt.Errorf("entity counts: %w", err)
	}
	ftsIns := newBatch(ctx, tx, `INSERT OR FAIL INTO temp.entity_text(seq, name, description)`, 3, "")
	vecs := newBatch(ctx, tx, `INSERT OR FAIL INTO vectors(kind, id, vec)`, 3, ` ON CONFLICT(kind, id) DO UPDATE SET vec = excluded.vec`)
	for _, w := range writes {
		seq := seqs[w.id]
		if stored[w.id] == nil || stored[w.id].e.Name != w.e.Name || stored[w.id].e.Description != w.e.Description {
			if err := ftsIns.add(seq, cjk.IndexText(w.e.Name), cjk.IndexText(w.e.Description)); err != nil {
				return nil, false, fmt.Errorf("index entities: %w", err)
			}
		}
		if w.e.Embedding != nil {
			ch.vecs = append(ch.vecs, vecChange{kindEntity, seq})
			if s.reembed != nil {
				continue // made again when needed: the store keeps no copy
			}
			if err := vecs.add(kindEntity, seq, encodeVec(w.e.Embedding)); err != nil {
				return nil, false, fmt.Errorf("entity vectors: %w", err)
			}
		}
	}
	for _, b := range []*batch{ftsIns, vecs} {
		if err := b.flush(); err != nil {
			return nil, false, fmt.Errorf("write entities: %w", err)
		}
	}
	for _, q := range []string{
		`INSERT INTO entities_fts(rowid, name, description) SELECT seq, name, description FROM temp.entity_text`,
		`DELETE FROM temp.entity_text`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return nil, false, fmt.Errorf("index entities: %w", err)
		}
	}
	if len(unvector) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE kind = 1 AND id IN (SELECT value FROM json_each(?))`, intList(unvector)); err != nil {
			return nil, false, fmt.Errorf("delete entities: %w", err)
		}
		for _, seq := range unvector {
			ch.vecs = append(ch.vecs, vecChange{kindEntity, seq})
		}
	}
	return deleted, appeared, nil
}

// readEntityPrefixes fills the Mentions of the groups of ids from the
// store: all of them for a merger that needs all (or a small group), else
// the first ones in chunk-id order until the merger has what it needs.
func (s *Store) readEntityPrefixes(ctx context.Context, tx *sql.Tx, pm store.PrefixMerger, prefix bool, groups map[int64]*store.EntityGroup, ids []int64) error {
	var small []int64
	var big []int64
	for _, id := range ids {
		if !prefix || groups[id].Chunks <= smallGroup {
			small = append(small, id)
		} else {
			big = append(big, id)
		}
	}
	if len(small) > 0 {
		rows, err := tx.QueryContext(ctx, `SELECT m.entity, c.id, m.name, m.type, m.frag, c.text
			FROM json_each(?) j CROSS JOIN entity_mentions m ON m.entity = j.value CROSS JOIN chunks c ON c.seq = m.chunk
			ORDER BY m.entity, m.ord, c.id, m.n`, intList(small))
		if err != nil {
			return fmt.Errorf("load entity mentions: %w", err)
		}
		for rows.Next() {
			var id int64
			var m store.EntityMention
			var frag []byte
			var text string
			if err := rows.Scan(&id, &m.ChunkID, &m.Name, &m.Type, &frag, &text); err != nil {
				rows.Close()
				return fmt.Errorf("load entity mentions: %w", err)
			}
			m.EntityID, m.Description = entityName(id), decodeFrag(frag, text)
			groups[id].Mentions = append(groups[id].Mentions, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("load entity mentions: %w", err)
		}
	}
	if len(big) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `SELECT c.id, m.name, m.type, m.frag, c.text
		FROM entity_mentions m CROSS JOIN chunks c ON c.seq = m.chunk
		WHERE m.entity = ? ORDER BY m.ord, c.id, m.n LIMIT ?`)
	if err != nil {
		return fmt.Errorf("load entity mentions: %w", err)
	}
	defer st.Close()
	for _, id := range big {
		g := groups[id]
		for limit := smallGroup; ; limit *= 4 {
			g.Mentions = g.Mentions[:0]
			rows, err := st.QueryContext(ctx, id, limit)
			if err != nil {
				return fmt.Errorf("load mentions of entity %s: %w", g.ID, err)
			}
			for rows.Next() {
				m := store.EntityMention{EntityID: g.ID}
				var frag []byte
				var text string
				if err := rows.Scan(&m.ChunkID, &m.Name, &m.Type, &frag, &text); err != nil {
					rows.Close()
					return fmt.Errorf("load mentions of entity %s: %w", g.ID, err)
				}
				m.Description = decodeFrag(frag, text)
				g.Mentions = append(g.Mentions, m)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("load mentions of entity %s: %w", g.ID, err)
			}
			if len(g.Mentions) < limit || pm.EntityPrefixDone(g.Mentions) {
				break
			}
		}
	}
	return nil
}

// storedRelation is a relation row as reconcile reads it.
type storedRelation struct {
	seq      int64
	r        store.Relation
	mentions int
}

// reconcileRelations re-merges one page of touched relations. A relation
// is stored while it has mentions and both endpoint entities exist; one
// with mentions but a missing endpoint waits in dangling_relations, its
// counts dropped, and is merged from all its mentions when it comes back.
func (s *Store) reconcileRelations(ctx context.Context, tx *sql.Tx, ch *change, page []int64) error {
	list := intList(page)
	stored := map[int64]*storedRelation{}
	rows, err := tx.QueryContext(ctx, `SELECT r.seq, r.id, r.source, r.target, r.type, r.keywords, r.description, r.weight, r.mentions
		FROM json_each(?) j CROSS JOIN relations r ON r.id = j.value`, list)
	if err != nil {
		return fmt.Errorf("load touched relations: %w", err)
	}
	for rows.Next() {
		var id, src, tgt int64
		st := &storedRelation{}
		if err := rows.Scan(&st.seq, &id, &src, &tgt, &st.r.Type, &st.r.Keywords, &st.r.Description, &st.r.Weight, &st.mentions); err != nil {
			rows.Close()
			return fmt.Errorf("load touched relations: %w", err)
		}
		st.r.ID, st.r.SourceID, st.r.TargetID = relationName(id), entityName(src), entityName(tgt)
		stored[id] = st
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load touched relations: %w", err)
	}
	var wasDangling []int64
	if err := collectInts(ctx, tx, &wasDangling, `SELECT d.id FROM json_each(?) j CROSS JOIN dangling_relations d ON d.id = j.value`, list); err != nil {
		return fmt.Errorf("dangling relations: %w", err)
	}
	dangling := map[int64]bool{}
	for _, id := range wasDangling {
		dangling[id] = true
	}

	// What each relation holds now: counts kept in its row plus the
	// write's deltas, or, with no row, everything read again.
	groups := map[int64]*store.RelationGroup{}
	rowsNow := map[int64]int{}
	var readAll, gone []int64
	for _, id := range page {
		st, d := stored[id], ch.rels[id]
		if d == nil {
			d = &relationDelta{}
		}
		g := &store.RelationGroup{ID: relationName(id)}
		switch {
		case st != nil:
			g.SourceID, g.TargetID, g.Type = st.r.SourceID, st.r.TargetID, st.r.Type
			g.Weight, rowsNow[id] = st.r.Weight+d.weight, st.mentions+d.rows
			g.Stored = &st.r
		case dangling[id]:
			readAll = append(readAll, id)
		default:
			ms := ch.newRels[id]
			if len(ms) > 0 {
				g.SourceID, g.TargetID, g.Type = ms[0].SourceID, ms[0].TargetID, ms[0].Type
			}
			g.Weight, rowsNow[id] = d.weight, d.rows
			g.Mentions = ms
		}
		groups[id] = g
	}
	if err := s.readRelationMentions(ctx, tx, readAll, groups, rowsNow); err != nil {
		return err
	}
	// Keep those with mentions and both endpoints.
	endpoints := map[int64]bool{}
	for id, g := range groups {
		if rowsNow[id] <= 0 {
			continue
		}
		src, _ := canonicalID(g.SourceID, 'e')
		tgt, _ := canonicalID(g.TargetID, 'e')
		endpoints[src], endpoints[tgt] = false, false
	}
	var present []int64
	if err := collectInts(ctx, tx, &present, `SELECT e.id FROM json_each(?) j CROSS JOIN entities e ON e.id = j.value`,
		intList(slices.Collect(maps.Keys(endpoints)))); err != nil {
		return fmt.Errorf("relation endpoints: %w", err)
	}
	for _, id := range present {
		endpoints[id] = true
	}
	var live, nowDangling []int64
	for _, id := range page {
		g := groups[id]
		if rowsNow[id] <= 0 {
			gone = append(gone, id)
			continue
		}
		src, _ := canonicalID(g.SourceID, 'e')
		tgt, _ := canonicalID(g.TargetID, 'e')
		if !endpoints[src] || !endpoints[tgt] {
			gone = append(gone, id)
			nowDangling = append(nowDangling, id)
			continue
		}
		live = append(live, id)
	}
	// Stored relations read their first mentions; the others have all theirs.
	pm, prefix := s.merger.(store.PrefixMerger)
	var need []int64
	for _, id := range live {
		if stored[id] != nil {
			need = append(need, id)
		}
	}
	if err := s.readRelationPrefixes(ctx, tx, pm, prefix, groups, rowsNow, need); err != nil {
		return err
	}
	ordered := make([]store.RelationGroup, 0, len(live))
	for _, id := range live {
		ordered = append(ordered, *groups[id])
	}
	var merged []store.Relation
	if len(ordered) > 0 {
		if prefix {
			merged, err = pm.MergeRelationGroups(ctx, ordered)
		} else {
			full := make([][]store.RelationMention, len(ordered))
			for i, g := range ordered {
				full[i] = g.Mentions
			}
			merged, err = s.merger.MergeRelations(ctx, full)
		}
		if err != nil {
			return fmt.Errorf("merge %d relations: %w", len(ordered), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var removed, unvector []int64
	for _, id := range gone {
		if st := stored[id]; st != nil {
			removed = append(removed, id)
			unvector = append(unvector, st.seq)
		}
	}
	if len(removed) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM relations WHERE id IN (SELECT value FROM json_each(?))`, intList(removed)); err != nil {
			return fmt.Errorf("delete relations: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE kind = 2 AND id IN (SELECT value FROM json_each(?))`, intList(unvector)); err != nil {
			return fmt.Errorf("delete relations: %w", err)
		}
		for _, seq := range unvector {
			ch.vecs = append(ch.vecs, vecChange{kindRelation, seq})
		}
	}
	// New relations are inserted and stored ones updated in place, in two
	// statements rather than one upsert: an upsert's update part aborts on
	// a constraint whatever the insert says, so it kept a journal of every
	// page it changed (see batch), 1.2 of an x4 ingest's CPU s.
	ins := newBatch(ctx, tx, `INSERT OR FAIL INTO relations(id, source, target, type, keywords, description, weight, mentions)`, 8, "")
	upd := newBatch(ctx, tx, `UPDATE OR FAIL relations AS r SET source = v.column2, target = v.column3, type = v.column4,
		keywords = v.column5, description = v.column6, weight = v.column7, mentions = v.column8 FROM (`, 8, `) AS v WHERE r.seq = v.column1`)
	var changed []store.Relation
	var fresh []int64
	for _, r := range merged {
		id, ok := canonicalID(r.ID, 'r')
		// live is in page order, which pages sorted.
		if _, isLive := slices.BinarySearch(live, id); !ok || groups[id] == nil || !isLive {
			return fmt.Errorf("merger returned relation %s, which no mention names", r.ID)
		}
		st := stored[id]
		if st != nil && st.r.SourceID == r.SourceID && st.r.TargetID == r.TargetID && st.r.Type == r.Type && st.r.Keywords == r.Keywords &&
			st.r.Description == r.Description && st.r.Weight == r.Weight && st.mentions == rowsNow[id] && r.Embedding == nil {
			continue
		}
		src, _ := canonicalID(r.SourceID, 'e')
		tgt, _ := canonicalID(r.TargetID, 'e')
		if st != nil {
			err = upd.add(st.seq, src, tgt, r.Type, r.Keywords, r.Description, r.Weight, rowsNow[id])
		} else {
			err = ins.add(id, src, tgt, r.Type, r.Keywords, r.Description, r.Weight, rowsNow[id])
		}
		if err != nil {
			return fmt.Errorf("write relations: %w", err)
		}
		if r.Embedding != nil {
			changed = append(changed, r)
			if st == nil {
				fresh = append(fresh, id)
			}
		}
	}
	if err := errors.Join(ins.flush(), upd.flush()); err != nil {
		return fmt.Errorf("write relations: %w", err)
	}
	seqs, err := seqsOf(ctx, tx, "relations", fresh)
	if err != nil {
		return err
	}
	for id, st := range stored {
		seqs[id] = st.seq
	}
	vecs := newBatch(ctx, tx, `INSERT OR FAIL INTO vectors(kind, id, vec)`, 3, ` ON CONFLICT(kind, id) DO UPDATE SET vec = excluded.vec`)
	for _, r := range changed {
		id, _ := canonicalID(r.ID, 'r')
		seq := seqs[id]
		ch.vecs = append(ch.vecs, vecChange{kindRelation, seq})
		if s.reembed != nil {
			continue
		}
		if err := vecs.add(kindRelation, seq, encodeVec(r.Embedding)); err != nil {
			return fmt.Errorf("relation vectors: %w", err)
		}
	}
	if err := vecs.flush(); err != nil {
		return fmt.Errorf("relation vectors: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM dangling_relations WHERE id IN (SELECT value FROM json_each(?))`, list); err != nil {
		return fmt.Errorf("dangling relations: %w", err)
	}
	if len(nowDangling) > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO dangling_relations(id) SELECT value FROM json_each(?)`, intList(nowDangling)); err != nil {
			return fmt.Errorf("dangling relations: %w", err)
		}
	}
	return nil
}

// seqsOf reads the seqs of rows of table (entities or relations) by id.
func seqsOf(ctx context.Context, tx *sql.Tx, table string, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	// table is one of two constants.
	rows, err := tx.QueryContext(ctx, `SELECT t.id, t.seq FROM json_each(?) j CROSS JOIN `+table+` t ON t.id = j.value`, intList(ids))
	if err != nil {
		return nil, fmt.Errorf("%s keys: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("%s keys: %w", table, err)
		}
		out[id] = seq
	}
	return out, rows.Err()
}

// readRelationMentions reads every mention of relations that have no row
// (they were dangling), with the endpoints, weight and count they add up to.
func (s *Store) readRelationMentions(ctx context.Context, tx *sql.Tx, ids []int64, groups map[int64]*store.RelationGroup, rowsNow map[int64]int) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT m.relation, c.id, m.source, m.target, m.type, m.keywords, m.frag, c.text, m.weight
		FROM json_each(?) j CROSS JOIN relation_mentions m ON m.relation = j.value CROSS JOIN chunks c ON c.seq = m.chunk
		ORDER BY m.relation, m.ord, c.id, m.n`, intList(ids))
	if err != nil {
		return fmt.Errorf("load relation mentions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		m, id, err := scanRelationMention(rows, true)
		if err != nil {
			return fmt.Errorf("load relation mentions: %w", err)
		}
		g := groups[id]
		m.RelationID = g.ID
		g.SourceID, g.TargetID, g.Type = m.SourceID, m.TargetID, m.Type
		g.Weight += mentionWeight(m.Weight)
		rowsNow[id]++
		g.Mentions = append(g.Mentions, m)
	}
	return rows.Err()
}

// scanRelationMention reads a row of relation, [chunk id], source, target,
// type, keywords, frag, chunk text, weight.
func scanRelationMention(rows *sql.Rows, withID bool) (store.RelationMention, int64, error) {
	var m store.RelationMention
	var id, src, tgt int64
	var frag []byte
	var text string
	var err error
	if withID {
		err = rows.Scan(&id, &m.ChunkID, &src, &tgt, &m.Type, &m.Keywords, &frag, &text, &m.Weight)
	} else {
		err = rows.Scan(&m.ChunkID, &src, &tgt, &m.Type, &m.Keywords, &frag, &text, &m.Weight)
	}
	m.SourceID, m.TargetID, m.Description = entityName(src), entityName(tgt), decodeFrag(frag, text)
	return m, id, err
}

// readRelationPrefixes fills the Mentions of stored relations' groups, as
// readEntityPrefixes does for entities.
func (s *Store) readRelationPrefixes(ctx context.Context, tx *sql.Tx, pm store.PrefixMerger, prefix bool, groups map[int64]*store.RelationGroup, rowsNow map[int64]int, ids []int64) error {
	var small, big []int64
	for _, id := range ids {
		if !prefix || rowsNow[id] <= smallGroup {
			small = append(small, id)
		} else {
			big = append(big, id)
		}
	}
	if len(small) > 0 {
		rows, err := tx.QueryContext(ctx, `SELECT m.relation, c.id, m.source, m.target, m.type, m.keywords, m.frag, c.text, m.weight
			FROM json_each(?) j CROSS JOIN relation_mentions m ON m.relation = j.value CROSS JOIN chunks c ON c.seq = m.chunk
			ORDER BY m.relation, m.ord, c.id, m.n`, intList(small))
		if err != nil {
			return fmt.Errorf("load relation mentions: %w", err)
		}
		for rows.Next() {
			m, id, err := scanRelationMention(rows, true)
			if err != nil {
				rows.Close()
				return fmt.Errorf("load relation mentions: %w", err)
			}
			m.RelationID = relationName(id)
			groups[id].Mentions = append(groups[id].Mentions, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("load relation mentions: %w", err)
		}
	}
	if len(big) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, `SELECT c.id, m.source, m.target, m.type, m.keywords, m.frag, c.text, m.weight
		FROM relation_mentions m CROSS JOIN chunks c ON c.seq = m.chunk
		WHERE m.relation = ? ORDER BY m.ord, c.id, m.n LIMIT ?`)
	if err != nil {
		return fmt.Errorf("load relation mentions: %w", err)
	}
	defer st.Close()
	for _, id := range big {
		g := groups[id]
		for limit := smallGroup; ; limit *= 4 {
			g.Mentions = g.Mentions[:0]
			rows, err := st.QueryContext(ctx, id, limit)
			if err != nil {
				return fmt.Errorf("load mentions of relation %s: %w", g.ID, err)
			}
			for rows.Next() {
				m, _, err := scanRelationMention(rows, false)
				if err != nil {
					rows.Close()
					return fmt.Errorf("load mentions of relation %s: %w", g.ID, err)
				}
				m.RelationID = g.ID
				g.Mentions = append(g.Mentions, m)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("load mentions of relation %s: %w", g.ID, err)
			}
			if len(g.Mentions) < limit || pm.RelationPrefixDone(g.Mentions) {
				break
			}
		}
	}
	return nil
}

// Counts of names and types are kept in the entity row as JSON objects.

func decodeCounts(s string) map[string]int {
	out := map[string]int{}
	if s != "" {
		_ = json.Unmarshal([]byte(s), &out)
	}
	return out
}

func encodeCounts(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m) // encoding/json sorts map keys, so equal counts encode equally
	return string(b)
}

// addCounts adds delta into dst, dropping keys that reach zero.
func addCounts(dst, delta map[string]int) {
	for k, n := range delta {
		if v := dst[k] + n; v > 0 {
			dst[k] = v
		} else {
			delete(dst, k)
		}
	}
}
