package neo4j

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"docgraph/store"
)

// WriteDocument replaces the document w.Document.ID and every id in
// w.Replaces by w in one transaction, re-merges every entity and relation
// either version mentions, and marks the document done. Readers see the old
// version or the new one; on any error the old version stays.
func (s *Store) WriteDocument(ctx context.Context, w *store.DocumentWrite) error {
	if w == nil {
		return s.fail("write document", errors.New("nil document write"))
	}
	return s.writeDocuments(ctx, fmt.Sprintf("write document %s (%s)", w.Document.ID, w.Document.Path), []*store.DocumentWrite{w})
}

// WriteDocuments is WriteDocument for several documents in one transaction:
// all of them are written or none. Rows of all documents share the UNWIND
// batches and the Merger is called once, which is what makes bulk ingest
// fast. No two writes may name the same document or chunk.
func (s *Store) WriteDocuments(ctx context.Context, ws ...*store.DocumentWrite) error {
	if len(ws) == 0 {
		return nil
	}
	return s.writeDocuments(ctx, fmt.Sprintf("write %d documents", len(ws)), ws)
}

func (s *Store) writeDocuments(ctx context.Context, op string, ws []*store.DocumentWrite) error {
	if err := s.validate(ws); err != nil {
		return s.fail(op, err)
	}
	var docs []string
	for _, w := range ws {
		docs = append(docs, w.Document.ID)
		docs = append(docs, w.Replaces...)
	}
	docs = unique(docs)
	return s.write(ctx, op, func(tx n4j.ManagedTransaction) error {
		ch := newChange()
		if _, err := s.remove(ctx, tx, docs, ch); err != nil {
			return err
		}
		if err := s.insert(ctx, tx, ws, ch); err != nil {
			return err
		}
		return s.reconcile(ctx, tx, ch)
	})
}

// DeleteDocument removes a document with its chunks and mentions, then
// re-merges what it touched: entities and relations only it mentioned go.
func (s *Store) DeleteDocument(ctx context.Context, id string) error {
	return s.write(ctx, "delete document "+id, func(tx n4j.ManagedTransaction) error {
		ch := newChange()
		found, err := s.remove(ctx, tx, []string{id}, ch)
		if err != nil {
			return err
		}
		if !found {
			return store.ErrNotFound
		}
		return s.reconcile(ctx, tx, ch)
	})
}

// SetStatus records a lifecycle state, creating a bare document (no chunks,
// so nothing searchable) when the id is new.
func (s *Store) SetStatus(ctx context.Context, doc store.Document, status store.Status, reason string) error {
	op := fmt.Sprintf("set status of %s to %s", doc.ID, status)
	switch status {
	case store.StatusPending, store.StatusProcessing, store.StatusDone, store.StatusFailed:
	default:
		return s.fail(op, fmt.Errorf("unknown status %q", status))
	}
	if doc.ID == "" {
		return s.fail(op, fmt.Errorf("document %s has an empty id", doc.Path))
	}
	props := documentProps(doc)
	props["file_key"] = "" // a lifecycle row never lets a file be skipped unread
	params := map[string]any{
		"id":         doc.ID,
		"props":      props,
		"status":     string(status),
		"error":      reason,
		"updated_at": time.Now().UTC(),
	}
	return s.write(ctx, op, func(tx n4j.ManagedTransaction) error {
		return exec(ctx, tx, stmtSetStatus, params)
	})
}

