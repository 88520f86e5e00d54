package neo4j

import (
	"context"
	"sort"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store"
)

var _ store.KGScanner = (*Store)(nil)

// Whole-graph reads for path retrieval. Like every statement in cypher.go
// they are constants, with data only in parameters and labels from
// schemaLabels.
const (
	// stmtScanEntitiesPage reads the next $n entities by id after $after,
	// leaving out placeholders (mentions = 0), which Entities hides too.
	stmtScanEntitiesPage = `MATCH (e:Entity)
USING INDEX e:Entity(id)
WHERE e.id > $after AND e.mentions > 0
RETURN e.id AS id, e.name AS name, e.type AS type, e.mentions AS mentions
ORDER BY id LIMIT $n`

	// stmtScanRelationsPage reads the next $n relations by id after $after.
	stmtScanRelationsPage = `MATCH (s:Entity)-[r:RELATES]->(t:Entity)
USING INDEX r:RELATES(id)
WHERE r.id > $after
RETURN r.id AS id, s.id AS source_id, t.id AS target_id, r.type AS type, r.keywords AS keywords, r.weight AS weight
ORDER BY id LIMIT $n`

	// stmtRelationChunks reads the chunk ids of every mention of the relations.
	stmtRelationChunks = `UNWIND $ids AS id
MATCH (m:RelationMention {relation_id: id})
USING INDEX m:RelationMention(relation_id)
RETURN id, collect(DISTINCT m.chunk_id) AS chunks`
)

// kgScanPage is how many rows one scan round trip reads.
const kgScanPage = 20000

// ScanEntities calls fn for every entity, paging by id with one read
// transaction per page.
func (s *Store) ScanEntities(ctx context.Context, fn func(store.Entity) error) error {
	return s.scanPages(ctx, "scan entities", stmtScanEntitiesPage, kgScanPage, "id", func(r *n4j.Record) error {
		return fn(store.Entity{
			ID:       recordString(r, "id"),
			Name:     recordString(r, "name"),
			Type:     recordString(r, "type"),
			Mentions: int(recordInt(r, "mentions")),
		})
	})
}

// ScanRelations calls fn for every RELATES edge, paging by relation id with
// one read transaction per page.
func (s *Store) ScanRelations(ctx context.Context, fn func(store.Relation) error) error {
	return s.scanPages(ctx, "scan relations", stmtScanRelationsPage, kgScanPage, "id", func(r *n4j.Record) error {
		return fn(store.Relation{
			ID:       recordString(r, "id"),
			SourceID: recordString(r, "source_id"),
			TargetID: recordString(r, "target_id"),
			Type:     recordString(r, "type"),
			Keywords: recordString(r, "keywords"),
			Weight:   recordFloat(r, "weight"),
		})
	})
}

// scanPages runs a paged statement (parameters $after and $n, ordered by
// the string column key) page by page, n records each, until a short page,
// with one read transaction per page. It calls fn for every record outside
// the transaction, so fn's errors and slowness never hold a transaction.
func (s *Store) scanPages(ctx context.Context, op string, stmt statement, n int, key string, fn func(*n4j.Record) error) error {
	after := ""
	for {
		var recs []*n4j.Record
		err := s.read(ctx, op, func(tx n4j.ManagedTransaction) error {
			var err error
			recs, err = collect(ctx, tx, stmt, map[string]any{"after": after, "n": int64(n)})
			return err
		})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(recs) < n {
			return nil
		}
		if after = recordString(recs[len(recs)-1], key); after == "" {
			return nil // no key to page on: starting over would never end
		}
	}
}

// RelationChunks returns the chunks each relation's mentions name, sorted.
func (s *Store) RelationChunks(ctx context.Context, relationIDs []string) (map[string][]string, error) {
	ids := unique(relationIDs)
	out := make(map[string][]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	err := s.read(ctx, "relation chunks", func(tx n4j.ManagedTransaction) error {
		clear(out)
		return s.collectBatched(ctx, tx, stmtRelationChunks, ids, func(r *n4j.Record) {
			if chunks := stringList(r, "chunks"); len(chunks) > 0 {
				sort.Strings(chunks)
				out[recordString(r, "id")] = chunks
			}
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
