// Package sqlite is docgraph's embedded default store: one SQLite file holding
// documents, chunks, the merged graph, per-chunk provenance, FTS5 indexes and vectors.
//
// Importing it registers the "sqlite" and "file" URL schemes with store.Open.
// It uses modernc.org/sqlite (pure Go, FTS5 compiled in): one write
// connection serialised by a mutex, a small pool of read connections, WAL
// journal so readers never block on the writer and never see a half-applied
// write. Vector search goes through approximate nearest-neighbour index files
// beside the database (store/ann), kept up to date from the vector log.
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docgraph/docgraph/store"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

func init() {
	store.Register(func(ctx context.Context, u *url.URL, opts store.Options) (store.Store, error) {
		s, err := Open(ctx, store.SQLitePath(u), opts)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return s, nil
	}, "sqlite", "file")
}

// schemaVersion is bumped whenever the schema below changes incompatibly.
// Version 2 made the FTS indexes contentless indexes of derived text
// (fts.go). Version 3 made the store compact: integer keys, each vector
// kept once in a compact encoding (vecenc.go) instead of in its row and in
// sidecar caches, description fragments kept as offsets into their chunk's
// text (frag.go), counts that let a re-merge read only the first mentions
// of an entity, and ANN index files. A version 2 store is migrated on open
// by a writer (migrate.go); a reader asks for that.
const schemaVersion = 3

// SchemaVersion is the layout version this package writes and reads; an
// older store is migrated by the first writer that opens it.
const SchemaVersion = schemaVersion

