package neo4j

import (
	"context"
	"fmt"
	"sort"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store"
)

// Document returns one document by id.
func (s *Store) Document(ctx context.Context, id string) (*store.Document, error) {
	return s.oneDocument(ctx, "document "+id, stmtDocument, map[string]any{"id": id})
}

// DocumentByPath returns the document at path. While a new version is being
// ingested two documents can share a path; the done one wins, then the newest.
func (s *Store) DocumentByPath(ctx context.Context, path string) (*store.Document, error) {
	return s.oneDocument(ctx, "document at "+path, stmtDocumentByPath,
		map[string]any{"path": path, "done": string(store.StatusDone)})
}

func (s *Store) oneDocument(ctx context.Context, op string, stmt statement, params map[string]any) (*store.Document, error) {
	var doc *store.Document
	err := s.read(ctx, op, func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return store.ErrNotFound
		}
		d := decodeDocument(recordMap(recs[0], "d"))
		doc = &d
		return nil
	})
	return doc, err
}

// Documents lists every document by path.
func (s *Store) Documents(ctx context.Context) ([]store.Document, error) {
	var out []store.Document
	err := s.read(ctx, "documents", func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtDocuments, nil)
		if err != nil {
			return err
		}
		out = make([]store.Document, 0, len(recs))
		for _, r := range recs {
			out = append(out, decodeDocument(recordMap(r, "d")))
		}
		return nil
	})
	return out, err
}

func decodeDocument(m map[string]any) store.Document {
	return store.Document{
		ID:          str(m, "id"),
		Path:        str(m, "path"),
		Title:       str(m, "title"),
		Hash:        str(m, "hash"),
		Format:      str(m, "format"),
		Fingerprint: str(m, "fingerprint"),
		Status:      store.Status(str(m, "status")),
		Error:       str(m, "error"),
		Size:        integer(m, "size"),
		ModTime:     timestamp(m, "mod_time"),
		UpdatedAt:   timestamp(m, "updated_at"),
		Chunks:      int(integer(m, "chunks")),
		FileKey:     str(m, "file_key"),
		Warnings:    strs(m, "warnings"),
		LeaseOwner:  str(m, "lease_owner"),
		LeaseUntil:  timestamp(m, "lease_until"),
	}
}

