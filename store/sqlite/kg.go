package sqlite

import (
	"context"
	"fmt"

	"github.com/docgraph/docgraph/store"
)

var _ store.KGScanner = (*Store)(nil)

// ScanEntities calls fn for every entity (id, name, type, mentions), in
// entity id order, from one snapshot.
func (s *Store) ScanEntities(ctx context.Context, fn func(store.Entity) error) error {
	rows, err := s.rdb.QueryContext(ctx, `SELECT e.id, e.name, e.type, k.mentions FROM entities e JOIN entity_counts k ON k.seq = e.seq ORDER BY e.id`)
	if err != nil {
		return fmt.Errorf("sqlite store %s: scan entities: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e store.Entity
		var id int64
		if err := rows.Scan(&id, &e.Name, &e.Type, &e.Mentions); err != nil {
			return fmt.Errorf("sqlite store %s: scan entities: %w", s.path, err)
		}
		e.ID = entityName(id)
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite store %s: scan entities: %w", s.path, err)
	}
	return nil
}

// ScanRelations calls fn for every stored relation (id, endpoints, type,
// keywords, weight), in relation id order, from one snapshot. The relations table
// only ever holds relations whose two endpoints exist.
func (s *Store) ScanRelations(ctx context.Context, fn func(store.Relation) error) error {
	rows, err := s.rdb.QueryContext(ctx, `SELECT id, source, target, type, keywords, weight FROM relations ORDER BY id`)
	if err != nil {
		return fmt.Errorf("sqlite store %s: scan relations: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r store.Relation
		var id, src, tgt int64
		if err := rows.Scan(&id, &src, &tgt, &r.Type, &r.Keywords, &r.Weight); err != nil {
			return fmt.Errorf("sqlite store %s: scan relations: %w", s.path, err)
		}
		r.ID, r.SourceID, r.TargetID = relationName(id), entityName(src), entityName(tgt)
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite store %s: scan relations: %w", s.path, err)
	}
	return nil
}

// RelationChunks returns the chunks each relation's mentions name, sorted.
func (s *Store) RelationChunks(ctx context.Context, relationIDs []string) (map[string][]string, error) {
	ids := keysOf(relationIDs, 'r')
	out := make(map[string][]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.rdb.QueryContext(ctx, `SELECT m.relation, c.id FROM json_each(?) j CROSS JOIN relation_mentions m ON m.relation = j.value
		CROSS JOIN chunks c ON c.seq = m.chunk WHERE m.n = 0 ORDER BY m.relation, c.id`, intList(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: chunks of %d relations: %w", s.path, len(ids), err)
	}
	defer rows.Close()
	for rows.Next() {
		var rel int64
		var chunk string
		if err := rows.Scan(&rel, &chunk); err != nil {
			return nil, fmt.Errorf("sqlite store %s: chunks of %d relations: %w", s.path, len(ids), err)
		}
		out[relationName(rel)] = append(out[relationName(rel)], chunk)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite store %s: chunks of %d relations: %w", s.path, len(ids), err)
	}
	return out, nil
}
