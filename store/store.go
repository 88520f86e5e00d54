// Package store defines the graph store contract that every backend honours:
// the rows docgraph persists, one-transaction document writes, and the reads retrieval needs.
package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Status is where a document is in its ingest lifecycle.
type Status string

// The states of a document row.
const (
	// StatusPending is a document queued to be built (watch mode).
	StatusPending Status = "pending"
	// StatusProcessing is a document a run has claimed and is building or
	// writing.
	StatusProcessing Status = "processing"
	// StatusDone is a document whose graph is stored and searchable.
	StatusDone Status = "done"
	// StatusFailed is a document that could not be built; Error says why.
	StatusFailed Status = "failed"
	// StatusDuplicate marks a bare row for a file whose content another
	// document holds (stored once, under the other path). The row keeps the
	// file's key (Document.FileKey) and content hash, so a re-run knows the
	// copy without reading it; it has no chunks and nothing searchable.
	StatusDuplicate Status = "duplicate"
)

// Document is one ingested file. ID is a content hash, so a rename keeps it.
type Document struct {
	ID          string
	Path        string
	Title       string
	Hash        string // full content hash (hex sha256 of the text)
	Format      string // the loader's format (txt, md, pdf, html, docx, ...), or kg for an imported triple file
	Fingerprint string // pipeline settings that produced the chunks and graph
	Status      Status
	Error       string // reason when Status is failed
	Size        int64
	ModTime     time.Time
	// FileKey is the file's size, modification time and (where the
	// platform has one) inode when it was read, or "" when they could not
	// be trusted (the file changed too close to the read). A later run that
	// finds the same key skips the file without reading it.
	FileKey   string
	UpdatedAt time.Time
	Chunks    int
	// Warnings are what loading and building the document reported (pages
	// skipped, text recovered with loss), one line each.
	Warnings []string
	// LeaseOwner is the ingest run that has claimed the document (Claim)
	// and is building it, until LeaseUntil; "" when no run holds it.
	LeaseOwner string
	LeaseUntil time.Time
}

// Leased reports whether a run other than owner holds an unexpired lease on
// the document at now (by the caller's clock; the store decides claims by its own).
func (d *Document) Leased(owner string, now time.Time) bool {
	return d.LeaseOwner != "" && d.LeaseOwner != owner && d.LeaseUntil.After(now)
}

// Chunk is a token-bounded span of a document: Text == document text[Start:End].
type Chunk struct {
	ID        string
	DocID     string
	Index     int
	Text      string
	Tokens    int
	Start     int
	End       int
	Embedding []float32
}

// Entity is the merged view of every mention of one normalised name.
type Entity struct {
	ID          string
	Name        string
	Type        string
	Description string
	Embedding   []float32
	Mentions    int // number of chunks that mention it
}

// Relation is the merged view of every mention of one entity pair (and type).
type Relation struct {
	ID          string
	SourceID    string
	TargetID    string
	Type        string // fixed relation name for KG imports; empty for extracted relations
	Keywords    string
	Description string
	Weight      float64
	Embedding   []float32
}

// EntityMention is one chunk's contribution to an entity: the MENTIONED_IN edge
// and the description fragment that chunk gave. Keeping fragments per chunk
// is what lets a delete remove exactly one document's share of a merge.
type EntityMention struct {
	EntityID    string
	ChunkID     string
	Name        string
	Type        string
	Description string
}

// RelationMention is one chunk's contribution to a relation.
type RelationMention struct {
	RelationID  string
	SourceID    string
	TargetID    string
	Type        string
	ChunkID     string
	Keywords    string
	Description string
	Weight      float64
}

// DocumentWrite is everything one document contributes to the graph. A store
// applies it in one transaction: readers see the old version or the new one.
type DocumentWrite struct {
	Document  Document
	Chunks    []Chunk
	Entities  []EntityMention
	Relations []RelationMention
	// Replaces lists ids of older documents this one supersedes (same path,
	// different content); they are deleted in the same transaction.
	Replaces []string
}

// Rows is the size of w in rows (the document, its chunks and its entity
// and relation mentions): what write groups and queues of writes count.
func (w *DocumentWrite) Rows() int {
	return 1 + len(w.Chunks) + len(w.Entities) + len(w.Relations)
}

