// Package ann is a persistent approximate-nearest-neighbour index for
// cosine similarity: an HNSW graph over 1-bit codes of randomly rotated
// vectors, kept in one memory-mapped file that one writer updates in place
// while readers in any process search it.
//
// The index never holds the float vectors. Each vector is rotated (random
// sign flips and Walsh-Hadamard transforms, padded to a power of two) and
// kept as the signs of its coordinates: D bits, D/8 bytes. The graph is
// built with the Hamming distance between codes, so it can be rebuilt from
// the codes alone (Compact). A search walks the graph with an asymmetric
// estimate of the cosine (the rotated float query against the data's sign
// bits, corrected per vector as in RaBitQ), keeps the best Ef nodes, and
// hands the best Rerank of them to the caller's exact scorer
// (SearchOptions.Exact), which reads the vectors from wherever the caller
// stores them.
//
// A file is used in place: opening it maps it and checks it (every block
// of published records against its CRC: checksum.go), and a search then
// touches the pages of the nodes it visits. See format.go for the byte
// layout.
package ann

import (
	"errors"
	"strings"
)

// Errors returned by the package.
var (
	// ErrCorrupt is returned (wrapped) for a file that is not an index
	// file or whose header does not describe a valid index.
	ErrCorrupt = errors.New("ann: damaged or foreign index file")
	// ErrLocked is returned (wrapped with the context's error) when
	// another writer holds the index and the context ends first.
	ErrLocked = errors.New("ann: index is locked by another writer")
	// ErrMismatch is returned when an existing file's dimension differs
	// from the one asked for, or a vector has the wrong length.
	ErrMismatch = errors.New("ann: dimension mismatch")
	// ErrClosed is returned by the methods of a closed Reader or Writer.
	ErrClosed = errors.New("ann: index is closed")
	// ErrForeign is returned when an existing file's label differs from
	// the one asked for (Options.Label): the file of another index, copied
	// or renamed over this one.
	ErrForeign = errors.New("ann: index file of another index")
)

// Default parameters.
const (
	DefaultM              = 16
	DefaultEfConstruction = 64
	// DefaultEf is the layer-0 beam of a search of an index of up to
	// 250,000 vectors; larger indexes get twice as much. Measured on the
	// offline embedder's vectors with the 2wiki questions, these keep
	// recall@10 at or above 0.95 up to about 500,000 vectors.
	DefaultEf     = 640
	DefaultRerank = 200 // candidates re-scored exactly
)

// Options configures a Writer. Zero fields take the defaults.
type Options struct {
	// Dim is the vectors' dimension, 1 to 4096. Required.
	Dim int
	// M is the number of neighbours a node links to on layers above 0
	// (2*M on layer 0). Default 16.
	M int
	// EfConstruction is the beam width of the search that finds a new
	// node's neighbours. Default 64.
	EfConstruction int
	// Seed picks the random rotation and node levels. Part of the file:
	// an existing file keeps its own.
	Seed uint64
	// Label is the caller's name for what the index holds (at most
	// MaxLabel bytes), kept in the file: opening a file with another label
	// fails with ErrForeign, so that the index of one kind of vector, or
	// of another store, is never taken for this one's.
	Label string
}

func (o Options) withDefaults() (Options, error) {
	if o.Dim < 1 || o.Dim > maxDim {
		return o, errors.New("ann: Options.Dim must be 1 to 4096")
	}
	if o.M == 0 {
		o.M = DefaultM
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = DefaultEfConstruction
	}
	if o.M < 2 || o.M > 128 {
		return o, errors.New("ann: Options.M must be 2 to 128")
	}
	if o.EfConstruction < 1 || o.EfConstruction > 1<<16 {
		return o, errors.New("ann: Options.EfConstruction must be 1 to 65536")
	}
	if len(o.Label) > MaxLabel || strings.IndexByte(o.Label, 0) >= 0 {
		return o, errors.New("ann: Options.Label must be at most 64 bytes, without NUL")
	}
	return o, nil
}

// Item is a vector with the caller's id, to be added or replaced.
type Item struct {
	ID  int64
	Vec []float32
}

// Hit is one search result.
type Hit struct {
	ID int64
	// Score is the cosine similarity: exact when SearchOptions.Exact is
	// set, otherwise the index's estimate from the codes.
	Score float32
}

// SearchOptions tunes a search. The zero value is usable.
type SearchOptions struct {
	// Ef is the number of candidates kept on layer 0; larger finds more
	// of the true neighbours and costs more. Default DefaultEf, doubled
	// above 250,000 vectors; never less than k.
	Ef int
	// Rerank is how many of the best candidates by the code estimate are
	// re-scored with Exact. Default DefaultRerank (at least k, at most Ef).
	Rerank int
	// Exact returns the exact cosine of the query with each id, in order.
	// It must not keep ids. When nil, hits carry the estimates.
	Exact func(ids []int64) ([]float32, error)
	// Skip reports ids that must not be returned (filtered out, or stale in
	// the caller's store). Skipped nodes are still walked through.
	Skip func(id int64) bool
}

// Stats describes a Writer's index.
type Stats struct {
	Nodes      int    // nodes in the graph, deleted ones included
	Live       int    // nodes that searches can return
	Deleted    int    // nodes deleted or replaced, still in the graph
	Capacity   int    // nodes the file has room for before it grows
	FileBytes  int64  // size of the file
	Generation uint64 // last generation fully applied
	Dirty      bool   // an Apply did not finish; replay from Generation
}