// RenameDocument changes a document's path.
func (s *Store) RenameDocument(ctx context.Context, id, path string) error {
	params := map[string]any{"id": id, "path": path, "updated_at": time.Now().UTC()}
	return s.write(ctx, fmt.Sprintf("rename document %s to %s", id, path), func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtRenameDocument, params)
		if err != nil {
			return err
		}
		if len(recs) == 0 || recordInt(recs[0], "n") == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// SetFileKey records the file key of a document.
func (s *Store) SetFileKey(ctx context.Context, id, key string) error {
	params := map[string]any{"id": id, "key": key}
	return s.write(ctx, "set file key of "+id, func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtSetFileKey, params)
		if err != nil {
			return err
		}
		if len(recs) == 0 || recordInt(recs[0], "n") == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// documentProps is a document's metadata as node properties.
func documentProps(d store.Document) map[string]any {
	return map[string]any{
		"path":        d.Path,
		"title":       d.Title,
		"hash":        d.Hash,
		"format":      d.Format,
		"fingerprint": d.Fingerprint,
		"size":        d.Size,
		"mod_time":    timeParam(d.ModTime),
		"file_key":    d.FileKey,
		"warnings":    warningsParam(d.Warnings),
	}
}

// warningsParam is a document's warnings as a list property; Neo4j stores
// no empty lists of unknown type, so none is an empty string list.
func warningsParam(w []string) []string {
	if w == nil {
		return []string{}
	}
	return w
}

// validate rejects a write the database would take only half of, with a
// message naming the offending row.
func (s *Store) validate(ws []*store.DocumentWrite) error {
	if s.merger == nil {
		return errors.New("no Merger configured (store.Options.Merger)")
	}
	docs := map[string]bool{}
	chunks := map[string]bool{}
	for _, w := range ws {
		if w == nil {
			return errors.New("nil document write")
		}
		if w.Document.ID == "" {
			return fmt.Errorf("document %s has an empty id", w.Document.Path)
		}
		for _, id := range unique(append([]string{w.Document.ID}, w.Replaces...)) {
			if docs[id] {
				return fmt.Errorf("document %s is written or replaced twice in one transaction", id)
			}
			docs[id] = true
		}
		own := make(map[string]bool, len(w.Chunks))
		for _, c := range w.Chunks {
			switch {
			case c.ID == "":
				return fmt.Errorf("chunk %d of %s has an empty id", c.Index, w.Document.ID)
			case chunks[c.ID]:
				return fmt.Errorf("chunk id %s appears twice", c.ID)
			case c.DocID != "" && c.DocID != w.Document.ID:
				return fmt.Errorf("chunk %s belongs to document %s", c.ID, c.DocID)
			}
			if err := s.checkVector("chunk", c.ID, c.Embedding); err != nil {
				return err
			}
			chunks[c.ID], own[c.ID] = true, true
		}
		for _, m := range w.Entities {
			if m.EntityID == "" || !own[m.ChunkID] {
				return fmt.Errorf("entity mention %q (%s) names chunk %q, which is not in document %s", m.Name, m.EntityID, m.ChunkID, w.Document.ID)
			}
		}
		for _, m := range w.Relations {
			if m.RelationID == "" || m.SourceID == "" || m.TargetID == "" || !own[m.ChunkID] {
				return fmt.Errorf("relation mention %s (%s -> %s) names chunk %q, which is not in document %s, or lacks an id", m.RelationID, m.SourceID, m.TargetID, m.ChunkID, w.Document.ID)
			}
		}
	}
	return nil
}

// change is what one write transaction touched: the entities and relations
// whose merged form must be recomputed from the mentions that remain.
type change struct {
	entities  map[string]bool
	relations map[string]bool
}

func newChange() *change {
	return &change{entities: map[string]bool{}, relations: map[string]bool{}}
}

// remove deletes documents with their chunks (and so their MENTIONED_IN,
// PART_OF and NEXT edges) and relation mentions, noting what they touched.
// It reports whether any document existed.
func (s *Store) remove(ctx context.Context, tx n4j.ManagedTransaction, docs []string, ch *change) (bool, error) {
	p := map[string]any{"docs": docs}
	if err := collectIDs(ctx, tx, stmtTouchedEntities, p, ch.entities); err != nil {
		return false, fmt.Errorf("entities of %v: %w", docs, err)
	}
	if err := collectIDs(ctx, tx, stmtTouchedRelations, p, ch.relations); err != nil {
		return false, fmt.Errorf("relations of %v: %w", docs, err)
	}
	for _, stmt := range []statement{stmtDeleteRelationMentions, stmtDeleteChunks} {
		if err := exec(ctx, tx, stmt, p); err != nil {
			return false, fmt.Errorf("remove %v: %w", docs, err)
		}
	}
	recs, err := collect(ctx, tx, stmtDeleteDocuments, p)
	if err != nil {
		return false, fmt.Errorf("remove %v: %w", docs, err)
	}
	return len(recs) > 0 && recordInt(recs[0], "n") > 0, nil
}

// insert writes the documents, their chunks and their mentions, each kind
// in UNWIND batches shared by all documents.
func (s *Store) insert(ctx context.Context, tx n4j.ManagedTransaction, ws []*store.DocumentWrite, ch *change) error {
	now := time.Now().UTC()
	var docRows, chunkRows, entRows, relRows []map[string]any
	for _, w := range ws {
		d := w.Document
		props := documentProps(d)
		props["status"] = string(store.StatusDone)
		props["error"] = ""
		props["updated_at"] = now
		props["chunks"] = int64(len(w.Chunks))
		docRows = append(docRows, map[string]any{"id": d.ID, "props": props})

		// Reading order, so each chunk's predecessor is written before it.
		chunks := append([]store.Chunk(nil), w.Chunks...)
		sort.SliceStable(chunks, func(i, j int) bool { return chunks[i].Index < chunks[j].Index })
		for i, c := range chunks {
			var prev any
			if i > 0 {
				prev = chunks[i-1].ID
			}
			chunkRows = append(chunkRows, map[string]any{
				"doc": d.ID, "id": c.ID, "idx": int64(c.Index), "text": c.Text, "tokens": int64(c.Tokens),
				"start_off": int64(c.Start), "end_off": int64(c.End), "embedding": param(c.Embedding), "prev": prev,
			})
		}
		for i, m := range w.Entities {
			entRows = append(entRows, map[string]any{
				"doc": d.ID, "entity_id": m.EntityID, "chunk_id": m.ChunkID, "seq": int64(i),
				"name": m.Name, "type": m.Type, "description": m.Description,
			})
			ch.entities[m.EntityID] = true
		}
		for i, m := range w.Relations {
			relRows = append(relRows, map[string]any{
				"doc": d.ID, "relation_id": m.RelationID, "chunk_id": m.ChunkID, "seq": int64(i),
				"source_id": m.SourceID, "target_id": m.TargetID, "type": m.Type,
				"keywords": m.Keywords, "description": m.Description, "weight": m.Weight,
			})
			ch.relations[m.RelationID] = true
		}
	}
	for _, step := range []struct {
		what string
		stmt statement
		rows []map[string]any
	}{
		{"create documents", stmtCreateDocuments, docRows},
		{"write chunks", stmtWriteChunks, chunkRows},
		{"write entity mentions", stmtWriteEntityMentions, entRows},
		{"write relation mentions", stmtWriteRelationMentions, relRows},
	} {
		if err := s.unwind(ctx, tx, step.stmt, step.rows, nil); err != nil {
			return fmt.Errorf("%s: %w", step.what, err)
		}
	}
	return nil
}

// reconcile recomputes every touched entity and relation from all of its
// remaining mentions, with one MergeEntities and one MergeRelations call.
// A relation exists while it has mentions whose two endpoint entities exist,
// so relations of entities that appeared or vanished are touched too.
//
// Concurrent writers cannot lose each other's mentions: deleting or creating
// a MENTIONED_IN edge write-locks the entity node until commit, so two
// transactions touching one entity run one after the other, and the second
// reads the first's committed mentions. (Relations follow: graphbuild names
// both endpoints of a relation in the chunk that mentions it.)
func (s *Store) reconcile(ctx context.Context, tx n4j.ManagedTransaction, ch *change) error {
	touched := sortedKeys(ch.entities)
	existed := map[string]bool{}
	if err := s.collectBatched(ctx, tx, stmtLiveEntities, touched, func(rec *n4j.Record) {
		existed[recordString(rec, "id")] = true
	}); err != nil {
		return fmt.Errorf("load touched entities: %w", err)
	}
	var ementions []store.EntityMention
	var eseq []int64
	if err := s.collectBatched(ctx, tx, stmtEntityMentions, touched, func(rec *n4j.Record) {
		ementions = append(ementions, store.EntityMention{
			EntityID:    recordString(rec, "entity_id"),
			ChunkID:     recordString(rec, "chunk_id"),
			Name:        recordString(rec, "name"),
			Type:        recordString(rec, "type"),
			Description: recordString(rec, "description"),
		})
		eseq = append(eseq, recordInt(rec, "seq"))
	}); err != nil {
		return fmt.Errorf("load entity mentions: %w", err)
	}
	egroups := groupEntityMentions(ementions, eseq)
	var merged []store.Entity
	if len(egroups) > 0 {
		var err error
		if merged, err = s.merger.MergeEntities(ctx, egroups); err != nil {
			return fmt.Errorf("merge %d entities: %w", len(egroups), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	counts := chunkCounts(egroups)
	kept := map[string]bool{}
	flipped := map[string]bool{}
	rows := make([]map[string]any, 0, len(merged))
	for _, e := range merged {
		if !ch.entities[e.ID] {
			return fmt.Errorf("merger returned entity %s, which no mention names", e.ID)
		}
		if err := s.checkVector("entity", e.ID, e.Embedding); err != nil {
			return err
		}
		rows = append(rows, map[string]any{
			"id": e.ID, "name": e.Name, "type": e.Type, "description": e.Description,
			"embedding": param(e.Embedding), "mentions": int64(counts[e.ID]),
		})
		kept[e.ID] = true
		if !existed[e.ID] {
			flipped[e.ID] = true
		}
	}
	if err := s.unwind(ctx, tx, stmtUpdateEntities, rows, nil); err != nil {
		return fmt.Errorf("update entities: %w", err)
	}
	var dropped []string
	for _, id := range touched {
		if kept[id] {
			continue
		}
		dropped = append(dropped, id)
		if existed[id] {
			flipped[id] = true
		}
	}
	for _, stmt := range []statement{stmtDeleteOrphanEntities, stmtHideEntities} {
		if err := s.execBatched(ctx, tx, stmt, dropped); err != nil {
			return fmt.Errorf("drop entities: %w", err)
		}
	}

	if err := s.collectBatched(ctx, tx, stmtRelationsOfEntities, sortedKeys(flipped), func(rec *n4j.Record) {
		ch.relations[recordString(rec, "id")] = true
	}); err != nil {
		return fmt.Errorf("relations of changed entities: %w", err)
	}
	rtouched := sortedKeys(ch.relations)
	var rmentions []store.RelationMention
	var rseq []int64
	if err := s.collectBatched(ctx, tx, stmtRelationMentions, rtouched, func(rec *n4j.Record) {
		rmentions = append(rmentions, store.RelationMention{
			RelationID:  recordString(rec, "relation_id"),
			ChunkID:     recordString(rec, "chunk_id"),
			SourceID:    recordString(rec, "source_id"),
			TargetID:    recordString(rec, "target_id"),
			Type:        recordString(rec, "type"),
			Keywords:    recordString(rec, "keywords"),
			Description: recordString(rec, "description"),
			Weight:      recordFloat(rec, "weight"),
		})
		rseq = append(rseq, recordInt(rec, "seq"))
	}); err != nil {
		return fmt.Errorf("load relation mentions: %w", err)
	}
	rgroups := groupRelationMentions(rmentions, rseq)
	var rmerged []store.Relation
	if len(rgroups) > 0 {
		var err error
		if rmerged, err = s.merger.MergeRelations(ctx, rgroups); err != nil {
			return fmt.Errorf("merge %d relations: %w", len(rgroups), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.execBatched(ctx, tx, stmtDropRelations, rtouched); err != nil {
		return fmt.Errorf("drop relations: %w", err)
	}
	rows = make([]map[string]any, 0, len(rmerged))
	for _, r := range rmerged {
		if !ch.relations[r.ID] {
			return fmt.Errorf("merger returned relation %s, which no mention names", r.ID)
		}
		if err := s.checkVector("relation", r.ID, r.Embedding); err != nil {
			return err
		}
		rows = append(rows, map[string]any{
			"id": r.ID, "source_id": r.SourceID, "target_id": r.TargetID, "type": r.Type,
			"keywords": r.Keywords, "description": r.Description, "weight": r.Weight,
			"embedding": param(r.Embedding),
		})
	}
	created := 0
	err := batches(rows, s.batch, func(b []map[string]any) error {
		recs, err := collect(ctx, tx, stmtCreateRelations, map[string]any{"rows": b})
		if err == nil && len(recs) > 0 {
			created += int(recordInt(recs[0], "n"))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create relations: %w", err)
	}
	if created != len(rows) {
		return fmt.Errorf("create relations: %d of %d merged relations have no endpoint entities (the Merger changed an endpoint?)", len(rows)-created, len(rows))
	}
	return nil
}

// groupEntityMentions groups mentions by entity, ordered by entity, chunk
// and input order, so merges do not depend on the order rows came back in.
func groupEntityMentions(ms []store.EntityMention, seq []int64) [][]store.EntityMention {
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		x, y := ms[idx[a]], ms[idx[b]]
		if x.EntityID != y.EntityID {
			return x.EntityID < y.EntityID
		}
		if x.ChunkID != y.ChunkID {
			return x.ChunkID < y.ChunkID
		}
		return seq[idx[a]] < seq[idx[b]]
	})
	var groups [][]store.EntityMention
	for _, i := range idx {
		m := ms[i]
		if n := len(groups); n == 0 || groups[n-1][0].EntityID != m.EntityID {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], m)
	}
	return groups
}

// groupRelationMentions is groupEntityMentions for relations.
func groupRelationMentions(ms []store.RelationMention, seq []int64) [][]store.RelationMention {
	idx := make([]int, len(ms))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		x, y := ms[idx[a]], ms[idx[b]]
		if x.RelationID != y.RelationID {
			return x.RelationID < y.RelationID
		}
		if x.ChunkID != y.ChunkID {
			return x.ChunkID < y.ChunkID
		}
		return seq[idx[a]] < seq[idx[b]]
	})
	var groups [][]store.RelationMention
	for _, i := range idx {
		m := ms[i]
		if n := len(groups); n == 0 || groups[n-1][0].RelationID != m.RelationID {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], m)
	}
	return groups
}

// chunkCounts is Entity.Mentions: distinct chunks per entity. Groups are
// sorted by chunk, so repeats are adjacent.
func chunkCounts(groups [][]store.EntityMention) map[string]int {
	out := make(map[string]int, len(groups))
	for _, g := range groups {
		n := 0
		for i, m := range g {
			if i == 0 || g[i-1].ChunkID != m.ChunkID {
				n++
			}
		}
		out[g[0].EntityID] = n
	}
	return out
}

// unwind runs an UNWIND $rows statement over rows in batches.
func (s *Store) unwind(ctx context.Context, tx n4j.ManagedTransaction, stmt statement, rows []map[string]any, extra map[string]any) error {
	return batches(rows, s.batch, func(b []map[string]any) error {
		p := make(map[string]any, len(extra)+1)
		for k, v := range extra {
			p[k] = v
		}
		p["rows"] = b
		return exec(ctx, tx, stmt, p)
	})
}

// execBatched runs an UNWIND $ids statement over ids in batches.
func (s *Store) execBatched(ctx context.Context, tx n4j.ManagedTransaction, stmt statement, ids []string) error {
	return batches(ids, s.batch, func(b []string) error {
		return exec(ctx, tx, stmt, map[string]any{"ids": b})
	})
}

// collectBatched runs an UNWIND $ids statement over ids in batches and hands
// each record to fn.
func (s *Store) collectBatched(ctx context.Context, r runner, stmt statement, ids []string, fn func(*n4j.Record)) error {
	return batches(ids, s.batch, func(b []string) error {
		recs, err := collect(ctx, r, stmt, map[string]any{"ids": b})
		if err != nil {
			return err
		}
		for _, rec := range recs {
			fn(rec)
		}
		return nil
	})
}

// collectIDs adds the "id" column of a statement's records to set.
func collectIDs(ctx context.Context, r runner, stmt statement, params map[string]any, set map[string]bool) error {
	recs, err := collect(ctx, r, stmt, params)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		set[recordString(rec, "id")] = true
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func unique(ids []string) []string {
	seen := map[string]bool{}
	out := ids[:0:0]
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
