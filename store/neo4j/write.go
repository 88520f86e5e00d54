package neo4j

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"time"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store"
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

// writeDocuments writes ws in one transaction. The order of its steps is
// what makes concurrent writers safe: it first reads what the stored
// versions touch (no locks), then creates and locks every entity the
// transaction will touch, in id order, and only then changes anything. Two
// writers (two processes) touching the same entities queue at that first
// lock instead of deadlocking half-way; a deadlock that still happens (an
// entity reached only through a relation found later) is retried.
func (s *Store) writeDocuments(ctx context.Context, op string, ws []*store.DocumentWrite) error {
	if err := s.validate(ws); err != nil {
		return s.fail(op, err)
	}
	var docs, written, chunks []string
	for _, w := range ws {
		docs = append(docs, w.Document.ID)
		docs = append(docs, w.Replaces...)
		written = append(written, w.Document.ID)
		for _, c := range w.Chunks {
			chunks = append(chunks, c.ID)
		}
	}
	docs = unique(docs)
	sort.Strings(docs)
	return s.write(ctx, op, func(tx runner) error {
		ch := newChange()
		if err := s.oldState(ctx, tx, docs, chunks, ch); err != nil {
			return err
		}
		for _, w := range ws {
			for _, m := range w.Entities {
				ch.lock[m.EntityID] = true
			}
			for _, m := range w.Relations {
				ch.lock[m.SourceID], ch.lock[m.TargetID] = true, true
			}
		}
		if err := s.lockEntities(ctx, tx, ch); err != nil {
			return err
		}
		if _, err := s.remove(ctx, tx, docs, written, chunks); err != nil {
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
	return s.write(ctx, "delete document "+id, func(tx runner) error {
		ch := newChange()
		docs := []string{id}
		if err := s.oldState(ctx, tx, docs, nil, ch); err != nil {
			return err
		}
		if err := s.lockEntities(ctx, tx, ch); err != nil {
			return err
		}
		found, err := s.remove(ctx, tx, docs, nil, nil)
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
	case store.StatusPending, store.StatusProcessing, store.StatusDone, store.StatusFailed, store.StatusDuplicate:
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
	return s.write(ctx, op, func(tx runner) error {
		return exec(ctx, tx, stmtSetStatus, params)
	})
}

// RenameDocument changes a document's path.
func (s *Store) RenameDocument(ctx context.Context, id, path string) error {
	params := map[string]any{"id": id, "path": path, "updated_at": time.Now().UTC()}
	return s.updateOne(ctx, fmt.Sprintf("rename document %s to %s", id, path), stmtRenameDocument, params)
}

// SetFileKey records the file key of a document.
func (s *Store) SetFileKey(ctx context.Context, id, key string) error {
	return s.updateOne(ctx, "set file key of "+id, stmtSetFileKey, map[string]any{"id": id, "key": key})
}

// updateOne runs a write of one document that returns how many it
// changed as n: store.ErrNotFound when none.
func (s *Store) updateOne(ctx context.Context, op string, stmt statement, params map[string]any) error {
	return s.write(ctx, op, func(tx runner) error {
		recs, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return err
		}
		if len(recs) == 0 || recordInt(recs[0], "n") == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// maxGroupRows is MaxGroupRows with vector indexes.
const maxGroupRows = 2_000

// MaxGroupRows keeps a Batcher's transactions small while the store has
// vector indexes: Neo4j updates its HNSW indexes at commit, and that work
// grows faster than the vectors a commit carries (three indexes more so
// than one). Measured on the first 1,000 2wiki passages (about 35 rows
// each): groups of 25 or 50 passages wrote them in 7.7 to 8.1 s, groups
// of 100 in 8.9 s, groups of 500 in 11.5 s (commits 3.8, 4.0, 4.9, 7.2 s).
func (s *Store) MaxGroupRows() int {
	if s.emb.Dimension == 0 {
		return 0
	}
	return maxGroupRows
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
// whose merged form must be recomputed from the mentions that remain, and
// the entities it locks first.
type change struct {
	entities  map[string]bool
	relations map[string]endpoints
	lock      map[string]bool
}

// endpoints are a relation's source and target entity ids.
type endpoints struct{ source, target string }

func newChange() *change {
	return &change{entities: map[string]bool{}, relations: map[string]endpoints{}, lock: map[string]bool{}}
}

func (ch *change) touchRelation(id, source, target string) {
	ch.relations[id] = endpoints{source, target}
	ch.lock[source], ch.lock[target] = true, true
}

// oldState records what the stored versions of docs touch and refuses
// chunk ids that another document owns.
func (s *Store) oldState(ctx context.Context, tx runner, docs, chunks []string, ch *change) error {
	recs, err := collect(ctx, tx, stmtOldState, map[string]any{"docs": docs, "chunks": nonNil(chunks)})
	if err != nil {
		return fmt.Errorf("read stored versions: %w", err)
	}
	for _, rec := range recs {
		id := recordString(rec, "id")
		switch recordInt(rec, "kind") {
		case oldEntity:
			ch.entities[id], ch.lock[id] = true, true
		case oldRelation:
			ch.touchRelation(id, recordString(rec, "source_id"), recordString(rec, "target_id"))
		case foreignChunk:
			return fmt.Errorf("chunk %s belongs to document %s", id, recordString(rec, "source_id"))
		}
	}
	return nil
}

// Row kinds of stmtOldState.
const (
	oldEntity    = 1
	oldRelation  = 2
	foreignChunk = 3
)

// lockEntities creates and write-locks every entity in ch.lock, in id order.
func (s *Store) lockEntities(ctx context.Context, tx runner, ch *change) error {
	delete(ch.lock, "")
	if err := s.execBatched(ctx, tx, stmtLockEntities, sortedKeys(ch.lock)); err != nil {
		return fmt.Errorf("lock entities: %w", err)
	}
	// A locked entity may be a new placeholder; reconcile keeps it only if
	// something mentions it.
	for id := range ch.lock {
		ch.entities[id] = true
	}
	return nil
}

// remove deletes the stored versions of docs: their mentions, the chunks
// the new versions do not keep, and the documents not written again (a
// rewritten document and the chunks it keeps are updated in place by insert).
// It reports whether any of docs existed.
func (s *Store) remove(ctx context.Context, tx runner, docs, written, keep []string) (bool, error) {
	rewritten := map[string]bool{}
	for _, id := range written {
		rewritten[id] = true
	}
	gone := make([]string, 0, len(docs))
	for _, id := range docs {
		if !rewritten[id] {
			gone = append(gone, id)
		}
	}
	recs, err := collect(ctx, tx, stmtRemoveDocuments, map[string]any{"docs": docs, "gone": gone, "keep": nonNil(keep)})
	if err != nil {
		return false, fmt.Errorf("remove %v: %w", docs, err)
	}
	return len(recs) > 0 && recordInt(recs[0], "found") > 0, nil
}

// insert writes the documents, their chunks and their mentions, each kind
// in UNWIND batches shared by all documents, sorted by the node each row
// locks.
func (s *Store) insert(ctx context.Context, tx runner, ws []*store.DocumentWrite, ch *change) error {
	now := time.Now().UTC()
	var docRows, chunkRows, entRows, relRows []map[string]any
	for _, w := range ws {
		d := w.Document
		props := documentProps(d)
		props["status"] = string(store.StatusDone)
		props["error"] = ""
		props["updated_at"] = now
		props["chunks"] = int64(len(w.Chunks))
		props["lease_owner"], props["lease_until"] = nil, nil // written: the claim is over
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
			ch.touchRelation(m.RelationID, m.SourceID, m.TargetID)
		}
	}
	sortRows(docRows, "id")
	sortRows(entRows, "entity_id")
	sortRows(relRows, "relation_id")
	for _, step := range []struct {
		what string
		stmt statement
		rows []map[string]any
	}{
		{"write documents", stmtWriteDocuments, docRows},
		{"write chunks", stmtWriteChunks, chunkRows},
		{"write entity mentions", stmtWriteEntityMentions, entRows},
		{"write relation mentions", stmtWriteRelationMentions, relRows},
	} {
		if err := s.unwind(ctx, tx, step.stmt, step.rows); err != nil {
			return fmt.Errorf("%s: %w", step.what, err)
		}
	}
	return nil
}

// reconcile recomputes every touched entity and relation from all of its
// remaining mentions, with one MergeEntities and one MergeRelations call,
// and writes only what changed: a property set to its old value would
// still cost a vector index update. A relation exists while it has
// mentions and both endpoint entities exist, so relations of entities that
// appeared or vanished are touched too.
//
// Concurrent writers cannot lose each other's mentions: every entity a
// transaction touches was write-locked by lockEntities before anything was
// read here, so two transactions touching one entity run one after the
// other, and the second reads the first's committed mentions. (Relations
// follow: their endpoints are locked too.)
func (s *Store) reconcile(ctx context.Context, tx runner, ch *change) error {
	touched := sortedKeys(ch.entities)
	stored := map[string]storedEntity{}
	var ementions []store.EntityMention
	var eseq []int64
	if err := s.collectBatched(ctx, tx, stmtEntityState, touched, func(rec *n4j.Record) {
		id := recordString(rec, "id")
		stored[id] = storedEntity{
			name: recordString(rec, "name"), typ: recordString(rec, "type"), description: recordString(rec, "description"),
			mentions: recordInt(rec, "mentions"), digest: recordString(rec, "vec_digest"),
		}
		for _, f := range recordList(rec, "fragments") {
			if len(f) < 5 || f[0] == nil {
				continue
			}
			ementions = append(ementions, store.EntityMention{
				EntityID: id, ChunkID: asString(f[0]), Name: asString(f[2]), Type: asString(f[3]), Description: asString(f[4]),
			})
			eseq = append(eseq, asInt(f[1]))
		}
	}); err != nil {
		return fmt.Errorf("load touched entities: %w", err)
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
	var rows []map[string]any
	for _, e := range merged {
		if !ch.entities[e.ID] {
			return fmt.Errorf("merger returned entity %s, which no mention names", e.ID)
		}
		if err := s.checkVector("entity", e.ID, e.Embedding); err != nil {
			return err
		}
		kept[e.ID] = true
		old := stored[e.ID]
		if old.mentions <= 0 {
			flipped[e.ID] = true
		}
		props := map[string]any{}
		if old.name != e.Name || old.mentions <= 0 {
			props["name"] = e.Name
		}
		if old.typ != e.Type || old.mentions <= 0 {
			props["type"] = e.Type
		}
		if old.description != e.Description || old.mentions <= 0 {
			props["description"] = e.Description
		}
		if old.mentions != int64(counts[e.ID]) {
			props["mentions"] = int64(counts[e.ID])
		}
		row := map[string]any{"id": e.ID, "props": props, "vec": nil}
		if d := vecDigest(e.Embedding); d != old.digest || old.mentions <= 0 {
			props["vec_digest"] = d
			setVector(row, e.Embedding, true)
		}
		if len(props) > 0 {
			rows = append(rows, row)
		}
	}
	if err := s.unwind(ctx, tx, stmtUpdateEntities, rows); err != nil {
		return fmt.Errorf("update entities: %w", err)
	}
	var dropped []string
	for _, id := range touched {
		if kept[id] {
			continue
		}
		dropped = append(dropped, id)
		if stored[id].mentions > 0 {
			flipped[id] = true
		}
	}
	for _, stmt := range []statement{stmtDeleteOrphanEntities, stmtHideEntities} {
		if err := s.execBatched(ctx, tx, stmt, dropped); err != nil {
			return fmt.Errorf("drop entities: %w", err)
		}
	}
	if err := s.collectBatched(ctx, tx, stmtRelationsOfEntities, sortedKeys(flipped), func(rec *n4j.Record) {
		ch.relations[recordString(rec, "id")] = endpoints{recordString(rec, "source_id"), recordString(rec, "target_id")}
	}); err != nil {
		return fmt.Errorf("relations of changed entities: %w", err)
	}
	return s.reconcileRelations(ctx, tx, ch)
}

// storedEntity and storedRelation are the merged properties a store
// holds, to compare a new merge with.
type storedEntity struct {
	name, typ, description, digest string
	mentions                       int64
}

type storedRelation struct {
	typ, keywords, description, digest string
	weight                             float64
}

// reconcileRelations re-merges the touched relations: created where they
// became live, updated where their merge changed, deleted where they lost
// their last mention or an endpoint.
func (s *Store) reconcileRelations(ctx context.Context, tx runner, ch *change) error {
	ids := make([]string, 0, len(ch.relations))
	for id := range ch.relations {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return lessEndpoints(ch.relations[ids[i]], ch.relations[ids[j]], ids[i], ids[j]) })
	keyRows := make([]map[string]any, len(ids))
	for i, id := range ids {
		e := ch.relations[id]
		keyRows[i] = map[string]any{"id": id, "source_id": e.source, "target_id": e.target}
	}
	stored := map[string]storedRelation{}
	var rmentions []store.RelationMention
	var rseq []int64
	err := batches(keyRows, s.batch, func(b []map[string]any) error {
		recs, err := collect(ctx, tx, stmtRelationState, map[string]any{"rows": b})
		if err != nil {
			return err
		}
		for _, rec := range recs {
			id := recordString(rec, "id")
			if v, _ := rec.Get("stored"); v == true {
				stored[id] = storedRelation{
					typ: recordString(rec, "type"), keywords: recordString(rec, "keywords"), description: recordString(rec, "description"),
					weight: recordFloat(rec, "weight"), digest: recordString(rec, "vec_digest"),
				}
			}
			if v, _ := rec.Get("live"); v != true {
				continue
			}
			e := ch.relations[id]
			for _, f := range recordList(rec, "fragments") {
				if len(f) < 6 || f[0] == nil {
					continue
				}
				rmentions = append(rmentions, store.RelationMention{
					RelationID: id, SourceID: e.source, TargetID: e.target, ChunkID: asString(f[0]),
					Type: asString(f[2]), Keywords: asString(f[3]), Description: asString(f[4]), Weight: asFloat(f[5]),
				})
				rseq = append(rseq, asInt(f[1]))
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load touched relations: %w", err)
	}
	rgroups := groupRelationMentions(rmentions, rseq)
	var rmerged []store.Relation
	if len(rgroups) > 0 {
		if rmerged, err = s.merger.MergeRelations(ctx, rgroups); err != nil {
			return fmt.Errorf("merge %d relations: %w", len(rgroups), err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var creates, updates, deletes []map[string]any
	kept := map[string]bool{}
	for _, r := range rmerged {
		e, ok := ch.relations[r.ID]
		if !ok {
			return fmt.Errorf("merger returned relation %s, which no mention names", r.ID)
		}
		if r.SourceID != e.source || r.TargetID != e.target {
			return fmt.Errorf("merger moved relation %s from %s -> %s to %s -> %s", r.ID, e.source, e.target, r.SourceID, r.TargetID)
		}
		if err := s.checkVector("relation", r.ID, r.Embedding); err != nil {
			return err
		}
		kept[r.ID] = true
		old, had := stored[r.ID]
		props := map[string]any{}
		if !had || old.typ != r.Type {
			props["type"] = r.Type
		}
		if !had || old.keywords != r.Keywords {
			props["keywords"] = r.Keywords
		}
		if !had || old.description != r.Description {
			props["description"] = r.Description
		}
		if !had || old.weight != r.Weight {
			props["weight"] = r.Weight
		}
		row := map[string]any{"id": r.ID, "source_id": e.source, "target_id": e.target, "props": props, "vec": nil}
		if d := vecDigest(r.Embedding); !had || d != old.digest {
			props["vec_digest"] = d
			setVector(row, r.Embedding, s.relVector)
		}
		switch {
		case !had:
			creates = append(creates, row)
		case len(props) > 0:
			updates = append(updates, row)
		}
	}
	for _, id := range ids {
		if _, had := stored[id]; had && !kept[id] {
			e := ch.relations[id]
			deletes = append(deletes, map[string]any{"id": id, "source_id": e.source, "target_id": e.target})
		}
	}
	if err := s.unwind(ctx, tx, stmtDeleteRelations, deletes); err != nil {
		return fmt.Errorf("delete relations: %w", err)
	}
	var create, update statement = stmtCreateRelations, stmtUpdateRelations
	if !s.relVector {
		create, update = stmtCreateRelationsProps, stmtUpdateRelationsProps
	}
	if err := s.unwind(ctx, tx, update, updates); err != nil {
		return fmt.Errorf("update relations: %w", err)
	}
	created := 0
	err = batches(creates, s.batch, func(b []map[string]any) error {
		recs, err := collect(ctx, tx, create, map[string]any{"rows": b})
		if err == nil && len(recs) > 0 {
			created += int(recordInt(recs[0], "n"))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create relations: %w", err)
	}
	if created != len(creates) {
		return fmt.Errorf("create relations: %d of %d merged relations have no endpoint entities", len(creates)-created, len(creates))
	}
	return nil
}

// setVector records a changed embedding v in an update row: as row["vec"],
// which the statement stores through a vector procedure (32-bit floats,
// half the bytes of a list property in the store and the transaction log),
// or, where the server has no such procedure, in the row's props. An empty
// v removes the property.
func setVector(row map[string]any, v []float32, procedure bool) {
	props := row["props"].(map[string]any)
	switch {
	case len(v) == 0:
		props["embedding"] = nil
	case procedure:
		row["vec"] = param(v)
	default:
		props["embedding"] = param(v)
	}
}

// lessEndpoints orders relations by source, target and id: the order their
// batches lock endpoint nodes in.
func lessEndpoints(a, b endpoints, ida, idb string) bool {
	if a.source != b.source {
		return a.source < b.source
	}
	if a.target != b.target {
		return a.target < b.target
	}
	return ida < idb
}

// vecDigest identifies a vector's exact value, so an unchanged merged
// embedding is not written again (each write is a vector index update).
func vecDigest(v []float32) string {
	if len(v) == 0 {
		return ""
	}
	h := fnv.New64a()
	var b [4]byte
	for _, f := range v {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(f))
		h.Write(b[:])
	}
	return strconv.FormatUint(h.Sum64(), 16)
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
func (s *Store) unwind(ctx context.Context, tx runner, stmt statement, rows []map[string]any) error {
	return batches(rows, s.batch, func(b []map[string]any) error {
		return exec(ctx, tx, stmt, map[string]any{"rows": b})
	})
}

// execBatched runs an UNWIND $ids statement over ids in batches.
func (s *Store) execBatched(ctx context.Context, tx runner, stmt statement, ids []string) error {
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

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sortRows orders rows by a string key, the lock order of their batch.
func sortRows(rows []map[string]any, key string) {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i][key].(string) < rows[j][key].(string) })
}

// nonNil makes a nil list an empty one: a Cypher list parameter must not be null.
func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
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
