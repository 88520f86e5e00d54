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
const schemaVersion = 1

// schema is the whole layout. Every derived row can be rebuilt from the
// mention tables, which is what makes deletes exact.
//
//	meta              key/value: schema_version, instance (random id), embedder_name, embedder_dimension,
//	                  generation (bumped by every write; lets the vector caches
//	                  notice writes made by another process)
//	documents         one row per document id (content hash); status lifecycle
//	chunks            seq (FTS rowid), id, doc_id, idx, text, offsets, embedding
//	chunks_fts        FTS5 external-content index over chunks.text
//	entities          seq (FTS rowid), id, merged name/type/description, mentions, embedding
//	entities_fts      FTS5 external-content index over entities.name, description
//	relations         id, source_id, target_id, type, merged keywords/description, weight, embedding
//	entity_mentions   one row per (entity, chunk) contribution: name, type, description fragment
//	relation_mentions one row per (relation, chunk) contribution: keywords, description, weight
//	dangling_relations relations with mentions but a missing endpoint entity
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
	chunks      INTEGER NOT NULL DEFAULT 0
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

CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
	text, content='chunks', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2');

CREATE TABLE IF NOT EXISTS entities(
	seq         INTEGER PRIMARY KEY,
	id          TEXT NOT NULL UNIQUE,
	name        TEXT NOT NULL,
	type        TEXT NOT NULL DEFAULT '',
	description TEXT NOT NULL DEFAULT '',
	mentions    INTEGER NOT NULL DEFAULT 0,
	embedding   BLOB
);

CREATE VIRTUAL TABLE IF NOT EXISTS entities_fts USING fts5(
	name, description, content='entities', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2');

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
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.BatchWriter  = (*Store)(nil)
	_ store.WriteCounter = (*Store)(nil)
)

// readers is the size of the read pool; the machine docgraph targets has few
// cores and the scans that matter run in memory.
const readers = 4

// Open opens (creating if needed, with parent directories) the store at path.
// It refuses a store whose vectors were made by another embedder.
func Open(ctx context.Context, path string, opts store.Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite store: empty path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite store %s: create directory: %w", path, err)
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
	if err := s.init(ctx); err != nil {
		s.wdb.Close()
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
	s.chunkVecs = newVecIndex("chunks", `SELECT id, doc_id, embedding FROM chunks WHERE embedding IS NOT NULL`)
	s.entityVecs = newVecIndex("entities", `SELECT id, '', embedding FROM entities WHERE embedding IS NOT NULL`)
	s.relationVecs = newVecIndex("relations", `SELECT id, '', embedding FROM relations WHERE embedding IS NOT NULL`)
	if path != ":memory:" && !strings.HasPrefix(path, "file::memory:") {
		for _, x := range []*vecIndex{s.chunkVecs, s.entityVecs, s.relationVecs} {
			x.file, x.instance = path+".vec-"+x.table, s.instance
		}
		s.mentionsFile = path + ".mentions"
	}
	return s, nil
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
	meta := map[string]string{}
	rows, err := tx.QueryContext(ctx, `SELECT key, value FROM meta`)
	if err != nil {
		return fmt.Errorf("sqlite store %s: read meta: %w", s.path, err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite store %s: read meta: %w", s.path, err)
		}
		meta[k] = v
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite store %s: read meta: %w", s.path, err)
	}

	if v, ok := meta["schema_version"]; ok {
		n, _ := strconv.Atoi(v)
		if n != schemaVersion {
			return fmt.Errorf("sqlite store %s: schema version %s, this docgraph reads version %d: re-ingest into a new --store path", s.path, v, schemaVersion)
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
			return fmt.Errorf("sqlite store %s holds vectors of embedder %s (dimension %d), not %s (dimension %d): run with --embedder %s, or use a new --store path to re-ingest with %s: %w",
				s.path, held.Name, held.Dimension, s.emb.Name, s.emb.Dimension, held.Name, s.emb.Name, store.ErrEmbedderMismatch)
		}
	} else if s.emb != (store.EmbedderInfo{}) {
		set["embedder_name"] = s.emb.Name
		set["embedder_dimension"] = strconv.Itoa(s.emb.Dimension)
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
