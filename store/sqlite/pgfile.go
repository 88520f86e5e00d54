package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/pgraph"
)

// The passage graph file (graph.db.pgraph, package pgraph) answers
// store.PassageGraph without a statement per round: a one-shot query maps
// it and reads the few pages its walk meets, where the statements cost
// two thirds of its CPU at x4 and grew with the corpus. Like the ANN
// files it is a cache, never the source of truth: it records the graph
// version (GraphVersion) and store instance it was built at, and a read
// uses it only when the store is at exactly that version, checked at every
// call (two key reads), so an answer from it is the one the statements
// would give for the same snapshot. Otherwise (no file, a file of another
// version or store, a damaged one) the statements answer.
//
// A writer builds it whole from one snapshot when it brings the ANN files
// up to date (annSet.sync): at the end of an ingest, after a delete, when
// it opens a store whose file is missing or stale. Building reads the
// mention index once (x4: 376,000 edges, a fraction of a second), so while
// writes keep coming (watch mode) it is rebuilt at most once per ten times
// its last build's length; between builds the file is stale and queries
// use the statements, as they did before it.

// passageFile is a store's mapped passage graph file.
type passageFile struct {
	path string

	mu  sync.RWMutex // held for reading while a call reads f
	f   *pgraph.File
	bad os.FileInfo // a file found damaged: not opened again

	// What calls did, for tests: answered from the file, or not.
	answered, declined atomic.Int64
}

func newPassageFile(s *Store) *passageFile {
	if s.path == ":memory:" || s.path == "" || !pgraph.Supported {
		return nil
	}
	return &passageFile{path: s.path + ".pgraph"}
}

// acquire returns the file when it holds exactly version of the store
// instance, read-locked until release; nil otherwise.
func (p *passageFile) acquire(version, instance string) *pgraph.File {
	if p == nil {
		return nil
	}
	usable := func() bool {
		return p.f != nil && !p.f.Damaged() && p.f.Version() == version && p.f.Instance() == instance
	}
	p.mu.RLock()
	if usable() {
		return p.f
	}
	p.mu.RUnlock()
	p.refresh()
	p.mu.RLock()
	if usable() {
		return p.f
	}
	p.mu.RUnlock()
	p.declined.Add(1)
	return nil
}

func (p *passageFile) release() { p.mu.RUnlock() }

// refresh maps the file the path names now, when it is another than the
// one held (a writer renamed a new one over it) and not one found damaged.
func (p *passageFile) refresh() {
	fi, err := os.Stat(p.path)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && p.f != nil {
			p.f.Close()
			p.f = nil
		}
		return
	}
	if p.f != nil && p.f.Damaged() {
		p.bad = p.f.Info()
		p.f.Close()
		p.f = nil
	}
	if p.f != nil && sameFile(fi, p.f.Info()) {
		return
	}
	if p.bad != nil && sameFile(fi, p.bad) {
		return
	}
	f, err := pgraph.Open(p.path)
	if err != nil {
		if errors.Is(err, pgraph.ErrCorrupt) {
			p.bad = fi
		}
		return
	}
	if p.f != nil {
		p.f.Close()
	}
	p.f = f
}

// sameFile is os.SameFile with the size and time of the last change: a
// damaged file let go of frees its inode, which the next file written may
// take.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func (p *passageFile) close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.f == nil {
		return nil
	}
	err := p.f.Close()
	p.f = nil
	return err
}

// stmtPassageState is the graph version's two key reads and whether a
// document is not done (neighborhood.go's notAllDone), in one statement.
const stmtPassageState = `SELECT
	(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'),
	(SELECT value FROM meta WHERE key = 'done_moves'),
	` + notAllDone

// passageReader returns a reader of the passage graph file when it holds
// the store's current graph version, and the function that lets go of it;
// allDone says whether every document is done, which decides how a hub is
// counted (as the statements count it: neighborhood.go).
func (s *Store) passageReader(ctx context.Context) (r *pgraph.Reader, release func(), allDone bool) {
	if s.pg == nil {
		return nil, nil, false
	}
	var gen int64
	var moves sql.NullString
	var notDone bool
	if err := s.rdb.QueryRowContext(ctx, stmtPassageState).Scan(&gen, &moves, &notDone); err != nil || !moves.Valid {
		return nil, nil, false // the statements answer (and report an error)
	}
	f := s.pg.acquire(strconv.FormatInt(gen, 10)+"/m"+moves.String, s.instance)
	if f == nil {
		return nil, nil, false
	}
	return f.Reader(), s.pg.release, !notDone
}