// Merger turns all mentions of an entity or relation into its stored form
// (merged description, majority name and type, weight, embedding). Stores call
// it for every entity and relation a write or delete touched, so merged values
// depend only on which documents are stored, never on the order they came in.
type Merger interface {
	MergeEntities(ctx context.Context, groups [][]EntityMention) ([]Entity, error)
	MergeRelations(ctx context.Context, groups [][]RelationMention) ([]Relation, error)
}

// PrefixMerger is a Merger whose merged text depends only on the first
// mentions of a group in chunk-id order, plus counts over all of them. A
// store that keeps those counts can then re-merge an entity that a
// thousand documents mention by reading its first few mentions, not all
// of them: re-merging stays bounded however often an entity recurs. The
// result must equal MergeEntities (MergeRelations) of the whole group.
type PrefixMerger interface {
	Merger
	// MergeEntityGroups merges each group into an entity. Mentions is a
	// prefix in chunk-id order for which EntityPrefixDone holds (or all of
	// the mentions); the counts cover every mention.
	MergeEntityGroups(ctx context.Context, groups []EntityGroup) ([]Entity, error)
	// MergeRelationGroups is MergeEntityGroups for relations.
	MergeRelationGroups(ctx context.Context, groups []RelationGroup) ([]Relation, error)
	// EntityPrefixDone reports whether these first mentions of an entity,
	// in chunk-id order, fix its merged text, so that later mentions can
	// change only its counts.
	EntityPrefixDone(first []EntityMention) bool
	// RelationPrefixDone is EntityPrefixDone for relations.
	RelationPrefixDone(first []RelationMention) bool
}

// Reembedder is implemented by a Merger that can make the vector of a
// merged entity or relation again from the merged row alone, at any time,
// exactly as it made it: the offline hashing embedder's vectors are a pure
// function of the text. A store may then keep no copy of those vectors and
// make them when it needs them (Reproducible reports whether it may).
type Reembedder interface {
	Reproducible() bool
	EntityVectors(ctx context.Context, es []Entity) ([][]float32, error)
	RelationVectors(ctx context.Context, rs []Relation) ([][]float32, error)
}

// VectorlessMerger is a Reembedder that can merge without making the
// vectors a store that keeps none would throw away: such a store makes
// them again, from the rows, when it reads or indexes them.
type VectorlessMerger interface {
	Reembedder
	// WithoutVectors returns a merger that merges as this one does, except
	// that where this one would set a new Embedding it sets an empty,
	// non-nil one: the vector changed, and is not made.
	WithoutVectors() PrefixMerger
}

// EntityGroup is what a PrefixMerger needs of all mentions of one entity.
type EntityGroup struct {
	ID string
	// Mentions are the first mentions in chunk-id order: all of them, or
	// a prefix that EntityPrefixDone accepts.
	Mentions []EntityMention
	// Names and Types count every mention's name and (non-empty) type;
	// Chunks is the number of distinct chunks mentioning the entity.
	Names  map[string]int
	Types  map[string]int
	Chunks int
	// Stored is the entity as stored before this merge, if any: when its
	// name and description come out unchanged, the merger may leave the
	// result's Embedding nil, meaning "keep the stored vector".
	Stored *Entity
}

// RelationGroup is what a PrefixMerger needs of all mentions of one relation.
type RelationGroup struct {
	ID, SourceID, TargetID, Type string
	// Mentions are the first mentions in chunk-id order, as for EntityGroup.
	Mentions []RelationMention
	// Weight sums every mention's weight (a weight of 0 or less counts 1).
	Weight float64
	// Stored is the relation as stored before this merge, as for EntityGroup.
	Stored *Relation
}

// EmbedderInfo identifies the embedder whose vectors a store holds.
type EmbedderInfo struct {
	Name      string `json:"name"`
	Dimension int    `json:"dimension"`
}

// Spec is the --embedder value that makes these vectors: hash:DIM for the
// offline hashing embedder (named hash-v2), hash-v1:DIM for its earlier
// version, the provider:model name of a provider's embedder as it is.
func (e EmbedderInfo) Spec() string {
	switch e.Name {
	case "hash-v2":
		return fmt.Sprintf("hash:%d", e.Dimension)
	case "hash-v1":
		return fmt.Sprintf("hash-v1:%d", e.Dimension)
	}
	return e.Name
}

