package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"

	"docgraph/store"
)

var _ store.PassageGraph = (*Store)(nil)

// The passage graph around given nodes, one statement each. Both are plain
// SQL over entity_mentions, documents and entities, and go through indexes
// only (EXPLAIN QUERY PLAN, checked by TestNeighborPlansUseIndexes): ids
// are looked up in entity_mentions_entity or entity_mentions_chunk,
// documents and entities by their unique ids.
//
// An entity's chunk count comes from its entities row: mentions counts
// its chunks in documents of any status, so an entity with 1..?3 of them
// is no hub (n 0: not counted, the caller counts its chunks), and one with
// more has mentions minus its chunks in documents that are not done
// (pending: usually none, and read from those documents' side, so it
// costs what they hold, not what the entity is mentioned in). An entity
// without a row, or with mentions 0 (a mention the merger skipped), is
// counted on its mentions, stopping at ?2 chunks (one past ?3, or -1:
// all). ?3 is the hub threshold, the largest integer for none.
const counted = `notdone(id) AS (
	SELECT id FROM documents WHERE status < 'done'
	UNION ALL SELECT id FROM documents WHERE status > 'done'),
pending(id, n) AS MATERIALIZED (
	SELECT m.entity_id, count(DISTINCT m.chunk_id) FROM notdone nd CROSS JOIN entity_mentions m ON m.doc_id = nd.id
	WHERE m.entity_id IN (SELECT id FROM x) GROUP BY m.entity_id),
counted(id, n) AS MATERIALIZED (
	SELECT x.id, CASE
		WHEN e.mentions BETWEEN 1 AND ?3 THEN 0
		WHEN e.mentions > ?3 THEN e.mentions - coalesce((SELECT p.n FROM pending p WHERE p.id = x.id), 0)
		ELSE (SELECT count(*) FROM (
			SELECT DISTINCT m.chunk_id FROM entity_mentions m CROSS JOIN documents d ON d.id = m.doc_id
			WHERE m.entity_id = x.id AND d.status = 'done' LIMIT ?2))
	END
	FROM x LEFT JOIN entities e ON e.id = x.id)`

const (
	// stmtEntityNeighbors lists, for each entity of ?1 (a JSON array), one
	// row with its count when it is a hub, else one row per chunk of a
	// done document with the chunk's document and title (count 0: the
	// caller counts the rows).
	stmtEntityNeighbors = `WITH x(id) AS MATERIALIZED (SELECT DISTINCT value FROM json_each(?1)),
` + counted + `
SELECT id, n, NULL, NULL, NULL FROM counted WHERE n > ?3
UNION ALL
SELECT DISTINCT c.id, 0, m.chunk_id, m.doc_id, d.title
FROM counted c CROSS JOIN entity_mentions m ON m.entity_id = c.id CROSS JOIN documents d ON d.id = m.doc_id
WHERE c.n <= ?3 AND d.status = 'done'`

	// stmtChunkNeighbors lists one row per edge into the chunks of ?1 that
	// belong to done documents: the chunk's document and title, the entity
	// and whether it is a hub, decided once per entity however many of the
	// chunks it is in.
	stmtChunkNeighbors = `WITH edges(chunk_id, entity_id, doc_id, title) AS MATERIALIZED (
	SELECT DISTINCT m.chunk_id, m.entity_id, m.doc_id, d.title
	FROM (SELECT DISTINCT value AS id FROM json_each(?1)) ids
	CROSS JOIN entity_mentions m ON m.chunk_id = ids.id
	CROSS JOIN documents d ON d.id = m.doc_id
	WHERE d.status = 'done'),
x(id) AS MATERIALIZED (SELECT DISTINCT entity_id FROM edges),
` + counted + `
SELECT g.chunk_id, g.doc_id, g.title, g.entity_id, c.n > ?3 FROM edges g CROSS JOIN counted c ON c.id = g.entity_id`
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
	ids := unique(entityIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	countLimit, hubAbove := limits(maxChunks)
	rows, err := s.rdb.QueryContext(ctx, stmtEntityNeighbors, jsonList(ids), countLimit, hubAbove)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: neighbors of %d entities: %w", s.path, len(ids), err)
	}
	defer rows.Close()
	byID := map[string]*store.EntityNeighbors{}
	for rows.Next() {
		var id string
		var n int
		var chunk, doc, title sql.NullString
		if err := rows.Scan(&id, &n, &chunk, &doc, &title); err != nil {
			return nil, fmt.Errorf("sqlite store %s: neighbors of %d entities: %w", s.path, len(ids), err)
		}
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
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ChunkNeighbors returns the chunks' documents and the entities mentioning
// them, hubs left out (store.PassageGraph).
func (s *Store) ChunkNeighbors(ctx context.Context, chunkIDs []string, maxChunks int) ([]store.ChunkNeighbors, error) {
	ids := unique(chunkIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	countLimit, hubAbove := limits(maxChunks)
	rows, err := s.rdb.QueryContext(ctx, stmtChunkNeighbors, jsonList(ids), countLimit, hubAbove)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: neighbors of %d chunks: %w", s.path, len(ids), err)
	}
	defer rows.Close()
	byID := map[string]*store.ChunkNeighbors{}
	for rows.Next() {
		var chunk, doc, title, entity string
		var hub bool
		if err := rows.Scan(&chunk, &doc, &title, &entity, &hub); err != nil {
			return nil, fmt.Errorf("sqlite store %s: neighbors of %d chunks: %w", s.path, len(ids), err)
		}
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
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
