// Package sqlite is docgraph's embedded default store: one SQLite file holding
// documents, chunks, the merged graph, per-chunk provenance, FTS5 indexes and vectors.
//
// Importing it registers the "sqlite" and "file" URL schemes with store.Open.
// It uses modernc.org/sqlite (pure Go, FTS5 compiled in): one write
// connection serialised by a mutex, a small pool of read connections, WAL
// journal so readers never block on the writer and never see a half-applied
// write, and exact cosine search over in-memory copies of the vectors.
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

	"docgraph/store"

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
// (fts.go): a version 1 store is migrated on open, and a docgraph that
// reads only version 1 refuses version 2 rather than index raw text into it.
const schemaVersion = 2

// schema is the whole layout. Every derived row can be rebuilt from the
// mention tables, which is what makes deletes exact.
//
//	meta              key/value: schema_version, instance (random id), embedder_name, embedder_dimension,
//	                  generation (bumped by every write; lets the vector caches
//	                  notice writes made by another process)
//	documents         one row per document id (content hash); status lifecycle
//	chunks            seq (FTS rowid), id, doc_id, idx, text, offsets, embedding
//	chunks_fts        FTS5 contentless index over docgraph_fts(chunks.text) (fts.go)
//	entities          seq (FTS rowid), id, merged name/type/description, mentions, embedding
//	entities_fts      FTS5 contentless index over docgraph_fts(entities.name, .description)
//	relations         id, source_id, target_id, type, merged keywords/description, weight, embedding
//	entity_mentions   one row per (entity, chunk) contribution: name, type, description fragment
//	relation_mentions one row per (relation, chunk) contribution: keywords, description, weight
//	dangling_relations relations with mentions but a missing endpoint entity
//	vector_log        the vectors each of the last generations changed, for other processes' caches
//
// Embeddings are little-endian float32 BLOBs. The writer keeps both FTS
// indexes in step with their tables inside the writing transaction, with one
// set-based statement per write rather than triggers: FTS5 flushes its
// pending terms at every statement that touches it, so per-row triggers
// would turn one book into thousands of tiny index segments. Mentions carry
// doc_id so a document's share is deleted by index; they have no foreign key
// to chunks because the writer deletes them first, and a cascade would cost
// a lookup per deleted chunk.
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
	doc_id    TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
	idx       INTEGER NOT NULL,
	text      TEXT NOT NULL,
	tokens    INTEGER NOT NULL,
	start_off INTEGER NOT NULL,
	end_off   INTEGER NOT NULL,
	embedding BLOB
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id, idx);

CREATE TABLE IF NOT EXISTS entities(
	seq         INTEGER PRIMARY KEY,
	id          TEXT NOT NULL UNIQUE,
	name        TEXT NOT NULL,
	type        TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	mentions    INTEGER NOT NULL DEFAULT 0,
	embedding   BLOB
);

CREATE TABLE IF NOT EXISTS relations(
	id          TEXT PRIMARY KEY,
	source_id   TEXT NOT NULL,
	target_id   TEXT NOT NULL,
	type        TEXT NOT NULL DEFAULT '',
	keywords    TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	weight      REAL NOT NULL DEFAULT 0,
	embedding   BLOB
);
CREATE INDEX IF NOT EXISTS relations_source ON relations(source_id);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target_id);