// schema is the whole layout. Every derived row can be rebuilt from the
// mention tables, which is what makes deletes exact.
//
//	meta              key/value: schema_version, instance (random id), embedder_name, embedder_dimension,
//	                  generation (bumped by every write), next_chunk (the next chunk seq)
//	documents         one row per document id (content hash); status lifecycle
//	chunks            seq (FTS rowid, vector key, what mentions name), id, doc_id, idx, text, offsets,
//	                  ord (its place in chunk-id order, for merges)
//	chunks_fts        FTS5 contentless index over docgraph_fts(chunks.text) (fts.go)
//	entities          seq (FTS rowid, vector key), id (the entity id's 64 bits, ids.go), merged
//	                  name/type/description
//	entity_counts     seq, mentions (distinct chunks), counts of every mention's name and type
//	entities_fts      FTS5 contentless index over docgraph_fts(entities.name, .description)
//	relations         seq (vector key), id, source, target (entity ids), type, merged keywords/description,
//	                  weight, mention rows
//	entity_mentions   one row per (entity, chunk) contribution, name, type, description fragment
//	                  (frag.go), indexed by entity in chunk-id order and by chunk
//	relation_mentions one row per (relation, chunk) contribution: endpoints, type, keywords, fragment, weight
//	dangling_relations relations with mentions but a missing endpoint entity
//	vectors           (kind, seq): each chunk's vector, and each entity's and relation's unless the
//	                  embedder makes them again at will (store.Reembedder), once (vecenc.go)
//	vector_log        (generation, kind, seq) of every vector a write changed, which the ANN index
//	                  files catch up from (annindex.go)
//
// Rows are appended in the order they are written (sequential keys), and
// only small indexes take the random keys of entity and relation ids: a
// write transaction then dirties few pages besides those it appends, which
// is what keeps the bytes a bulk ingest writes near the size of the store.
//
// Mentions name their chunk by seq and are deleted through the chunks of
// the documents that go; they have no foreign keys, as a cascade would cost
// a lookup per deleted row. The writer keeps both FTS indexes in step with
// their tables inside the writing transaction, with set-based statements
// rather than triggers: FTS5 flushes its pending terms at every statement
// that touches it, so per-row triggers would make thousands of tiny segments.
const schema = `
CREATE TABLE IF NOT EXISTS meta(
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS documents(
	id          TEXT PRIMARY KEY,
	path        TEXT NOT NULL,
	title       TEXT NOT NULL DEFAULT '',
	hash        TEXT NOT NULL DEFAULT '',
	format      TEXT NOT NULL DEFAULT '',
	fingerprint TEXT NOT NULL DEFAULT '',
	status      TEXT NOT NULL,
	error       TEXT NOT NULL DEFAULT '',
	size        INTEGER NOT NULL DEFAULT 0,
	mod_time    INTEGER NOT NULL DEFAULT 0, -- unix nanoseconds, 0 = unknown
	updated_at  INTEGER NOT NULL DEFAULT 0, -- unix nanoseconds
	chunks      INTEGER NOT NULL DEFAULT 0,
	file_key    TEXT NOT NULL DEFAULT '',
	warnings    TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
	lease_owner TEXT NOT NULL DEFAULT '', -- the run building it (Claim), '' for none
	lease_until INTEGER NOT NULL DEFAULT 0 -- unix nanoseconds the lease expires
);
CREATE INDEX IF NOT EXISTS documents_path ON documents(path);
CREATE INDEX IF NOT EXISTS documents_status ON documents(status);

CREATE TABLE IF NOT EXISTS chunks(
	seq       INTEGER PRIMARY KEY,
	id        TEXT NOT NULL UNIQUE,
	doc_id    TEXT NOT NULL,
	idx       INTEGER NOT NULL,
	text      TEXT NOT NULL,
	tokens    INTEGER NOT NULL,
	start_off INTEGER NOT NULL,
	end_off   INTEGER NOT NULL,
	ord       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, idx);

CREATE TABLE IF NOT EXISTS entities(
	seq         INTEGER PRIMARY KEY,
	id          INTEGER NOT NULL UNIQUE,
	name        TEXT NOT NULL,
	type        TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT ''
);

-- What every new mention of an entity changes, kept apart from the wide
-- entity row: an entity named again only moves its counts, and a write
-- then dirties the pages of this narrow table rather than of the texts.
CREATE TABLE IF NOT EXISTS entity_counts(
	seq      INTEGER PRIMARY KEY,
	mentions INTEGER NOT NULL, -- distinct chunks
	names    TEXT NOT NULL,    -- counts of every mention's name (JSON)
	types    TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS relations(
	seq         INTEGER PRIMARY KEY,
	id          INTEGER NOT NULL UNIQUE,
	source      INTEGER NOT NULL,
	target      INTEGER NOT NULL,
	type        TEXT NOT NULL DEFAULT '',
	keywords    TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	weight      REAL NOT NULL DEFAULT 0,
	mentions    INTEGER NOT NULL DEFAULT 0 -- mention rows
);
CREATE INDEX IF NOT EXISTS relations_source ON relations(source);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target);

CREATE TABLE IF NOT EXISTS entity_mentions(
	entity INTEGER NOT NULL,
	ord    INTEGER NOT NULL,
	chunk  INTEGER NOT NULL,
	n      INTEGER NOT NULL, -- 0, or which repeat of (entity, chunk) in one write
	name   TEXT NOT NULL,
	type   TEXT NOT NULL,
	frag   BLOB
);
-- Both cover the passage graph's reads (neighborhood.go): an entity's
-- first mentions' chunks, a chunk's entities, with no row read, which
-- took a fifth off a one-shot query at x4. They replace narrower indexes
-- of the same purpose that stores written before them are upgraded from
-- when next opened for writing.
CREATE INDEX IF NOT EXISTS entity_mentions_by_entity ON entity_mentions(entity, ord, n, chunk);
CREATE INDEX IF NOT EXISTS entity_mentions_by_chunk ON entity_mentions(chunk, n, entity);
DROP INDEX IF EXISTS entity_mentions_entity;
DROP INDEX IF EXISTS entity_mentions_chunk;

CREATE TABLE IF NOT EXISTS relation_mentions(
	relation INTEGER NOT NULL,
	ord      INTEGER NOT NULL,
	chunk    INTEGER NOT NULL,
	n        INTEGER NOT NULL,
	source   INTEGER NOT NULL,
	target   INTEGER NOT NULL,
	type     TEXT NOT NULL,
	keywords TEXT NOT NULL,
	frag     BLOB,
	weight   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS relation_mentions_relation ON relation_mentions(relation, ord);
CREATE INDEX IF NOT EXISTS relation_mentions_chunk ON relation_mentions(chunk);

-- Relations that have mentions but lack an endpoint entity (possible for KG
-- imports): re-examined whenever an entity appears.
CREATE TABLE IF NOT EXISTS dangling_relations(
	id INTEGER PRIMARY KEY
);

CREATE TABLE IF NOT EXISTS vectors(
	kind INTEGER NOT NULL, -- 0 chunk, 1 entity, 2 relation: the row's seq
	id   INTEGER NOT NULL,
	vec  BLOB NOT NULL,
	PRIMARY KEY(kind, id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS vector_log(
	gen  INTEGER NOT NULL,
	kind INTEGER NOT NULL,
	id   INTEGER NOT NULL,
	PRIMARY KEY(gen, kind, id)
) WITHOUT ROWID;

-- meta done_moves counts documents entering or leaving 'done' (whoever
-- writes: these live in the file), so the graph version is two key reads
-- rather than a count of the done documents, which every query made: 3-4
-- ms at x4, growing with the shelf.
CREATE TRIGGER IF NOT EXISTS documents_done_in AFTER INSERT ON documents WHEN new.status = 'done'
BEGIN UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'done_moves'; END;
CREATE TRIGGER IF NOT EXISTS documents_done_moved AFTER UPDATE OF status ON documents
	WHEN (old.status = 'done') <> (new.status = 'done')
BEGIN UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'done_moves'; END;
CREATE TRIGGER IF NOT EXISTS documents_done_out AFTER DELETE ON documents WHEN old.status = 'done'
BEGIN UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'done_moves'; END;
`

