package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"

	"github.com/docgraph/docgraph/store"
)

var _ store.PassageGraph = (*Store)(nil)

// The passage graph around given nodes, one statement each, through
// indexes only (EXPLAIN QUERY PLAN, checked by TestNeighborPlansUseIndexes):
// entities by id, their mentions in entity_mentions_by_entity or _by_chunk
// (covering), chunks by seq or id, documents by id.
//
// An entity's chunk count in documents of any status is kept in
// entity_counts; one with at most ?3 of them is no hub, and its chunks in
// done documents are listed (the caller counts them). One with more is
// counted again over done documents, stopping at ?2 (one past ?3, or -1:
// all), so a hub costs ?2 rows however often it is mentioned; and when
// every document is done (the store at rest; two lookups in
// documents_status, once per statement) the kept count is
// that count already, so no hub costs a row at all. Walks met thousands
// of hubs' recounts per query: a third of a one-shot query's time at x1.
const notAllDone = `(EXISTS (SELECT 1 FROM documents WHERE status < 'done') OR EXISTS (SELECT 1 FROM documents WHERE status > 'done'))`

const hubCount = `CASE WHEN k.mentions > ?3 AND ` + notAllDone + ` THEN (SELECT count(*) FROM (
		SELECT 1 FROM entity_mentions hm CROSS JOIN chunks hc ON hc.seq = hm.chunk CROSS JOIN documents hd ON hd.id = hc.doc_id
		WHERE hm.entity = x.id AND hm.n = 0 AND hd.status = 'done' LIMIT ?2))
	WHEN k.mentions > ?3 THEN k.mentions
	ELSE 0 END`

const (
	// stmtEntityNeighbors lists, for each entity of ?1 (a JSON array of
	// keys), one row with its count when it is a hub, else one row per
	// chunk of a done document with the chunk's document and title.
	stmtEntityNeighbors = `WITH x(id) AS MATERIALIZED (SELECT DISTINCT value FROM json_each(?1)),
counted(id, n) AS MATERIALIZED (
	SELECT x.id, ` + hubCount + ` FROM x CROSS JOIN entities e ON e.id = x.id CROSS JOIN entity_counts k ON k.seq = e.seq)
SELECT id, n, NULL, NULL, NULL FROM counted WHERE n > ?3
UNION ALL
SELECT c.id, 0, ch.id, ch.doc_id, d.title
FROM counted c CROSS JOIN entity_mentions m ON m.entity = c.id CROSS JOIN chunks ch ON ch.seq = m.chunk
	CROSS JOIN documents d ON d.id = ch.doc_id
WHERE c.n <= ?3 AND m.n = 0 AND d.status = 'done'`

	// stmtChunkNeighbors lists one row per edge into the chunks of ?1 (a
	// JSON array of ids) that belong to done documents: the chunk's
	// document and title, the entity and whether it is a hub, decided once
	// per entity however many of the chunks it is in.
	stmtChunkNeighbors = `WITH edges(chunk, doc, title, entity) AS MATERIALIZED (
	SELECT ch.id, ch.doc_id, d.title, m.entity
	FROM (SELECT DISTINCT value AS id FROM json_each(?1)) ids
	CROSS JOIN chunks ch ON ch.id = ids.id
	CROSS JOIN documents d ON d.id = ch.doc_id
	CROSS JOIN entity_mentions m ON m.chunk = ch.seq
	WHERE d.status = 'done' AND m.n = 0),
x(id) AS MATERIALIZED (SELECT DISTINCT entity FROM edges),
counted(id, n) AS MATERIALIZED (
	SELECT x.id, ` + hubCount + ` FROM x CROSS JOIN entities e ON e.id = x.id CROSS JOIN entity_counts k ON k.seq = e.seq)
SELECT g.chunk, g.doc, g.title, g.entity, c.n > ?3 FROM edges g CROSS JOIN counted c ON c.id = g.entity`
)

// limits turns maxChunks into the statements' count limit (?2) and hub
// threshold (?3): counting stops one past the threshold.
func limits(maxChunks int) (countLimit, hubAbove int64) {
	if maxChunks <= 0 {
		return -1, math.MaxInt64
	}
	return int64(maxChunks) + 1, int64(maxChunks)
}

