package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"slices"
)

// The vector log lets a process whose vector index is a few generations
// behind (a server beside `ingest --watch`, which writes from another
// process) catch up by reading the rows that changed instead of every
// vector: on the 2wiki store a full reload of the relation vectors alone
// takes seconds, a catch-up milliseconds. Every write transaction logs one
// marker row for its generation plus one row per vector it changed, so a
// reader can tell a complete stretch of the log from one with a gap (pruned,
// or written by a docgraph that did not log) and then loads everything.
const (
	// vectorLogKeep is how many generations of the log are kept, and
	// vectorLogRows about how many rows: every vectorLogCheck generations
	// the older half goes while there are more.
	vectorLogKeep  = 1024
	vectorLogRows  = 200_000
	vectorLogCheck = 64
	// catchUpMin is the fewest changed rows for which a catch-up may
	// still give way to a full load (when they are a quarter of the index).
	catchUpMin = 2000
)

// logVectors records generation gen's vector changes in tx.
func logVectors(ctx context.Context, tx *sql.Tx, gen int64, ch *change) error {
	ins := newBatch(ctx, tx, `INSERT INTO vector_log(gen, tbl, id)`, 3, "")
	if err := ins.add(gen, "", ""); err != nil { // the generation's marker
		return err
	}
	for _, l := range []struct {
		table string
		ups   []vecUpdate
	}{{"chunks", ch.chunkVecs}, {"entities", ch.entVecs}, {"relations", ch.relVecs}} {
		seen := make(map[string]bool, len(l.ups))
		for _, u := range l.ups {
			if seen[u.id] {
				continue
			}
			seen[u.id] = true
			if err := ins.add(gen, l.table, u.id); err != nil {
				return err
			}
		}
	}
	if err := ins.flush(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM vector_log WHERE gen <= ?`, gen-vectorLogKeep); err != nil {
		return err
	}
	if gen%vectorLogCheck != 0 {
		return nil
	}
	// Big writes (whole books) log many rows: every so often, drop the
	// older half of the generations while the log is over its row budget.
	var rows, oldest int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*), coalesce(min(gen), 0) FROM vector_log`).Scan(&rows, &oldest); err != nil {
		return err
	}
	if rows > vectorLogRows {
		_, err := tx.ExecContext(ctx, `DELETE FROM vector_log WHERE gen <= ?`, oldest+(gen-oldest)/2)
		return err
	}
	return nil
}

// catchUp brings a loaded index from x.gen to generation g by re-reading
// only the rows the log names, in the snapshot tx that read g. It reports
// false, changing nothing, when the log does not cover every generation in
// between or names so many rows that a full load is cheaper.
func (x *vecIndex) catchUp(ctx context.Context, tx *sql.Tx, g int64) (bool, error) {
	if !x.loaded || x.gen >= g || g-x.gen > vectorLogKeep {
		return false, nil
	}
	var gens int64
	if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT gen) FROM vector_log WHERE gen > ? AND gen <= ?`, x.gen, g).Scan(&gens); err != nil {
		return false, err
	}
	if gens != g-x.gen {
		return false, nil
	}
	changed := map[string]bool{}
	if err := collect(ctx, tx, changed, `SELECT DISTINCT id FROM vector_log WHERE gen > ? AND gen <= ? AND tbl = ?`, x.gen, g, x.table); err != nil {
		return false, err
	}
	if len(changed) > max(catchUpMin, len(x.ids)/4) {
		return false, nil
	}
	ids := slices.Sorted(maps.Keys(changed))
	// Read first, patch after: a failed read leaves the index as it was.
	type row struct {
		doc string
		vec []float32
	}
	found := make(map[string]row, len(ids))
	in, args := inList(ids)
	rows, err := tx.QueryContext(ctx, x.query+` AND id IN `+in, args...)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var id, doc string
		var blob []byte
		if err := rows.Scan(&id, &doc, &blob); err != nil {
			rows.Close()
			return false, err
		}
		found[id] = row{doc, decodeVector(blob)}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	for _, id := range ids {
		if r, ok := found[id]; ok && len(r.vec) > 0 {
			x.put(id, r.doc, r.vec)
		} else {
			x.remove(id)
		}
	}
	x.gen = g
	x.releaseMap() // growth may have moved the matrix to the heap
	x.catchUps.Add(1)
	return true, nil
}