// Store is an open SQLite graph store. It is safe for concurrent use; writes
// are serialised.
type Store struct {
	path     string
	merger   store.Merger
	emb      store.EmbedderInfo
	instance string // random id of this database, made at creation
	readOnly bool

	writeMu sync.Mutex
	wdb     *sql.DB // exactly one connection: SQLite has one writer anyway

	retryBudget      time.Duration
	commits, retries atomic.Int64
	rdb              *sql.DB // read-only pool; WAL gives each read a consistent snapshot

	ann   *annSet
	pg    *passageFile // nil for a store in memory
	terms termCache    // term counts of full-text queries
	// allTerms keeps common terms in full-text queries (tests measure
	// what leaving them out costs).
	allTerms bool
	// sizeRows is about how many rows the store holds, read at sizeAt
	// (PreferredGroupRows).
	sizeMu   sync.Mutex
	sizeRows int64
	sizeAt   time.Time

	// reembed makes entity and relation vectors again when the merger can
	// (store.Reembedder); the store then keeps none of them.
	reembed store.Reembedder

	// claimStmts are Claim's statements, prepared once on the writer: an
	// ingest claims every document, and parsing the statements anew each
	// time was a third of what a claim cost.
	claimMu    sync.Mutex
	claimStmts [2]*sql.Stmt
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.BatchWriter  = (*Store)(nil)
	_ store.BatchClaimer = (*Store)(nil)
	_ store.WriteCounter = (*Store)(nil)
)

// sqliteReadOnly is SQLITE_READONLY, the primary result code of a write
// to a file that cannot be written.
const sqliteReadOnly = 8

// readers is the size of the read pool: a served query runs its searches
// in parallel, a few at a time on the few cores docgraph targets.
const readers = 4