// ErrNotFound is returned when a document, chunk or entity does not exist.
var ErrNotFound = errors.New("not found")

// ErrUnavailable wraps failures that say the store itself cannot be
// reached (a server down or unreachable past the retries): no other
// document would fare better, so a run stops rather than fail each one.
var ErrUnavailable = errors.New("store unavailable")

// ErrDiskFull wraps writes that failed for want of space (SQLite's
// SQLITE_FULL): no other document would fit either, so a run stops rather
// than fail each one. What was committed before stays.
var ErrDiskFull = errors.New("disk full")

// DiskFull reports whether err is a write that failed for want of space:
// ErrDiskFull, or the system's ENOSPC.
func DiskFull(err error) bool {
	return errors.Is(err, ErrDiskFull) || errors.Is(err, syscall.ENOSPC)
}

// Fatal reports whether err says that no further write can succeed: the
// store unreachable (ErrUnavailable) or out of space (DiskFull). A run
// stops on it.
func Fatal(err error) bool { return errors.Is(err, ErrUnavailable) || DiskFull(err) }

// ErrClaimed is returned (wrapped in a *ClaimedError) by Claim when another
// run holds an unexpired lease on the document.
var ErrClaimed = errors.New("claimed by another run")

// ErrUpToDate is returned by Claim when the document is already done with
// the fingerprint asked for: another run finished it, nothing is to be built.
var ErrUpToDate = errors.New("already done with these settings")