// Stats counts what the database holds, in one read transaction.
func (s *Store) Stats(ctx context.Context) (*store.Stats, error) {
	st := &store.Stats{ByStatus: map[store.Status]int{}, Embedder: s.emb}
	err := s.read(ctx, "stats", func(tx n4j.ManagedTransaction) error {
		*st = store.Stats{ByStatus: map[store.Status]int{}, Embedder: s.emb}
		recs, err := collect(ctx, tx, stmtStatusCounts, nil)
		if err != nil {
			return err
		}
		for _, r := range recs {
			n := int(recordInt(r, "n"))
			st.ByStatus[store.Status(recordString(r, "status"))] = n
			st.Documents += n
		}
		recs, err = collect(ctx, tx, stmtCounts, nil)
		if err != nil {
			return err
		}
		if len(recs) > 0 {
			st.Chunks = int(recordInt(recs[0], "chunks"))
			st.Entities = int(recordInt(recs[0], "entities"))
			st.Relations = int(recordInt(recs[0], "relations"))
			st.Mentions = int(recordInt(recs[0], "mentions"))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

func decodeChunk(m map[string]any) store.Chunk {
	return store.Chunk{
		ID:        str(m, "id"),
		DocID:     str(m, "doc_id"),
		Index:     int(integer(m, "index")),
		Text:      str(m, "text"),
		Tokens:    int(integer(m, "tokens")),
		Start:     int(integer(m, "start")),
		End:       int(integer(m, "end")),
		Embedding: vector(m, "embedding"),
	}
}

func decodeEntity(m map[string]any) store.Entity {
	return store.Entity{
		ID:          str(m, "id"),
		Name:        str(m, "name"),
		Type:        str(m, "type"),
		Description: str(m, "description"),
		Embedding:   vector(m, "embedding"),
		Mentions:    int(integer(m, "mentions")),
	}
}

func decodeRelation(m map[string]any) store.Relation {
	return store.Relation{
		ID:          str(m, "id"),
		SourceID:    str(m, "source_id"),
		TargetID:    str(m, "target_id"),
		Type:        str(m, "type"),
		Keywords:    str(m, "keywords"),
		Description: str(m, "description"),
		Weight:      float(m, "weight"),
		Embedding:   vector(m, "embedding"),
	}
}

// byIDs looks ids up in batches and returns what exists in the order
// asked, each id once.
func byIDs[T any](ctx context.Context, s *Store, op string, stmt statement, key string, ids []string,
	decode func(map[string]any) T, id func(T) string) ([]T, error) {
	ids = unique(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	found := make(map[string]T, len(ids))
	err := s.read(ctx, op, func(tx n4j.ManagedTransaction) error {
		return s.collectBatched(ctx, tx, stmt, ids, func(rec *n4j.Record) {
			v := decode(recordMap(rec, key))
			found[id(v)] = v
		})
	})
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(found))
	for _, i := range ids {
		if v, ok := found[i]; ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// Chunks returns the chunks with these ids, in the order asked; missing ids are skipped.
func (s *Store) Chunks(ctx context.Context, ids []string) ([]store.Chunk, error) {
	return byIDs(ctx, s, "chunks", stmtChunks, "c", ids, decodeChunk, func(c store.Chunk) string { return c.ID })
}

// consistentReads bounds how often DocumentChunks looks again when its
// read raced a commit of the same document.
const consistentReads = 5

// DocumentChunks returns a document's chunks in order. Neo4j reads are read
// committed, so a read overlapping the commit of a new version could mix
// the two; the chunk count the document records tells, and the read repeats.
func (s *Store) DocumentChunks(ctx context.Context, docID string) ([]store.Chunk, error) {
	var out []store.Chunk
	for attempt := 0; ; attempt++ {
		expected := -1
		err := s.read(ctx, "chunks of "+docID, func(tx n4j.ManagedTransaction) error {
			recs, err := collect(ctx, tx, stmtDocumentChunks, map[string]any{"doc": docID})
			if err != nil || len(recs) == 0 {
				return err
			}
			expected = int(recordInt(recs[0], "expected"))
			v, _ := recs[0].Get("chunks")
			list, _ := v.([]any)
			out = make([]store.Chunk, 0, len(list))
			for _, x := range list {
				if m, ok := x.(map[string]any); ok {
					out = append(out, decodeChunk(m))
				}
			}
			// collect after ORDER BY keeps the order in practice, but
			// Cypher does not promise it.
			sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
			return nil
		})
		if err != nil {
			return nil, err
		}
		if expected == len(out) || attempt+1 == consistentReads {
			return out, nil
		}
	}
}

// settled reports whether chunk hits still stand whole once read: every
// hit chunk exists and every hit document is done with all the chunks it
// records. Neo4j reads are read committed and a commit reaches a reader
// node by node (and the search indexes after the store), so a search
// overlapping the commit of a new version of a document can see some of its
// chunks gone and others not yet; a search that finds its hits unsettled
// runs again.
func settled(ctx context.Context, tx runner, hits []store.ChunkHit) (bool, error) {
	if len(hits) == 0 {
		return true, nil
	}
	chunks := make([]string, len(hits))
	var docs []string
	for i, h := range hits {
		chunks[i] = h.ID
		docs = append(docs, h.DocID)
	}
	recs, err := collect(ctx, tx, stmtHitsSettled, map[string]any{"chunks": chunks, "docs": unique(docs)})
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if recordInt(r, "present") != int64(len(chunks)) || recordString(r, "status") != string(store.StatusDone) ||
			recordInt(r, "expected") != recordInt(r, "live") {
			return false, nil
		}
	}
	return true, nil
}

// consistently runs a chunk search until its hits are settled, at most
// consistentReads times (then the last hits stand).
func consistently(ctx context.Context, tx runner, search func() ([]store.ChunkHit, error)) ([]store.ChunkHit, error) {
	for attempt := 0; ; attempt++ {
		hits, err := search()
		if err != nil {
			return nil, err
		}
		ok, err := settled(ctx, tx, hits)
		if err != nil || ok || attempt+1 == consistentReads {
			return hits, err
		}
	}
}

// Entities returns the entities with these ids, in the order asked; missing ids are skipped.
func (s *Store) Entities(ctx context.Context, ids []string) ([]store.Entity, error) {
	return byIDs(ctx, s, "entities", stmtEntities, "e", ids, decodeEntity, func(e store.Entity) string { return e.ID })
}

// Relations returns the relations with these ids, in the order asked; missing ids are skipped.
func (s *Store) Relations(ctx context.Context, ids []string) ([]store.Relation, error) {
	return byIDs(ctx, s, "relations", stmtRelations, "r", ids, decodeRelation, func(r store.Relation) string { return r.ID })
}

// RelationsOf returns the relations touching any of the entities, heaviest
// first (ties by id); limit <= 0 means all.
func (s *Store) RelationsOf(ctx context.Context, entityIDs []string, limit int) ([]store.Relation, error) {
	ids := unique(entityIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	lim := int64(limit)
	if limit <= 0 {
		lim = -1
	}
	seen := map[string]bool{}
	var out []store.Relation
	err := s.read(ctx, fmt.Sprintf("relations of %d entities", len(ids)), func(tx n4j.ManagedTransaction) error {
		clear(seen)
		out = out[:0]
		return batches(ids, s.batch, func(b []string) error {
			recs, err := collect(ctx, tx, stmtRelationsOf, map[string]any{"ids": b, "limit": limitParam(lim)})
			if err != nil {
				return err
			}
			for _, rec := range recs {
				r := decodeRelation(recordMap(rec, "r"))
				if !seen[r.ID] {
					seen[r.ID] = true
					out = append(out, r)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	// Each batch brought its own best; the overall best are among them.
	sort.Slice(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight > out[j].Weight
		}
		return out[i].ID < out[j].ID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// limitParam is a LIMIT value; "all" is the largest Cypher integer.
func limitParam(n int64) int64 {
	if n < 0 {
		return 1<<63 - 1
	}
	return n
}

// MentionsOf returns the MENTIONED_IN edges of the entities, ordered by
// entity then chunk; limit <= 0 means all.
func (s *Store) MentionsOf(ctx context.Context, entityIDs []string, limit int) ([]store.Mention, error) {
	ids := unique(entityIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	// Batches of sorted ids come back in overall order, so the first
	// limit rows of their concatenation are the answer.
	sort.Strings(ids)
	var out []store.Mention
	err := s.read(ctx, fmt.Sprintf("mentions of %d entities", len(ids)), func(tx n4j.ManagedTransaction) error {
		out = out[:0]
		return batches(ids, s.batch, func(b []string) error {
			left := int64(-1)
			if limit > 0 {
				left = int64(limit - len(out))
				if left <= 0 {
					return nil
				}
			}
			recs, err := collect(ctx, tx, stmtMentionsOf, map[string]any{"ids": b, "limit": limitParam(left)})
			if err != nil {
				return err
			}
			out = append(out, decodeMentions(recs)...)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EntitiesOfChunks returns the MENTIONED_IN edges into the chunks, ordered by chunk then entity.
func (s *Store) EntitiesOfChunks(ctx context.Context, chunkIDs []string) ([]store.Mention, error) {
	ids := unique(chunkIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	sort.Strings(ids)
	var out []store.Mention
	err := s.read(ctx, fmt.Sprintf("entities of %d chunks", len(ids)), func(tx n4j.ManagedTransaction) error {
		out = out[:0]
		return batches(ids, s.batch, func(b []string) error {
			recs, err := collect(ctx, tx, stmtEntitiesOfChunks, map[string]any{"ids": b})
			if err != nil {
				return err
			}
			out = append(out, decodeMentions(recs)...)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func decodeMentions(recs []*n4j.Record) []store.Mention {
	out := make([]store.Mention, 0, len(recs))
	for _, r := range recs {
		out = append(out, store.Mention{
			EntityID: recordString(r, "entity_id"),
			ChunkID:  recordString(r, "chunk_id"),
			DocID:    recordString(r, "doc_id"),
		})
	}
	return out
}