// Open opens (creating if needed, with parent directories) the store at path.
// It refuses a store whose vectors were made by another embedder.
func Open(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite store: empty path")
	}
	if opts.ReadOnly {
		return openReadOnly(ctx, path, opts)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite store %s: create directory: %w", path, err)
		}
		if path != ":memory:" && !strings.HasPrefix(path, "file:") && !store.WritableDir(dir) {
			return nil, fmt.Errorf("sqlite store %s: its folder cannot be written (no permission, or a read-only mount), and a writer needs its journal there; reading it needs no write access: query, ingest status", path)
		}
	}
	s := &Store{path: path, emb: opts.Embedder, retryBudget: opts.RetryBudget, reembed: reembedderOf(opts.Merger)}
	s.merger = mergerFor(opts.Merger, s.reembed)
	if s.retryBudget <= 0 {
		s.retryBudget = store.DefaultRetryBudget
	}
	var err error
	s.wdb, err = sql.Open("sqlite", dsn(path, true, 0))
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	migrated, err := s.initRetrying(ctx)
	if err != nil {
		s.wdb.Close()
		if primaryCode(err) == sqliteReadOnly {
			return nil, fmt.Errorf("%w (no write permission here; reading it needs no write access: query, ingest status)", err)
		}
		return nil, err
	}
	if migrated {
		if err := s.afterMigration(ctx); err != nil {
			s.wdb.Close()
			return nil, err
		}
	}
	s.rdb, err = sql.Open("sqlite", dsn(path, false, readerMap(opts)))
	if err != nil {
		s.wdb.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s.rdb.SetMaxOpenConns(readers)
	s.rdb.SetMaxIdleConns(readers)
	s.rdb.SetConnMaxIdleTime(0)
	if err := s.rdb.PingContext(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite store %s: open readers: %w", path, err)
	}
	if err := s.openIndexes(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// reembedderOf is m when it can make merged vectors again, else nil.
func reembedderOf(m store.Merger) store.Reembedder {
	if r, ok := m.(store.Reembedder); ok && r.Reproducible() {
		return r
	}
	return nil
}

// mergerFor is the merger a store uses: one that makes no vectors when
// the store keeps none and the merger can leave them out (merging embedded
// every changed entity and relation on the writer, only for the vector to
// be dropped and made again when indexed), else m.
func mergerFor(m store.Merger, re store.Reembedder) store.Merger {
	if vm, ok := re.(store.VectorlessMerger); ok {
		return vm.WithoutVectors()
	}
	return m
}

// openIndexes sets up the ANN index files, and has a writer bring them up
// to date when they lag.
func (s *Store) openIndexes(ctx context.Context) error {
	s.pg = newPassageFile(s)
	s.ann = newANNSet(s)
	s.ann.catchUp(ctx)
	return nil
}

// openReadOnly opens an existing store without writing anything: no
// schema, no meta, no journal. Both pools are read-only connections
// (mode=ro), so a write fails instead of changing the file. When the
// folder is not writable and no write-ahead log is there, SQLite could
// not create its shared-memory index, so the file is opened immutable:
// no locks, no -shm or -wal; nobody can be writing it then, since a writer
// would need that log file.
func openReadOnly(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	immutable := false
	if _, err := os.Stat(path + "-wal"); errors.Is(err, os.ErrNotExist) && !store.WritableDir(filepath.Dir(path)) {
		immutable = true
	}
	s := &Store{path: path, merger: opts.Merger, emb: opts.Embedder, readOnly: true, reembed: reembedderOf(opts.Merger)}
	var err error
	if s.rdb, err = sql.Open("sqlite", readOnlyDSN(path, immutable, readerMap(opts))); err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s.rdb.SetMaxOpenConns(readers)
	s.rdb.SetMaxIdleConns(readers)
	s.rdb.SetConnMaxIdleTime(0)
	if s.wdb, err = sql.Open("sqlite", readOnlyDSN(path, immutable, 0)); err != nil {
		s.rdb.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	meta, err := readMeta(ctx, s.rdb)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite store %s: not a docgraph store, or unreadable: %w", path, err)
	}
	if _, err := s.checkMeta(meta); err != nil {
		s.Close()
		return nil, err
	}
	if v, _ := strconv.Atoi(meta["schema_version"]); v < schemaVersion {
		s.Close()
		return nil, fmt.Errorf("sqlite store %s: written by an older docgraph (schema version %d; this one writes %d): run ingest on it once with write access to upgrade it in place, e.g. ingest status --store sqlite://%s",
			path, v, schemaVersion, path)
	}
	if meta["fts"] != ftsVersion {
		s.Close()
		return nil, fmt.Errorf("sqlite store %s: written by an older docgraph (full-text indexes of another kind): run ingest on it once with write access to upgrade it", path)
	}
	if err := s.openIndexes(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// readerMap is how much of the file each read connection maps. Reads
// through a mapping skip a copy (a one-shot query is a quarter faster than
// unmapped), but a mapped page counts in the process's resident memory once
// per connection that touched it: a server on a 2.3 GB store held 4.1 GB.
// A long-lived process maps the first 128 MB on each of its connections, a
// bound on what the mapping adds to its memory that still covers a small
// store whole.
func readerMap(opts store.Options) int64 {
	if opts.LongLived {
		return 128 << 20
	}
	return 1 << 30
}

// readOnlyDSN is dsn for a read-only open, always as a file: URI (mode and
// immutable are URI parameters); mmap bytes of the file are mapped.
func readOnlyDSN(path string, immutable bool, mmap int64) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	q := url.Values{}
	q.Set("mode", "ro")
	if immutable {
		q.Set("immutable", "1")
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-16000)")
	if mmap > 0 {
		q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", mmap))
	}
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
}

// readMeta reads the meta table.
func readMeta(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]string, error) {
	meta := map[string]string{}
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		meta[k] = v
	}
	return meta, rows.Err()
}

// dsn builds the modernc.org/sqlite data source name. The writer takes its
// lock at BEGIN (immediate) so a transaction never fails half-way on a lock
// upgrade; readers are query_only as a guard, and map the first mmap bytes
// of the file (readerMap).
func dsn(path string, writer bool, mmap int64) string {
	name := path
	if strings.ContainsAny(path, "?#%") {
		// Only a file: URI can carry these characters in a name.
		abs, err := filepath.Abs(path)
		if err == nil {
			name = "file:" + (&url.URL{Path: abs}).EscapedPath()
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "temp_store(MEMORY)")
	if writer {
		// A big page cache keeps a group's pages in memory until commit,
		// and a big WAL before the checkpoint copies a page rewritten by
		// many transactions once: both cut the bytes a bulk ingest writes.
		// A group's inserts land on random pages of every index, so once
		// the indexes outgrow the cache each is read from the file again
		// and a 4x ingest costs more than 4x: 512 MiB rather than 128 took
		// 0.90x the time of an x4 ingest (alternating runs). SQLite fills
		// the cache only with pages it reads, so a store smaller than that
		// holds no more than before.
		q.Add("_pragma", "cache_size(-524288)")
		q.Add("_pragma", "journal_mode(WAL)")
		// A checkpoint copies each page the WAL holds once, however many
		// commits rewrote it: a WAL of up to 4 GiB (1 GiB before) took an
		// x16 ingest from 2.87x to 2.61x its store in bytes written, for a
		// few percent more CPU (a reader looks a page up in a longer
		// WAL index) and that much disk while the ingest runs; the WAL is
		// truncated when the store closes.
		q.Add("_pragma", "wal_autocheckpoint(1048576)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "cache_size(-16000)")
		q.Add("_pragma", "query_only(1)")
		if mmap > 0 {
			q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", mmap))
		}
	}
	return name + "?" + q.Encode()
}

// initRetrying runs init again while it fails busy, within the retry
// budget: two processes opening a new store at once can meet SQLITE_BUSY
// without the busy timeout's wait as the first one sets the file up.
func (s *Store) initRetrying(ctx context.Context) (migrated bool, err error) {
	err = retryBusy(ctx, s.retryBudget, func() error {
		var err error
		migrated, err = s.init(ctx)
		return err
	}, func() {})
	return migrated, err
}

// init creates the schema, upgrades an older store in place, and checks
// (or records) the embedder.
func (s *Store) init(ctx context.Context) (migrated bool, err error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	defer tx.Rollback()
	var hasMeta int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&hasMeta); err != nil {
		return false, fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	meta := map[string]string{}
	if hasMeta > 0 {
		if meta, err = readMeta(ctx, tx); err != nil {
			return false, fmt.Errorf("sqlite store %s: read meta: %w", s.path, err)
		}
	}
	set, err := s.checkMeta(meta)
	if err != nil {
		return false, err
	}
	// After the embedder check: a store that will be refused is not changed.
	if v, _ := strconv.Atoi(meta["schema_version"]); hasMeta > 0 && v < schemaVersion {
		if err := migrate(ctx, tx, v, s.reembed != nil); err != nil {
			return false, fmt.Errorf("sqlite store %s: upgrade from schema version %d: %w", s.path, v, err)
		}
		migrated = true
		// The copy is a write of its own, and the vector log, made anew,
		// lists none of the vectors it copied: the log's floor goes to
		// the new generation, so that an index file of an older one (or
		// an empty file still being built) is passed over for an exact
		// scan rather than searched with the log standing in for
		// vectors it does not name.
		g, _ := strconv.ParseInt(meta["generation"], 10, 64)
		set["generation"] = strconv.FormatInt(g+1, 10)
		set["vector_log_floor"] = set["generation"]
	} else if _, err := tx.ExecContext(ctx, schema); err != nil {
		return false, fmt.Errorf("sqlite store %s: create schema: %w", s.path, err)
	}
	if rebuilt, err := ensureFTS(ctx, tx, meta["fts"]); err != nil {
		return false, fmt.Errorf("sqlite store %s: %w", s.path, err)
	} else if rebuilt || migrated {
		set["fts"] = ftsVersion
	}
	if _, ok := meta["next_chunk"]; !ok || migrated {
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM chunks`).Scan(&next); err != nil {
			return false, fmt.Errorf("sqlite store %s: %w", s.path, err)
		}
		set["next_chunk"] = strconv.FormatInt(next, 10)
	}
	for k, v := range set {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return false, fmt.Errorf("sqlite store %s: write meta: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	return migrated, nil
}

// checkMeta checks the schema version and the embedder against meta,
// adopting the held embedder when none was asked for, and returns the meta
// values a writable open records.
func (s *Store) checkMeta(meta map[string]string) (map[string]string, error) {
	if v, ok := meta["schema_version"]; ok {
		if n, _ := strconv.Atoi(v); n < 1 || n > schemaVersion {
			return nil, fmt.Errorf("sqlite store %s: schema version %s, this docgraph reads versions 1 to %d: re-ingest into a new --store path", s.path, v, schemaVersion)
		}
	}
	set := map[string]string{"schema_version": strconv.Itoa(schemaVersion)}
	if _, ok := meta["generation"]; !ok {
		set["generation"] = "0"
	}
	if _, ok := meta["done_moves"]; !ok {
		set["done_moves"] = "0"
	}
	// instance tells this database from another created later at the same
	// path, so an index file left behind by the old one is never used.
	s.instance = meta["instance"]
	if s.instance == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		s.instance = hex.EncodeToString(b[:])
		set["instance"] = s.instance
	}

	if name, ok := meta["embedder_name"]; ok {
		dim, _ := strconv.Atoi(meta["embedder_dimension"])
		held := store.EmbedderInfo{Name: name, Dimension: dim}
		switch {
		case s.emb == (store.EmbedderInfo{}):
			// Opened only to read or manage documents: adopt what the store holds.
			s.emb = held
		case s.emb != held:
			return nil, fmt.Errorf("sqlite store %s %w", s.path, &store.EmbedderMismatchError{Held: held, Want: s.emb, Instead: "use a new --store path"})
		}
	} else if s.emb != (store.EmbedderInfo{}) {
		set["embedder_name"] = s.emb.Name
		set["embedder_dimension"] = strconv.Itoa(s.emb.Dimension)
	}
	return set, nil
}

// Embedder reports which embedder's vectors the store holds.
func (s *Store) Embedder() store.EmbedderInfo { return s.emb }

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close brings the ANN index files and the passage graph file up to date
// (a writer), checkpoints the WAL and closes all connections.
func (s *Store) Close() error {
	var errs []error
	if s.ann != nil {
		errs = append(errs, s.ann.close())
	}
	errs = append(errs, s.pg.close())
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.wdb != nil {
		s.writeMu.Lock()
		if !s.readOnly {
			// Fold the WAL back so the database is one self-contained file at rest.
			s.wdb.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		}
		s.claimMu.Lock()
		for _, st := range s.claimStmts {
			if st != nil {
				st.Close()
			}
		}
		s.claimMu.Unlock()
		errs = append(errs, s.wdb.Close())
		s.writeMu.Unlock()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite store %s: close: %w", s.path, err)
	}
	return nil
}
