package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"modernc.org/sqlite"
)

// A store written by an older docgraph (schema version 1 or 2) is upgraded
// in place the first time a writer opens it, in one transaction: its
// tables are renamed aside, the version 3 tables are filled from them
// (keys from ids, vectors re-encoded, fragments turned into offsets,
// counts computed from the mentions), the old tables are dropped, and the
// full-text indexes are rebuilt. Merged rows and their vectors are kept as
// they are, so a provider's embeddings are not paid for again. After the
// commit the old vector and mention sidecar files are removed and the file
// is vacuumed, which gives the freed pages back to the file system.

func init() {
	sqlite.MustRegisterDeterministicScalarFunction("docgraph_ord", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return chunkOrd(asString(args[0])), nil
	})
	sqlite.MustRegisterDeterministicScalarFunction("docgraph_key", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		prefix := asString(args[1])
		if n, ok := canonicalID(asString(args[0]), prefix[0]); ok && len(prefix) == 1 {
			return n, nil
		}
		return nil, fmt.Errorf("%q is not a docgraph id of prefix %q", asString(args[0]), prefix)
	})
	sqlite.MustRegisterDeterministicScalarFunction("docgraph_vec", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		b, _ := args[0].([]byte)
		if len(b) == 0 || len(b)%4 != 0 {
			return nil, nil
		}
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return encodeVec(v), nil
	})
	sqlite.MustRegisterDeterministicScalarFunction("docgraph_frag", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return encodeFrag(asString(args[0]), asString(args[1])), nil
	})
}

func asString(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// oldTables are the tables and indexes of versions 1 and 2 that version 3
// replaces; documents and meta stay.
var (
	oldTables  = []string{"chunks", "entities", "relations", "entity_mentions", "relation_mentions", "dangling_relations"}
	oldIndexes = []string{"chunks_doc", "relations_source", "relations_target", "entity_mentions_entity", "entity_mentions_chunk",
		"entity_mentions_doc", "relation_mentions_relation", "relation_mentions_doc", "vector_log_gen"}
)

// documentColumnsAdded are the columns later versions added to documents;
// a version 1 store may lack them.
var documentColumnsAdded = []struct{ name, ddl string }{
	{"file_key", `ALTER TABLE documents ADD COLUMN file_key TEXT NOT NULL DEFAULT ''`},
	{"warnings", `ALTER TABLE documents ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]'`},
	{"lease_owner", `ALTER TABLE documents ADD COLUMN lease_owner TEXT NOT NULL DEFAULT ''`},
	{"lease_until", `ALTER TABLE documents ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0`},
}

// migrate upgrades a version 1 or 2 store to version 3 inside tx. With
// derived set, entity and relation vectors are not copied: the store makes
// them again when it needs them (store.Reembedder).
func migrate(ctx context.Context, tx *sql.Tx, from int, derived bool) error {
	have := map[string]bool{}
	if err := collect(ctx, tx, have, `SELECT name FROM pragma_table_info('documents')`); err != nil {
		return err
	}
	for _, c := range documentColumnsAdded {
		if !have[c.name] {
			if _, err := tx.ExecContext(ctx, c.ddl); err != nil {
				return fmt.Errorf("add documents.%s: %w", c.name, err)
			}
		}
	}
	for _, ix := range oldIndexes {
		if _, err := tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+ix); err != nil {
			return err
		}
	}
	for _, t := range oldTables {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+t+` RENAME TO old_`+t); err != nil {
			return fmt.Errorf("set %s aside: %w", t, err)
		}
	}
	for _, q := range []string{`DROP TABLE IF EXISTS vector_log`, `DROP TABLE IF EXISTS chunks_fts`, `DROP TABLE IF EXISTS entities_fts`, schema} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create the new tables: %w", err)
		}
	}
	steps := []struct{ what, q string }{
		{"chunks", `INSERT INTO chunks(seq, id, doc_id, idx, text, tokens, start_off, end_off, ord)
			SELECT seq, id, doc_id, idx, text, tokens, start_off, end_off, docgraph_ord(id) FROM old_chunks`},
		{"chunk vectors", `INSERT INTO vectors(kind, id, vec)
			SELECT 0, seq, docgraph_vec(embedding) FROM old_chunks WHERE length(embedding) > 0`},
		{"entities", `INSERT INTO entities(seq, id, name, type, description)
			SELECT seq, docgraph_key(id, 'e'), name, type, description FROM old_entities`},
		{"entity mentions", `INSERT INTO entity_mentions(entity, ord, chunk, n, name, type, frag)
			SELECT docgraph_key(m.entity_id, 'e'), c.ord, c.seq,
				row_number() OVER (PARTITION BY m.entity_id, m.chunk_id ORDER BY m.seq) - 1,
				m.name, m.type, docgraph_frag(m.description, c.text)
			FROM old_entity_mentions m JOIN chunks c ON c.id = m.chunk_id ORDER BY c.seq`},
		{"relation mentions", `INSERT INTO relation_mentions(relation, ord, chunk, n, source, target, type, keywords, frag, weight)
			SELECT docgraph_key(m.relation_id, 'r'), c.ord, c.seq,
				row_number() OVER (PARTITION BY m.relation_id, m.chunk_id ORDER BY m.seq) - 1,
				docgraph_key(m.source_id, 'e'), docgraph_key(m.target_id, 'e'), m.type, m.keywords,
				docgraph_frag(m.description, c.text), m.weight
			FROM old_relation_mentions m JOIN chunks c ON c.id = m.chunk_id ORDER BY c.seq`},
		{"relations", `INSERT INTO relations(seq, id, source, target, type, keywords, description, weight, mentions)
			SELECT r.rowid, docgraph_key(r.id, 'r'), docgraph_key(r.source_id, 'e'), docgraph_key(r.target_id, 'e'), r.type, r.keywords, r.description, r.weight,
				(SELECT count(*) FROM relation_mentions m WHERE m.relation = docgraph_key(r.id, 'r'))
			FROM old_relations r`},
		{"dangling relations", `INSERT INTO dangling_relations(id) SELECT docgraph_key(id, 'r') FROM old_dangling_relations`},
	}
	if !derived {
		steps = append(steps,
			struct{ what, q string }{"entity vectors", `INSERT INTO vectors(kind, id, vec)
				SELECT 1, seq, docgraph_vec(embedding) FROM old_entities WHERE length(embedding) > 0`},
			struct{ what, q string }{"relation vectors", `INSERT INTO vectors(kind, id, vec)
				SELECT 2, rowid, docgraph_vec(embedding) FROM old_relations WHERE length(embedding) > 0`})
	}
	for _, step := range steps {
		if _, err := tx.ExecContext(ctx, step.q); err != nil {
			return fmt.Errorf("copy %s: %w", step.what, err)
		}
	}
	if err := migrateCounts(ctx, tx); err != nil {
		return err
	}
	for _, t := range oldTables {
		if _, err := tx.ExecContext(ctx, `DROP TABLE old_`+t); err != nil {
			return fmt.Errorf("drop old %s: %w", t, err)
		}
	}
	return nil
}