// ClaimedError says which run holds a document and until when.
type ClaimedError struct {
	ID    string
	Owner string
	Until time.Time
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("document %s is claimed by %s until %s", e.ID, e.Owner, e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrClaimed) hold.
func (e *ClaimedError) Is(target error) bool { return target == ErrClaimed }

// Lease is what Claim asks for: the run claiming, and for how long.
type Lease struct {
	// Owner names the run, unique among all runs on the store (host, pid
	// and a random part).
	Owner string
	// TTL is how long the lease lasts from the claim (or the last renewal),
	// measured by the store's clock.
	TTL time.Duration
	// TakeOver names a run known to be dead (a crashed process on this
	// machine): its lease is taken even before it expires.
	TakeOver string
}

// Check says what makes l unusable for a claim, nil when nothing does.
func (l Lease) Check() error {
	if l.Owner == "" || l.TTL <= 0 {
		return errors.New("a lease needs an owner and a positive duration")
	}
	return nil
}

// ErrEmbedderMismatch is returned when a store is opened with an embedder
// other than the one its vectors were made with.
var ErrEmbedderMismatch = errors.New("embedder mismatch")

// EmbedderMismatchError is the error a backend returns (wrapped) for
// ErrEmbedderMismatch: which embedder the store holds, which was asked for,
// and the advice to paste. Instead is the backend's other way out (a new
// store path, another database).
type EmbedderMismatchError struct {
	Held, Want EmbedderInfo
	Instead    string
}

func (e *EmbedderMismatchError) Error() string {
	return fmt.Sprintf("holds vectors of embedder %s (dimension %d), not %s (dimension %d): run with --embedder %s, or %s to re-ingest with %s",
		e.Held.Name, e.Held.Dimension, e.Want.Name, e.Want.Dimension, e.Held.Spec(), e.Instead, e.Want.Spec())
}

// Is makes errors.Is(err, ErrEmbedderMismatch) hold.
func (e *EmbedderMismatchError) Is(target error) bool { return target == ErrEmbedderMismatch }

// Stats counts what a store holds.
type Stats struct {
	Documents int            `json:"documents"`
	ByStatus  map[Status]int `json:"by_status"`
	Chunks    int            `json:"chunks"`
	Entities  int            `json:"entities"`
	Relations int            `json:"relations"`
	Mentions  int            `json:"mentions"`
	Embedder  EmbedderInfo   `json:"embedder"`
}

// ChunkHit is a chunk with a retrieval score (higher is better).
type ChunkHit struct {
	Chunk
	DocPath  string
	DocTitle string
	Score    float64
}

// EntityHit is an entity with a retrieval score.
type EntityHit struct {
	Entity
	Score float64
}

// RelationHit is a relation with a retrieval score.
type RelationHit struct {
	Relation
	Score float64
}

// Mention links an entity to a chunk it was extracted from.
type Mention struct {
	EntityID string
	ChunkID  string
	DocID    string
}

// Writer is the write side of the contract. Rules every backend follows (the
// conformance suite in store/storetest checks them):
//   - DeleteDocument, RenameDocument, Document and DocumentByPath report
//     ErrNotFound for an unknown id or path;
//   - a document put back into processing or failed leaves search until it is
//     written again;
//   - a relation exists only while both endpoint entities exist, and comes
//     back from its stored fragments when they do;
//   - Stats.Mentions counts distinct (entity, chunk) pairs;
//   - DocumentByPath prefers the done row, then the newest, when several rows
//     share a path (a failure row beside a good version);
//   - a lease (Claim) is cleared by a write of the document, by SetStatus and
//     by ReleaseLease of its owner; it never hides a done document;
//   - writes are safe from several goroutines and several processes at once:
//     transient failures (deadlocks, lock timeouts, a busy file, a lost
//     connection) are retried within Options.RetryBudget, and a store that
//     stays unreachable fails with an error wrapping ErrUnavailable.
type Writer interface {
	// WriteDocument replaces the document with w.Document.ID (and every id in
	// w.Replaces) by w, atomically, and marks it done.
	WriteDocument(ctx context.Context, w *DocumentWrite) error
	// DeleteDocument removes a document, its chunks and mentions, the entities
	// and relations no longer mentioned anywhere, and its share of the rest.
	DeleteDocument(ctx context.Context, id string) error
	// SetStatus records a lifecycle state without touching the graph; it
	// creates a bare document row when none exists.
	SetStatus(ctx context.Context, doc Document, status Status, reason string) error
	// RenameDocument changes a document's path (content unchanged).
	RenameDocument(ctx context.Context, id, path string) error
	// SetFileKey records the file key (Document.FileKey) of a stored
	// document whose file was read again and found unchanged.
	SetFileKey(ctx context.Context, id, key string) error

	// Claim leases the row of doc.ID to lease.Owner for lease.TTL, in one
	// atomic step, so that of several runs (processes, machines) ingesting
	// the same content only one builds it. It returns the row as it was
	// before, nil when there was none. A new row is created bare (no
	// chunks) in processing, as SetStatus makes it; a row that is not done
	// goes to processing, its error cleared; a done row stays done (and
	// searchable) while a new build for other settings is prepared.
	// Nothing changes, and the row is returned, when it is done with
	// doc.Fingerprint (ErrUpToDate), or when another owner than
	// lease.Owner and lease.TakeOver holds a lease that has not expired
	// (a *ClaimedError wrapping ErrClaimed). The holder's own claim renews.
	Claim(ctx context.Context, doc Document, lease Lease) (*Document, error)
	// RenewLeases extends every lease owner holds to ttl from now and
	// says how many rows it renewed: the heartbeat of a run whose
	// documents take long to build.
	RenewLeases(ctx context.Context, owner string, ttl time.Duration) (int, error)
	// ReleaseLease clears owner's lease on document id and changes
	// nothing else; a row leased by another owner, or none, is left alone.
	ReleaseLease(ctx context.Context, id, owner string) error
}

// BatchWriter is implemented by stores that can write several documents in
// one transaction; both built-in backends do. Ingest reaches it through a
// Batcher, the one writer of a run.
type BatchWriter interface {
	// WriteDocuments is WriteDocument for every write in one transaction:
	// all of them are written or none, and a reader sees each document's
	// old version or its new one, never a part. The result equals writing
	// them one by one in any order. No two writes may name the same
	// document (Document.ID or an id in Replaces) or chunk.
	WriteDocuments(ctx context.Context, ws ...*DocumentWrite) error
}

// BatchClaimer is implemented by stores that can claim several documents
// in one transaction; both built-in backends do. A run that builds ahead of
// its claims takes the claims waiting together: claimed one by one, each
// would be a commit of its own, rewriting the documents' pages each time.
type BatchClaimer interface {
	// ClaimDocuments is Claim for each of docs in order, in one
	// transaction: claims[i] is what Claim(ctx, docs[i], lease) returns
	// after the claims before it (the same id twice: the second finds the
	// first's row). err is the transaction's failure; then nothing was
	// claimed and claims is nil.
	ClaimDocuments(ctx context.Context, docs []Document, lease Lease) (claims []ClaimResult, err error)
}

// ClaimOne is Claim through bc's ClaimDocuments, for a backend whose
// Claim is a batch of one.
func ClaimOne(ctx context.Context, bc BatchClaimer, doc Document, lease Lease) (*Document, error) {
	claims, err := bc.ClaimDocuments(ctx, []Document{doc}, lease)
	if err != nil {
		return nil, err
	}
	return claims[0].Before, claims[0].Err
}

// ClaimsOp names a ClaimDocuments call in its errors: "claim ID" for one
// document, "claim N documents" for more.
func ClaimsOp(docs []Document) string {
	if len(docs) == 1 {
		return "claim " + docs[0].ID
	}
	return fmt.Sprintf("claim %d documents", len(docs))
}

// ClaimResult is one document's claim in ClaimDocuments: the row before
// the claim, and the error Claim returns for it (ErrUpToDate, a
// *ClaimedError, a document without an id).
type ClaimResult struct {
	Before *Document
	Err    error
}

// GroupLimiter is implemented by a BatchWriter whose transactions cost more
// per row past a size; a Batcher keeps its groups under that size.
type GroupLimiter interface {
	// MaxGroupRows is the most rows (as BatchOptions.MaxRows counts them)
	// one group should carry, 0 for no limit. A document bigger than that
	// is still written whole, alone.
	MaxGroupRows() int
}

// GroupSizer is implemented by a BatchWriter whose cost per document falls
// as its transactions grow with it: a transaction rewrites every index
// page its writes touch, so a stream of small ones into a big store writes
// the store's indexes over and over. A Batcher writing a stream of
// documents waits (at most BatchOptions.BulkDelay) for this many rows.
type GroupSizer interface {
	// PreferredGroupRows is how many rows (as BatchOptions.MaxRows counts
	// them) a group of a stream should carry.
	PreferredGroupRows() int
}

// Streamer is implemented by stores that keep derived structures (index
// files) which they bring up to date more cheaply once after a stream of
// writes than after each write. A Batcher tells its store when its run
// starts and ends; streams may overlap (two runs in one process).
type Streamer interface {
	StreamStarted()
	StreamEnded()
}

// SpaceReporter is implemented by stores that can say where their bytes
// go: each table, index and file, as `ingest status --space` lists them.
type SpaceReporter interface {
	Space(ctx context.Context) ([]Space, error)
}

// Space is the size of one part of a store.
type Space struct {
	// Name is the table, index or file.
	Name string `json:"name"`
	// Kind is "file" for a file beside the store, else what the part of
	// the database is: "table", "index", "full-text" (the tables of a
	// full-text index), "free" (pages no row uses).
	Kind string `json:"kind"`
	// File is the file the part is in.
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
}

// WriteCounter is implemented by stores that count their write
// transactions, so a run can say how much contention it met.
type WriteCounter interface {
	// WriteStats reports the counts since the store was opened.
	WriteStats() WriteStats
}

// WriteStats counts a store's write transactions.
type WriteStats struct {
	// Commits is how many write transactions committed.
	Commits int64 `json:"commits"`
	// Retries is how many transaction attempts were repeated after a
	// transient failure (deadlock, lock timeout, busy database, lost
	// connection), within Options.RetryBudget.
	Retries int64 `json:"retries"`
}

// Reader is the read side of the contract used by ingest bookkeeping and retrieval.
type Reader interface {
	Document(ctx context.Context, id string) (*Document, error)
	DocumentByPath(ctx context.Context, path string) (*Document, error)
	Documents(ctx context.Context) ([]Document, error)
	Stats(ctx context.Context) (*Stats, error)

	Chunks(ctx context.Context, ids []string) ([]Chunk, error)
	DocumentChunks(ctx context.Context, docID string) ([]Chunk, error)
	// Entities returns the entities with these ids (ids come from
	// graphbuild.EntityID, so a name lookup is an id lookup); missing ids are skipped.
	Entities(ctx context.Context, ids []string) ([]Entity, error)
	Relations(ctx context.Context, ids []string) ([]Relation, error)

	SearchChunks(ctx context.Context, vec []float32, k int) ([]ChunkHit, error)
	SearchChunksText(ctx context.Context, query string, k int) ([]ChunkHit, error)
	SearchEntities(ctx context.Context, vec []float32, k int) ([]EntityHit, error)
	SearchEntitiesText(ctx context.Context, query string, k int) ([]EntityHit, error)
	SearchRelations(ctx context.Context, vec []float32, k int) ([]RelationHit, error)

	// RelationsOf returns the relations touching any of the entities.
	RelationsOf(ctx context.Context, entityIDs []string, limit int) ([]Relation, error)
	// MentionsOf returns the MENTIONED_IN edges of the entities.
	MentionsOf(ctx context.Context, entityIDs []string, limit int) ([]Mention, error)
	// EntitiesOfChunks returns the MENTIONED_IN edges into the chunks.
	EntitiesOfChunks(ctx context.Context, chunkIDs []string) ([]Mention, error)
}

// GraphScanner is implemented by stores that can hand over their whole
// entity-chunk graph (for export; retrieval reads it around a question's
// entities through PassageGraph). Both built-in backends implement it.
type GraphScanner interface {
	// ScanMentions calls fn once for every MENTIONED_IN edge into a chunk of
	// a done document (each entity-chunk pair once), in no particular order.
	// An error from fn stops the scan and is returned.
	ScanMentions(ctx context.Context, fn func(Mention) error) error
	// GraphVersion returns a token that changes whenever a write, delete or
	// status change may have changed what ScanMentions returns, so a cached
	// copy of the graph knows when to reload.
	GraphVersion(ctx context.Context) (string, error)
}

// PassageGraph is implemented by stores that answer the passage graph
// around given nodes, so retrieval can walk it (Personalized PageRank from a
// question's entities) without loading it whole. The passage graph is the
// one ScanMentions hands over: an edge for every entity-chunk pair of a
// MENTIONED_IN edge into a chunk of a done document. Both built-in backends
// implement it; each call is one statement (one round trip to a server)
// and reads one snapshot.
//
// An entity's chunk count is its degree in that graph: the number of
// distinct chunks of done documents it is MENTIONED_IN, as many edges as
// ScanMentions yields for it (Entity.Mentions counts chunks of documents in
// any status, so it is never lower). An entity in more than maxChunks
// chunks is a hub ("United States", a year): retrieval leaves hubs out of
// the graph, so the store need not count them through; maxChunks <= 0
// makes none.
type PassageGraph interface {
	// EntityNeighbors returns each entity of entityIDs that has a chunk of
	// a done document, sorted by id: its chunk count and, unless it is a
	// hub, its chunks. Other ids (unknown, or only in documents that are
	// not done) are absent.
	EntityNeighbors(ctx context.Context, entityIDs []string, maxChunks int) ([]EntityNeighbors, error)
	// ChunkNeighbors returns each chunk of chunkIDs that belongs to a done
	// document and is mentioned by an entity, sorted by id: its document
	// and the entities mentioning it, hubs left out. Other ids are absent.
	ChunkNeighbors(ctx context.Context, chunkIDs []string, maxChunks int) ([]ChunkNeighbors, error)
	// GraphVersion is GraphScanner's: it changes whenever a write, delete
	// or status change may have changed the passage graph, so a cache of
	// answers knows when to drop them.
	GraphVersion(ctx context.Context) (string, error)
}

// EntityNeighbors is an entity's side of the passage graph.
type EntityNeighbors struct {
	ID string
	// Chunks is the entity's chunk count when it is at most maxChunks (or
	// maxChunks <= 0); for a hub, some number above maxChunks (counting
	// stops early) and no more than the count.
	Chunks int
	// ChunkList is the entity's chunks, sorted by id, nil for a hub.
	ChunkList []ChunkRef
}

// ChunkRef is a chunk of the passage graph with its document.
type ChunkRef struct {
	ID       string
	DocID    string
	DocTitle string
}

// ChunkNeighbors is a chunk's side of the passage graph.
type ChunkNeighbors struct {
	ChunkRef
	// Entities are the ids of the entities mentioning the chunk that are
	// not hubs, sorted.
	Entities []string
	// Hubs is how many hubs mention the chunk besides.
	Hubs int
}

// Store is a whole backend: what the conformance suite exercises.
type Store interface {
	Reader
	Writer
	Embedder() EmbedderInfo
	Close() error
}

// Options configure Open.
type Options struct {
	// Embedder identifies the vectors written; a store holding vectors of
	// another embedder refuses to open with ErrEmbedderMismatch.
	Embedder EmbedderInfo
	// Merger computes merged entities and relations; required for writes.
	Merger Merger
	// Username, Password and Database are for server backends; never logged.
	Username string
	Password string
	Database string
	// BatchSize bounds rows per statement on server backends.
	BatchSize int
	// ReadOnly opens an existing store for reading only: nothing is created
	// or changed, so a store without write permission (or on a read-only
	// mount) can still be queried. Writes then fail.
	ReadOnly bool
	// RetryBudget bounds how long one write transaction is retried after
	// transient failures such as deadlocks between concurrent writers;
	// zero means DefaultRetryBudget. Lost connections are retried for at
	// most min(RetryBudget, UnavailableBudget), then fail with ErrUnavailable.
	RetryBudget time.Duration
	// LongLived says one process will run many queries on the store (a
	// server): an embedded store then bounds what it maps of its file,
	// since mapped pages count in the process's resident memory once per
	// read connection that touched them.
	LongLived bool
}

// DefaultRetryBudget is Options.RetryBudget when unset: long enough for a
// writer to wait out another process's big transactions.
const DefaultRetryBudget = 5 * time.Minute

// UnavailableBudget bounds retries of a write while the store cannot be
// reached at all: a server restart is waited out, a stopped one is reported.
const UnavailableBudget = 30 * time.Second

// OpenFunc opens a backend for a parsed store URL.
type OpenFunc func(ctx context.Context, u *url.URL, opts Options) (Store, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]OpenFunc{}
)