// PassageFileCurrent reports whether the passage graph calls are answered
// from the file now: there is one, of the store's current graph version,
// and it reads sound. A server can then leave the graph in the file rather
// than copy it into its heap (retrieve.WithPassageSnapshot).
func (s *Store) PassageFileCurrent(ctx context.Context) bool {
	r, release, _ := s.passageReader(ctx)
	if r == nil {
		return false
	}
	release()
	return true
}

// fileHubCount is what the statements say of a hub in n chunks: its count
// when every document is done, else one past maxChunks (counting stops).
func fileHubCount(n, maxChunks int, allDone bool) int {
	if allDone || maxChunks <= 0 {
		return n
	}
	return min(n, maxChunks+1)
}

// entityNeighborsFromFile answers EntityNeighbors from the file, or says
// it cannot (no current file, or a damaged one).
func (s *Store) entityNeighborsFromFile(ctx context.Context, keys []int64, maxChunks int) ([]store.EntityNeighbors, bool) {
	r, release, allDone := s.passageReader(ctx)
	if r == nil {
		return nil, false
	}
	defer release()
	out := make([]store.EntityNeighbors, 0, len(keys))
	for _, k := range keys {
		found, n, chunks, err := r.Entity(k, maxChunks)
		if err != nil {
			s.pg.declined.Add(1)
			return nil, false
		}
		if !found {
			continue
		}
		e := store.EntityNeighbors{ID: entityName(k), Chunks: n}
		if chunks == nil {
			e.Chunks = fileHubCount(n, maxChunks, allDone)
		} else {
			e.ChunkList = make([]store.ChunkRef, len(chunks))
			for i, c := range chunks {
				e.ChunkList[i] = store.ChunkRef{ID: c.ID, DocID: c.DocID, DocTitle: c.DocTitle}
			}
		}
		out = append(out, e)
	}
	sortEntityNeighbors(out)
	s.pg.answered.Add(1)
	return out, true
}

// chunkNeighborsFromFile answers ChunkNeighbors from the file, or says it
// cannot.
func (s *Store) chunkNeighborsFromFile(ctx context.Context, ids []string, maxChunks int) ([]store.ChunkNeighbors, bool) {
	r, release, _ := s.passageReader(ctx)
	if r == nil {
		return nil, false
	}
	defer release()
	out := make([]store.ChunkNeighbors, 0, len(ids))
	for _, id := range ids {
		found, c, ents, hubs, err := r.Chunk(id, maxChunks)
		if err != nil {
			s.pg.declined.Add(1)
			return nil, false
		}
		if !found {
			continue
		}
		if len(ents) == 0 && hubs == 0 {
			continue
		}
		n := store.ChunkNeighbors{ChunkRef: store.ChunkRef{ID: c.ID, DocID: c.DocID, DocTitle: c.DocTitle}, Hubs: hubs}
		if len(ents) > 0 {
			n.Entities = make([]string, len(ents))
			for i, k := range ents {
				n.Entities[i] = entityName(k)
			}
		}
		out = append(out, n)
	}
	sortChunkNeighbors(out)
	s.pg.answered.Add(1)
	return out, true
}

// writePassageFile builds the passage graph file from snapshot tx, which
// is at graph version version.
func (s *Store) writePassageFile(ctx context.Context, tx *sql.Tx, version string) error {
	in := pgraph.Input{Version: version, Instance: s.instance}
	docNum := map[string]int{}
	rows, err := tx.QueryContext(ctx, `SELECT id, title FROM documents WHERE status = 'done'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var d pgraph.Doc
		if err := rows.Scan(&d.ID, &d.Title); err != nil {
			rows.Close()
			return err
		}
		docNum[d.ID] = len(in.Docs)
		in.Docs = append(in.Docs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	chunkNum := map[int64]int{}
	rows, err = tx.QueryContext(ctx, `SELECT c.seq, c.id, c.doc_id
		FROM documents d CROSS JOIN chunks c ON c.doc_id = d.id WHERE d.status = 'done'`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var seq int64
		var id, doc string
		if err := rows.Scan(&seq, &id, &doc); err != nil {
			rows.Close()
			return err
		}
		chunkNum[seq] = len(in.Chunks)
		in.Chunks = append(in.Chunks, pgraph.Chunk{ID: id, Doc: docNum[doc]})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT chunk, entity FROM entity_mentions WHERE n = 0`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var chunk, entity int64
		if err := rows.Scan(&chunk, &entity); err != nil {
			rows.Close()
			return err
		}
		if c, ok := chunkNum[chunk]; ok {
			in.Edges = append(in.Edges, pgraph.Edge{Entity: entity, Chunk: c})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := pgraph.Write(s.pg.path, in); err != nil {
		return fmt.Errorf("passage graph file: %w", err)
	}
	return nil
}