// migrateCounts fills every entity's counts of names, types and chunks
// from its mentions.
func migrateCounts(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT entity, n, name, type FROM entity_mentions ORDER BY entity, ord`)
	if err != nil {
		return fmt.Errorf("count entity mentions: %w", err)
	}
	type counts struct {
		names, types map[string]int
		chunks       int
	}
	var ids []int64
	all := map[int64]*counts{}
	for rows.Next() {
		var id, n int64
		var name, typ string
		if err := rows.Scan(&id, &n, &name, &typ); err != nil {
			rows.Close()
			return fmt.Errorf("count entity mentions: %w", err)
		}
		c := all[id]
		if c == nil {
			c = &counts{names: map[string]int{}, types: map[string]int{}}
			all[id] = c
			ids = append(ids, id)
		}
		c.names[name]++
		if typ != "" {
			c.types[typ]++
		}
		if n == 0 {
			c.chunks++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("count entity mentions: %w", err)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO entity_counts(seq, mentions, names, types) SELECT seq, ?3, ?1, ?2 FROM entities WHERE id = ?4`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, id := range ids {
		c := all[id]
		if _, err := st.ExecContext(ctx, encodeCounts(c.names), encodeCounts(c.types), c.chunks, id); err != nil {
			return fmt.Errorf("count entity mentions: %w", err)
		}
	}
	return nil
}

// afterMigration removes the sidecar caches older versions kept beside the
// database and vacuums the file, so the space the old layout took goes
// back to the file system.
func (s *Store) afterMigration(ctx context.Context) error {
	for _, suffix := range []string{".vec-chunks", ".vec-entities", ".vec-relations", ".mentions"} {
		os.Remove(s.path + suffix)
	}
	for _, q := range []string{`VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := s.wdb.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite store %s: vacuum after the upgrade: %w", s.path, err)
		}
	}
	return nil
}