// EntityNeighbors returns the entities' chunk counts and, for those in at
// most maxChunks chunks, the chunks (store.PassageGraph).
func (s *Store) EntityNeighbors(ctx context.Context, entityIDs []string, maxChunks int) ([]store.EntityNeighbors, error) {
	ids := keysOf(unique(entityIDs), 'e')
	if len(ids) == 0 {
		return nil, nil
	}
	if out, ok := s.entityNeighborsFromFile(ctx, ids, maxChunks); ok {
		return out, nil
	}
	countLimit, hubAbove := limits(maxChunks)
	rows, err := s.rdb.QueryContext(ctx, stmtEntityNeighbors, intList(ids), countLimit, hubAbove)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: neighbors of %d entities: %w", s.path, len(ids), err)
	}
	defer rows.Close()
	byID := map[string]*store.EntityNeighbors{}
	for rows.Next() {
		var key int64
		var n int
		var chunk, doc, title sql.NullString
		if err := rows.Scan(&key, &n, &chunk, &doc, &title); err != nil {
			return nil, fmt.Errorf("sqlite store %s: neighbors of %d entities: %w", s.path, len(ids), err)
		}
		id := entityName(key)
		e := byID[id]
		if e == nil {
			e = &store.EntityNeighbors{ID: id, Chunks: n}
			byID[id] = e
		}
		if chunk.Valid {
			e.ChunkList = append(e.ChunkList, store.ChunkRef{ID: chunk.String, DocID: doc.String, DocTitle: title.String})
			e.Chunks++
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: neighbors of %d entities: %w", s.path, len(ids), err)
	}
	out := make([]store.EntityNeighbors, 0, len(byID))
	for _, e := range byID {
		if int64(e.Chunks) > hubAbove {
			// entities.mentions said no hub but was short: trust the rows.
			e.ChunkList = nil
		}
		sort.Slice(e.ChunkList, func(i, j int) bool { return e.ChunkList[i].ID < e.ChunkList[j].ID })
		out = append(out, *e)
	}
	sortEntityNeighbors(out)
	return out, nil
}

func sortEntityNeighbors(s []store.EntityNeighbors) {
	sort.Slice(s, func(i, j int) bool { return s[i].ID < s[j].ID })
}

func sortChunkNeighbors(s []store.ChunkNeighbors) {
	sort.Slice(s, func(i, j int) bool { return s[i].ID < s[j].ID })
}

// ChunkNeighbors returns the chunks' documents and the entities mentioning
// them, hubs left out (store.PassageGraph).
func (s *Store) ChunkNeighbors(ctx context.Context, chunkIDs []string, maxChunks int) ([]store.ChunkNeighbors, error) {
	ids := unique(chunkIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	if out, ok := s.chunkNeighborsFromFile(ctx, ids, maxChunks); ok {
		return out, nil
	}
	countLimit, hubAbove := limits(maxChunks)
	rows, err := s.rdb.QueryContext(ctx, stmtChunkNeighbors, jsonList(ids), countLimit, hubAbove)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: neighbors of %d chunks: %w", s.path, len(ids), err)
	}
	defer rows.Close()
	byID := map[string]*store.ChunkNeighbors{}
	for rows.Next() {
		var chunk, doc, title string
		var key int64
		var hub bool
		if err := rows.Scan(&chunk, &doc, &title, &key, &hub); err != nil {
			return nil, fmt.Errorf("sqlite store %s: neighbors of %d chunks: %w", s.path, len(ids), err)
		}
		entity := entityName(key)
		c := byID[chunk]
		if c == nil {
			c = &store.ChunkNeighbors{ChunkRef: store.ChunkRef{ID: chunk, DocID: doc, DocTitle: title}}
			byID[chunk] = c
		}
		if hub {
			c.Hubs++
		} else {
			c.Entities = append(c.Entities, entity)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: neighbors of %d chunks: %w", s.path, len(ids), err)
	}
	out := make([]store.ChunkNeighbors, 0, len(byID))
	for _, c := range byID {
		sort.Strings(c.Entities)
		out = append(out, *c)
	}
	sortChunkNeighbors(out)
	return out, nil
}
