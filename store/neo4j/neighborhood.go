package neo4j

import (
	"context"
	"fmt"
	"sort"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/store"
)

var _ store.PassageGraph = (*Store)(nil)

// neighborParams are the parameters of the passage graph reads: counting
// stops one past maxChunks, and nothing stops it when maxChunks <= 0.
func neighborParams(ids []string, maxChunks int) map[string]any {
	countLimit, hubAbove := limitParam(-1), limitParam(-1)
	if maxChunks > 0 {
		countLimit, hubAbove = int64(maxChunks)+1, int64(maxChunks)
	}
	return map[string]any{"ids": ids, "done": string(store.StatusDone), "count_limit": countLimit, "hub_above": hubAbove}
}

// EntityNeighbors returns the entities' chunk counts and, for those in at
// most maxChunks chunks, the chunks (store.PassageGraph), in one statement.
func (s *Store) EntityNeighbors(ctx context.Context, entityIDs []string, maxChunks int) ([]store.EntityNeighbors, error) {
	ids := unique(entityIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	var out []store.EntityNeighbors
	err := s.read(ctx, fmt.Sprintf("neighbors of %d entities", len(ids)), func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtEntityNeighbors, neighborParams(ids, maxChunks))
		if err != nil {
			return err
		}
		out = make([]store.EntityNeighbors, 0, len(recs))
		hubAbove := neighborParams(nil, maxChunks)["hub_above"].(int64)
		for _, r := range recs {
			e := store.EntityNeighbors{ID: recordString(r, "id"), Chunks: int(recordInt(r, "n"))}
			if int64(e.Chunks) <= hubAbove {
				for _, c := range lists(r, "chunks") {
					e.ChunkList = append(e.ChunkList, store.ChunkRef{ID: listString(c, 0), DocID: listString(c, 1), DocTitle: listString(c, 2)})
				}
				e.Chunks = len(e.ChunkList)
				if int64(e.Chunks) > hubAbove {
					e.ChunkList = nil // e.mentions said no hub but was short
				}
			}
			if e.Chunks == 0 {
				continue // no chunk of a done document
			}
			sort.Slice(e.ChunkList, func(i, j int) bool { return e.ChunkList[i].ID < e.ChunkList[j].ID })
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ChunkNeighbors returns the chunks' documents and the entities mentioning
// them with their chunk counts (store.PassageGraph), in one statement.
func (s *Store) ChunkNeighbors(ctx context.Context, chunkIDs []string, maxChunks int) ([]store.ChunkNeighbors, error) {
	ids := unique(chunkIDs)
	if len(ids) == 0 {
		return nil, nil
	}
	var out []store.ChunkNeighbors
	err := s.read(ctx, fmt.Sprintf("neighbors of %d chunks", len(ids)), func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtChunkNeighbors, neighborParams(ids, maxChunks))
		if err != nil {
			return err
		}
		byID := map[string]*store.ChunkNeighbors{}
		for _, r := range recs {
			id := recordString(r, "chunk_id")
			c := byID[id]
			if c == nil {
				c = &store.ChunkNeighbors{ChunkRef: store.ChunkRef{ID: id, DocID: recordString(r, "doc_id"), DocTitle: recordString(r, "title")}}
				byID[id] = c
			}
			if recordBool(r, "hub") {
				c.Hubs++
			} else {
				c.Entities = append(c.Entities, recordString(r, "entity_id"))
			}
		}
		out = make([]store.ChunkNeighbors, 0, len(byID))
		for _, c := range byID {
			sort.Strings(c.Entities)
			out = append(out, *c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// lists reads a record value that is a list of lists.
func lists(rec *n4j.Record, key string) [][]any {
	v, _ := rec.Get(key)
	l, _ := v.([]any)
	out := make([][]any, 0, len(l))
	for _, x := range l {
		if inner, ok := x.([]any); ok {
			out = append(out, inner)
		}
	}
	return out
}

func listString(l []any, i int) string {
	if i >= len(l) {
		return ""
	}
	return asString(l[i])
}

func recordBool(rec *n4j.Record, key string) bool {
	v, _ := rec.Get(key)
	b, _ := v.(bool)
	return b
}