CREATE TABLE IF NOT EXISTS entity_mentions(
	seq         INTEGER PRIMARY KEY,
	entity_id   TEXT NOT NULL,
	chunk_id    TEXT NOT NULL,
	doc_id      TEXT NOT NULL,
	name        TEXT NOT NULL,
	type        TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS entity_mentions_entity ON entity_mentions(entity_id, chunk_id);
CREATE INDEX IF NOT EXISTS entity_mentions_chunk ON entity_mentions(chunk_id);
CREATE INDEX IF NOT EXISTS entity_mentions_doc ON entity_mentions(doc_id);

CREATE TABLE IF NOT EXISTS relation_mentions(
	seq         INTEGER PRIMARY KEY,
	relation_id TEXT NOT NULL,
	source_id   TEXT NOT NULL,
	target_id   TEXT NOT NULL,
	type        TEXT NOT NULL DEFAULT '',
	chunk_id    TEXT NOT NULL,
	doc_id      TEXT NOT NULL,
	keywords    TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	weight      REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS relation_mentions_relation ON relation_mentions(relation_id, chunk_id);
CREATE INDEX IF NOT EXISTS relation_mentions_doc ON relation_mentions(doc_id);

-- Relations that have mentions but lack an endpoint entity (possible for KG
-- imports): re-examined whenever an entity appears.
CREATE TABLE IF NOT EXISTS dangling_relations(
	id TEXT PRIMARY KEY
) WITHOUT ROWID;

-- Which vectors each write generation changed (veclog.go): one marker row
-- (tbl = '') per generation, then one row per chunk, entity or relation.
CREATE TABLE IF NOT EXISTS vector_log(
	gen INTEGER NOT NULL,
	tbl TEXT NOT NULL,
	id  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS vector_log_gen ON vector_log(gen, tbl, id);
`

// Store is an open SQLite graph store. It is safe for concurrent use; writes
// are serialised.
type Store struct {
	path     string
	merger   store.Merger
	emb      store.EmbedderInfo
	instance string // random id of this database, made at creation

	writeMu sync.Mutex
	wdb     *sql.DB // exactly one connection: SQLite has one writer anyway

	retryBudget      time.Duration
	commits, retries atomic.Int64
	rdb              *sql.DB // read-only pool; WAL gives each read a consistent snapshot

	chunkVecs    *vecIndex
	entityVecs   *vecIndex
	relationVecs *vecIndex

	// mentionsFile is the ScanMentions sidecar (mentionfile.go); "" for
	// none. mentionFileHits counts scans it served, for tests.
	mentionsFile    string
	mentionFileHits atomic.Int64

	// docColumns is what document reads select: documentColumns, or for a
	// read-only store from before leases, the same with no lease.
	docColumns string
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.BatchWriter  = (*Store)(nil)
	_ store.WriteCounter = (*Store)(nil)
)

// sqliteReadOnly is SQLITE_READONLY, the primary result code of a write
// to a file that cannot be written.
const sqliteReadOnly = 8

// readers is the size of the read pool; the machine docgraph targets has few
// cores and the scans that matter run in memory.
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
	s := &Store{path: path, merger: opts.Merger, emb: opts.Embedder, retryBudget: opts.RetryBudget}
	if s.retryBudget <= 0 {
		s.retryBudget = store.DefaultRetryBudget
	}
	var err error
	s.wdb, err = sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if err := s.initRetrying(ctx); err != nil {
		s.wdb.Close()
		if primaryCode(err) == sqliteReadOnly {
			return nil, fmt.Errorf("%w (no write permission here; reading it needs no write access: query, ingest status)", err)
		}
		return nil, err
	}
	s.rdb, err = sql.Open("sqlite", dsn(path, false))
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
	s.initCaches()
	return s, nil
}

// initCaches sets up the in-memory vector indexes and their sidecar files.
func (s *Store) initCaches() {
	path := s.path
	s.chunkVecs = tableVecIndex("chunks", "doc_id")
	s.entityVecs = tableVecIndex("entities", "''")
	s.relationVecs = tableVecIndex("relations", "''")
	if path != ":memory:" && !strings.HasPrefix(path, "file::memory:") {
		for _, x := range []*vecIndex{s.chunkVecs, s.entityVecs, s.relationVecs} {
			x.file, x.instance = path+".vec-"+x.table, s.instance
		}
		s.mentionsFile = path + ".mentions"
	}
}

// tableVecIndex is the index of table's embeddings; docCol is the column
// naming a row's document, or the empty SQL string for rows of no one
// document. Its two queries differ only in reading the embedding or its
// length.
func tableVecIndex(table, docCol string) *vecIndex {
	sel := func(vec string) string {
		return `SELECT id, ` + docCol + `, ` + vec + ` FROM ` + table + ` WHERE embedding IS NOT NULL`
	}
	x := newVecIndex(table, sel("embedding"))
	x.sizes = sel("length(embedding)")
	return x
}

// openReadOnly opens an existing store without writing anything: no
// schema, no meta, no journal. Both pools are read-only connections
// (mode=ro), so a write fails instead of changing the file. When the
// folder is not writable and no write-ahead log is there, SQLite could
// not create its shared-memory index, so the file is opened immutable:
// no locks, no -shm or -wal; nobody can be writing it then, since a writer
// would need that log file. Sidecar caches are still written when the
// folder allows it (they are caches, not the store).
func openReadOnly(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	immutable := false
	if _, err := os.Stat(path + "-wal"); errors.Is(err, os.ErrNotExist) && !store.WritableDir(filepath.Dir(path)) {
		immutable = true
	}
	s := &Store{path: path, merger: opts.Merger, emb: opts.Embedder}
	var err error
	if s.rdb, err = sql.Open("sqlite", readOnlyDSN(path, immutable)); err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s.rdb.SetMaxOpenConns(readers)
	s.rdb.SetMaxIdleConns(readers)
	s.rdb.SetConnMaxIdleTime(0)
	if s.wdb, err = sql.Open("sqlite", readOnlyDSN(path, immutable)); err != nil {
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
	// A store an older docgraph wrote lacks columns and full-text indexes
	// only a writer can add.
	missing, err := missingColumns(ctx, s.rdb)
	if err == nil && len(missing) > 0 && leaseColumnsOnly(missing) {
		// Leases only matter to writers: read as if none is held.
		s.docColumns, missing = documentColumnsNoLease, nil
	}
	if err == nil && len(missing) > 0 {
		err = fmt.Errorf("written by an older docgraph (no %s.%s column): run ingest on it once with write access to upgrade it", missing[0].table, missing[0].column)
	}
	if err == nil && meta["fts"] != ftsVersion {
		err = fmt.Errorf("written by an older docgraph (full-text indexes of another kind): run ingest on it once with write access to upgrade it")
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	s.initCaches()
	return s, nil
}

// readOnlyDSN is dsn for a read-only open, always as a file: URI (mode and
// immutable are URI parameters).
func readOnlyDSN(path string, immutable bool) string {
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
	q.Add("_pragma", "cache_size(-32000)")
	q.Add("_pragma", "mmap_size(268435456)")
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
// upgrade; readers are query_only as a guard.
func dsn(path string, writer bool) string {
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
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "temp_store(MEMORY)")
	q.Add("_pragma", "cache_size(-32000)")
	if writer {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
		q.Add("_pragma", "mmap_size(268435456)")
	}
	return name + "?" + q.Encode()
}

// initRetrying runs init again while it fails busy, within the retry
// budget: two processes opening a new store at once can meet SQLITE_BUSY
// without the busy timeout's wait as the first one sets the file up.
func (s *Store) initRetrying(ctx context.Context) error {
	return retryBusy(ctx, s.retryBudget, func() error { return s.init(ctx) }, func() {})
}

// init creates the schema and checks (or records) the embedder.
func (s *Store) init(ctx context.Context) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("sqlite store %s: create schema: %w", s.path, err)
	}
	if err := addColumns(ctx, tx); err != nil {
		return fmt.Errorf("sqlite store %s: upgrade schema: %w", s.path, err)
	}
	meta, err := readMeta(ctx, tx)
	if err != nil {
		return fmt.Errorf("sqlite store %s: read meta: %w", s.path, err)
	}
	set, err := s.checkMeta(meta)
	if err != nil {
		return err
	}
	// After the embedder check: a store that will be refused is not rebuilt.
	if rebuilt, err := ensureFTS(ctx, tx, meta["fts"]); err != nil {
		return fmt.Errorf("sqlite store %s: %w", s.path, err)
	} else if rebuilt {
		set["fts"] = ftsVersion
	}
	for k, v := range set {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return fmt.Errorf("sqlite store %s: write meta: %w", s.path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite store %s: %w", s.path, err)
	}
	return nil
}

// checkMeta checks the schema version and the embedder against meta,
// adopting the held embedder when none was asked for, and returns the meta
// values a writable open records.
func (s *Store) checkMeta(meta map[string]string) (map[string]string, error) {
	if v, ok := meta["schema_version"]; ok {
		// Version 1 differs only in its FTS indexes, which ensureFTS rebuilds.
		if n, _ := strconv.Atoi(v); n != schemaVersion && n != 1 {
			return nil, fmt.Errorf("sqlite store %s: schema version %s, this docgraph reads versions 1 to %d: re-ingest into a new --store path", s.path, v, schemaVersion)
		}
	}
	set := map[string]string{"schema_version": strconv.Itoa(schemaVersion)}
	if _, ok := meta["generation"]; !ok {
		set["generation"] = "0"
	}
	// instance tells this database from another created later at the same
	// path, so a vector sidecar left behind by the old one is never used.
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

type addedColumn struct{ table, column, ddl string }

// addedColumns are columns added to tables after schema version 1 was
// released; a store made before them gets them on open. Their defaults keep
// what older versions wrote meaningful (no file key: read the file again).
var addedColumns = []addedColumn{
	{"documents", "file_key", `ALTER TABLE documents ADD COLUMN file_key TEXT NOT NULL DEFAULT ''`},
	{"documents", "warnings", `ALTER TABLE documents ADD COLUMN warnings TEXT NOT NULL DEFAULT '[]'`},
	{"documents", "lease_owner", `ALTER TABLE documents ADD COLUMN lease_owner TEXT NOT NULL DEFAULT ''`},
	{"documents", "lease_until", `ALTER TABLE documents ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0`},
}

func addColumns(ctx context.Context, tx *sql.Tx) error {
	missing, err := missingColumns(ctx, tx)
	if err != nil {
		return err
	}
	for _, c := range missing {
		if _, err := tx.ExecContext(ctx, c.ddl); err != nil {
			return fmt.Errorf("add %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}

// leaseColumnsOnly reports whether the missing columns are the lease's.
func leaseColumnsOnly(missing []addedColumn) bool {
	for _, c := range missing {
		if c.table != "documents" || (c.column != "lease_owner" && c.column != "lease_until") {
			return false
		}
	}
	return true
}

// missingColumns lists the addedColumns a store lacks.
func missingColumns(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]addedColumn, error) {
	have := map[string]bool{}
	var missing []addedColumn
	for _, c := range addedColumns {
		if !have[c.table+".*"] {
			if err := collect(ctx, q, have, `SELECT ?1 || '.' || name FROM pragma_table_info(?1)`, c.table); err != nil {
				return nil, err
			}
			have[c.table+".*"] = true
		}
		if !have[c.table+"."+c.column] {
			missing = append(missing, c)
		}
	}
	return missing, nil
}

// Embedder reports which embedder's vectors the store holds.
func (s *Store) Embedder() store.EmbedderInfo { return s.emb }

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close checkpoints the WAL, closes all connections and drops the vector
// indexes.
func (s *Store) Close() error {
	var errs []error
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.wdb != nil {
		s.writeMu.Lock()
		// Fold the WAL back so the database is one self-contained file at rest.
		s.wdb.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		errs = append(errs, s.wdb.Close())
		s.writeMu.Unlock()
	}
	for _, x := range []*vecIndex{s.chunkVecs, s.entityVecs, s.relationVecs} {
		x.close() // unmaps the sidecars
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite store %s: close: %w", s.path, err)
	}
	return nil
}