// Register makes a backend available to Open under the given URL schemes.
func Register(open OpenFunc, schemes ...string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, s := range schemes {
		registry[s] = open
	}
}

// Open opens the store named by a URL such as sqlite://./.docgraph/graph.db or
// neo4j://localhost:7687. The backend package must be imported for its side effect.
func Open(ctx context.Context, rawURL string, opts Options) (Store, error) {
	u, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	registryMu.RLock()
	open, ok := registry[u.Scheme]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("store %q: unknown scheme %q (known: %s)", Redact(rawURL), u.Scheme, strings.Join(Schemes(), ", "))
	}
	return open(ctx, u, opts)
}

// Schemes lists the registered URL schemes.
func Schemes() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]string, 0, len(registry))
	for s := range registry {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func parseURL(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		// A bare path means the embedded default.
		return &url.URL{Scheme: "sqlite", Opaque: raw, Path: raw}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("store %q: %w", Redact(raw), errors.Unwrap(err))
	}
	return u, nil
}

// Redact hides a password embedded in a store URL so it can be logged.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if i := strings.Index(raw, "@"); i >= 0 && strings.Contains(raw[:i], ":") {
			return "[redacted]@" + raw[i+1:]
		}
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// SQLitePath returns the file path of a sqlite:// URL: sqlite://./a/b.db is
// the relative path ./a/b.db and sqlite:///abs/b.db the absolute /abs/b.db.
func SQLitePath(u *url.URL) string {
	if u.Opaque != "" {
		return u.Opaque
	}
	return u.Host + u.Path
}

// KGScanner is implemented by stores that can hand over their whole
// entity-relation graph, which path retrieval keeps in memory to walk
// reasoning paths, and say which chunks each relation came from. Both
// built-in backends implement it.
type KGScanner interface {
	// ScanEntities calls fn once for every entity, in no particular order,
	// with ID, Name, Type and Mentions set (no description or embedding).
	// An error from fn stops the scan and is returned.
	ScanEntities(ctx context.Context, fn func(Entity) error) error
	// ScanRelations calls fn once for every stored relation (both endpoints
	// exist), in no particular order, with ID, SourceID, TargetID, Type,
	// Keywords and Weight set. An error from fn stops the scan and is returned.
	ScanRelations(ctx context.Context, fn func(Relation) error) error
	// RelationChunks returns the ids of the chunks each relation was
	// extracted from, keyed by relation id, each list sorted; relations
	// without mentions are absent.
	RelationChunks(ctx context.Context, relationIDs []string) (map[string][]string, error)
}
