// Package pgraph is a compact, memory-mapped file of the passage graph: the
// entities and the chunks they are mentioned in, with each chunk's
// document. A store writes it once its writes are done and a query process
// maps it and reads only the nodes a walk meets, so answering the graph
// around a node costs a few page reads whatever the corpus size, where a
// database statement per round grows with it.
//
// The file is a cache of one state of the store, named by the version
// string its writer records: a reader uses it only while the store is at
// that version. Every part of it is checked before it is trusted: the
// header by a CRC and the file size, the body by a CRC of each 4 KiB block
// when first touched and by bounds on every offset and index read, so a
// damaged or truncated file gives ErrCorrupt, never a panic or an answer
// from bad bytes.
package pgraph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
)

// ErrCorrupt is returned for a file that is damaged, truncated or not a
// passage graph file of this format.
var ErrCorrupt = errors.New("pgraph: damaged or foreign passage graph file")

// File layout (integers little-endian):
//
//	header    magic, format, header length, counts, the version and
//	          instance strings, then a Castagnoli CRC of all that
//	crcs      one CRC per 4 KiB block of the body
//	body      sections, each starting on an 8-byte boundary:
//	  entKeys    nEnt × int64: entity keys, ascending
//	  entStart   (nEnt+1) × uint32: entity i's chunks are entEdges[entStart[i]:entStart[i+1]]
//	  entEdges   nEdge × uint32: chunk numbers, ascending within a run
//	  chunkStart (nChunk+1) × uint32: likewise into chunkEdges
//	  chunkEdges nEdge × uint32: entity numbers, ascending within a run
//	  chunkDoc   nChunk × uint32: the chunk's document number
//	  chunkID    (nChunk+1) × uint32: offsets of the chunk ids in blob, ids ascending
//	  docID      (nDoc+1) × uint32: offsets of the document ids in blob
//	  docTitle   (nDoc+1) × uint32: offsets of the document titles in blob
//	  blob       the strings
const (
	magic     = "dgPGRAF1"
	format    = 1
	blockSize = 4096
	fixedLen  = 48 // header bytes before the strings
	maxString = 1 << 16
)

var (
	le         = binary.LittleEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// Sections of the body, in order.
const (
	secEntKeys = iota
	secEntStart
	secEntEdges
	secChunkStart
	secChunkEdges
	secChunkDoc
	secChunkID
	secDocID
	secDocTitle
	secBlob
	numSections
)

type counts struct {
	nEnt, nChunk, nDoc, nEdge uint32
	blobLen                   uint64
}

// layout returns the sections' offsets in the body and its length.
func (c counts) layout() (off [numSections + 1]uint64) {
	sizes := [numSections]uint64{
		secEntKeys:    8 * uint64(c.nEnt),
		secEntStart:   4 * (uint64(c.nEnt) + 1),
		secEntEdges:   4 * uint64(c.nEdge),
		secChunkStart: 4 * (uint64(c.nChunk) + 1),
		secChunkEdges: 4 * uint64(c.nEdge),
		secChunkDoc:   4 * uint64(c.nChunk),
		secChunkID:    4 * (uint64(c.nChunk) + 1),
		secDocID:      4 * (uint64(c.nDoc) + 1),
		secDocTitle:   4 * (uint64(c.nDoc) + 1),
		secBlob:       c.blobLen,
	}
	for i, n := range sizes {
		off[i+1] = align8(off[i] + n)
	}
	return off
}

func align8(n uint64) uint64 { return (n + 7) &^ 7 }

// Doc is a document of the graph.
type Doc struct{ ID, Title string }

// Chunk is a chunk of the graph, in a document of Input.Docs.
type Chunk struct {
	ID  string
	Doc int
}

// Edge says an entity is mentioned in a chunk of Input.Chunks.
type Edge struct {
	Entity int64
	Chunk  int
}

// Input is the graph Write records. Chunks without an edge and documents
// without a chunk are left out; a repeated edge counts once.
type Input struct {
	Version, Instance string
	Docs              []Doc
	Chunks            []Chunk
	Edges             []Edge
}

// Write records the graph at path: written beside it under another name,
// synced, then renamed over it, so a reader maps either the old file or
// the new one whole.
func Write(path string, in Input) error {
	b, err := encode(in)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("pgraph: %w", err)
	}
	tmp := f.Name()
	// Readable as the database beside it is (CreateTemp makes 0600).
	err = f.Chmod(0o644)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("pgraph: write %s: %w", path, err)
	}
	return nil
}

// encode lays the graph out as the file's bytes.
func encode(in Input) ([]byte, error) {
	if len(in.Version) >= maxString || len(in.Instance) >= maxString {
		return nil, errors.New("pgraph: version or instance too long")
	}
	for _, e := range in.Edges {
		if e.Chunk < 0 || e.Chunk >= len(in.Chunks) {
			return nil, fmt.Errorf("pgraph: edge to chunk %d of %d", e.Chunk, len(in.Chunks))
		}
	}
	for _, c := range in.Chunks {
		if c.Doc < 0 || c.Doc >= len(in.Docs) {
			return nil, fmt.Errorf("pgraph: chunk %q in document %d of %d", c.ID, c.Doc, len(in.Docs))
		}
	}
	// Chunks with edges, numbered in id order; their documents, numbered
	// in order of first use; entities in key order.
	used := make([]bool, len(in.Chunks))
	for _, e := range in.Edges {
		used[e.Chunk] = true
	}
	var chunks []int
	for i, u := range used {
		if u {
			chunks = append(chunks, i)
		}
	}
	sort.Slice(chunks, func(i, j int) bool { return in.Chunks[chunks[i]].ID < in.Chunks[chunks[j]].ID })
	for i := 1; i < len(chunks); i++ {
		if in.Chunks[chunks[i]].ID == in.Chunks[chunks[i-1]].ID {
			return nil, fmt.Errorf("pgraph: chunk id %q twice", in.Chunks[chunks[i]].ID)
		}
	}
	chunkNum := make([]uint32, len(in.Chunks))
	docNum := make(map[int]uint32)
	var docs []int
	chunkDoc := make([]uint32, len(chunks))
	for i, c := range chunks {
		chunkNum[c] = uint32(i)
		d := in.Chunks[c].Doc
		n, ok := docNum[d]
		if !ok {
			n = uint32(len(docs))
			docNum[d] = n
			docs = append(docs, d)
		}
		chunkDoc[i] = n
	}
	type pair struct {
		ent   int64
		chunk uint32
	}
	pairs := make([]pair, len(in.Edges))
	for i, e := range in.Edges {
		pairs[i] = pair{e.Entity, chunkNum[e.Chunk]}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		if a.ent != b.ent {
			if a.ent < b.ent {
				return -1
			}
			return 1
		}
		return int(a.chunk) - int(b.chunk)
	})
	pairs = slices.Compact(pairs)
	var keys []int64
	for i, p := range pairs {
		if i == 0 || p.ent != pairs[i-1].ent {
			keys = append(keys, p.ent)
		}
	}
	var blobLen uint64
	for _, c := range chunks {
		blobLen += uint64(len(in.Chunks[c].ID))
	}
	for _, d := range docs {
		blobLen += uint64(len(in.Docs[d].ID) + len(in.Docs[d].Title))
	}
	if uint64(len(pairs)) > math.MaxUint32-1 || blobLen > math.MaxUint32 || len(keys) > math.MaxUint32-1 {
		return nil, errors.New("pgraph: graph too large for the format")
	}
	c := counts{nEnt: uint32(len(keys)), nChunk: uint32(len(chunks)), nDoc: uint32(len(docs)), nEdge: uint32(len(pairs)), blobLen: blobLen}
	off := c.layout()
	bodyLen := off[numSections]
	nBlocks := (bodyLen + blockSize - 1) / blockSize
	headLen := align8(fixedLen + uint64(len(in.Version)+len(in.Instance)) + 4)
	crcLen := align8(4 * nBlocks)
	out := make([]byte, headLen+crcLen+bodyLen)

	h := out[:headLen]
	copy(h, magic)
	le.PutUint32(h[8:], format)
	le.PutUint32(h[12:], uint32(headLen))
	le.PutUint32(h[16:], c.nEnt)
	le.PutUint32(h[20:], c.nChunk)
	le.PutUint32(h[24:], c.nDoc)
	le.PutUint32(h[28:], c.nEdge)
	le.PutUint64(h[32:], c.blobLen)
	le.PutUint16(h[40:], uint16(len(in.Version)))
	le.PutUint16(h[42:], uint16(len(in.Instance)))
	n := copy(h[fixedLen:], in.Version)
	n += copy(h[fixedLen+n:], in.Instance)
	le.PutUint32(h[headLen-4:], crc32.Checksum(h[:headLen-4], castagnoli))

	body := out[headLen+crcLen:]
	sec := func(s int) []byte { return body[off[s]:off[s+1]] }
	for i, k := range keys {
		le.PutUint64(sec(secEntKeys)[8*i:], uint64(k))
	}
	// Entity runs in pair order; chunk runs by counting, which keeps each
	// chunk's entities ascending as the pairs are.
	entStart, entEdges := sec(secEntStart), sec(secEntEdges)
	chunkStart, chunkEdges := sec(secChunkStart), sec(secChunkEdges)
	perChunk := make([]uint32, len(chunks)+1)
	e := -1
	for i, p := range pairs {
		if i == 0 || p.ent != pairs[i-1].ent {
			e++
			le.PutUint32(entStart[4*e:], uint32(i))
		}
		le.PutUint32(entEdges[4*i:], p.chunk)
		perChunk[p.chunk+1]++
	}
	le.PutUint32(entStart[4*len(keys):], uint32(len(pairs)))
	for i := range chunks {
		perChunk[i+1] += perChunk[i]
	}
	for i, v := range perChunk {
		le.PutUint32(chunkStart[4*i:], v)
	}
	e = -1
	for i, p := range pairs {
		if i == 0 || p.ent != pairs[i-1].ent {
			e++
		}
		le.PutUint32(chunkEdges[4*perChunk[p.chunk]:], uint32(e))
		perChunk[p.chunk]++
	}
	for i, d := range chunkDoc {
		le.PutUint32(sec(secChunkDoc)[4*i:], d)
	}
	blob := sec(secBlob)
	at := uint32(0)
	put := func(offs []byte, i int, s string) {
		le.PutUint32(offs[4*i:], at)
		at += uint32(copy(blob[at:], s))
		le.PutUint32(offs[4*(i+1):], at)
	}
	for i, ch := range chunks {
		put(sec(secChunkID), i, in.Chunks[ch].ID)
	}
	for i, d := range docs {
		put(sec(secDocID), i, in.Docs[d].ID)
	}
	for i, d := range docs {
		put(sec(secDocTitle), i, in.Docs[d].Title)
	}
	if len(docs) == 0 {
		// Offsets of an empty list still end where the strings do.
		le.PutUint32(sec(secDocID), at)
		le.PutUint32(sec(secDocTitle), at)
	}
	if len(chunks) == 0 {
		le.PutUint32(sec(secChunkID), 0)
	}
	crcs := out[headLen : headLen+crcLen]
	for b := uint64(0); b < nBlocks; b++ {
		lo, hi := b*blockSize, min((b+1)*blockSize, bodyLen)
		le.PutUint32(crcs[4*b:], crc32.Checksum(body[lo:hi], castagnoli))
	}
	return out, nil
}

// File is a mapped passage graph file. Its methods are safe for
// concurrent use until Close.
type File struct {
	info     os.FileInfo
	data     []byte // the mapping
	version  string
	instance string
	c        counts
	off      [numSections + 1]uint64
	crcs     []byte
	body     []byte
	checked  []atomic.Uint64 // a bit per body block whose CRC matched
	bad      atomic.Bool
}

// Open maps the file at path and checks its header and size; the body is
// checked as it is read. A missing file gives an error matching
// fs.ErrNotExist; a damaged or foreign one, ErrCorrupt.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.Size() < fixedLen+4 || info.Size() > math.MaxInt {
		return nil, fmt.Errorf("%w: %s: %d bytes", ErrCorrupt, path, info.Size())
	}
	data, err := mapFile(f, info.Size())
	if err != nil {
		return nil, err
	}
	p, err := parse(data)
	if err != nil {
		unmapFile(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.info = info
	return p, nil
}

// parse checks the header and the size its counts imply.
func parse(data []byte) (*File, error) {
	if len(data) < fixedLen+4 || string(data[:8]) != magic {
		return nil, fmt.Errorf("%w: no passage graph header", ErrCorrupt)
	}
	if v := le.Uint32(data[8:]); v != format {
		return nil, fmt.Errorf("%w: format %d, this build reads %d", ErrCorrupt, v, format)
	}
	headLen := uint64(le.Uint32(data[12:]))
	vl, il := uint64(le.Uint16(data[40:])), uint64(le.Uint16(data[42:]))
	if headLen != align8(fixedLen+vl+il+4) || headLen > uint64(len(data)) {
		return nil, fmt.Errorf("%w: header length", ErrCorrupt)
	}
	if crc32.Checksum(data[:headLen-4], castagnoli) != le.Uint32(data[headLen-4:]) {
		return nil, fmt.Errorf("%w: header checksum", ErrCorrupt)
	}
	c := counts{nEnt: le.Uint32(data[16:]), nChunk: le.Uint32(data[20:]), nDoc: le.Uint32(data[24:]),
		nEdge: le.Uint32(data[28:]), blobLen: le.Uint64(data[32:])}
	if c.blobLen > math.MaxUint32 {
		return nil, fmt.Errorf("%w: counts", ErrCorrupt)
	}
	off := c.layout()
	bodyLen := off[numSections]
	nBlocks := (bodyLen + blockSize - 1) / blockSize
	crcLen := align8(4 * nBlocks)
	if headLen+crcLen+bodyLen != uint64(len(data)) {
		return nil, fmt.Errorf("%w: %d bytes where the header says %d (truncated?)", ErrCorrupt, len(data), headLen+crcLen+bodyLen)
	}
	return &File{
		data:     data,
		version:  string(data[fixedLen : fixedLen+vl]),
		instance: string(data[fixedLen+vl : fixedLen+vl+il]),
		c:        c,
		off:      off,
		crcs:     data[headLen : headLen+crcLen],
		body:     data[headLen+crcLen:],
		checked:  make([]atomic.Uint64, (nBlocks+63)/64),
	}, nil
}

// Version is the store version the file records.
func (f *File) Version() string { return f.version }

// Instance is the store instance the file records.
func (f *File) Instance() string { return f.instance }

// Info is the file's as it was opened, to tell whether the path now names
// another one.
func (f *File) Info() os.FileInfo { return f.info }

// Size is the file's length in bytes.
func (f *File) Size() int { return len(f.data) }

// Verify checks every block of the body: a writer does before trusting a
// file it did not just write, so that a damaged one is built again.
func (f *File) Verify() error {
	_, err := f.span(secEntKeys, 0, f.off[numSections])
	return err
}

// Damaged reports whether a read found the file damaged.
func (f *File) Damaged() bool { return f.bad.Load() }

// Close unmaps the file; no method may run during or after it.
func (f *File) Close() error {
	data := f.data
	f.data, f.body, f.crcs = nil, nil, nil
	return unmapFile(data)
}

func (f *File) corrupt(what string) error {
	f.bad.Store(true)
	return fmt.Errorf("%w: %s", ErrCorrupt, what)
}

// span returns n bytes at offset off of section s, checking that they lie
// in it and that the blocks holding them are intact.
func (f *File) span(s int, off, n uint64) ([]byte, error) {
	lo, hi := f.off[s]+off, f.off[s]+off+n
	if off > f.off[s+1]-f.off[s] || n > f.off[s+1]-f.off[s]-off {
		return nil, f.corrupt("offset out of its section")
	}
	if n == 0 {
		return nil, nil
	}
	for b := lo / blockSize; b <= (hi-1)/blockSize; b++ {
		word, bit := &f.checked[b/64], uint64(1)<<(b%64)
		if word.Load()&bit != 0 {
			continue
		}
		end := min((b+1)*blockSize, uint64(len(f.body)))
		if crc32.Checksum(f.body[b*blockSize:end], castagnoli) != le.Uint32(f.crcs[4*b:]) {
			return nil, f.corrupt(fmt.Sprintf("block %d checksum", b))
		}
		word.Or(bit)
	}
	return f.body[lo:hi], nil
}

func (f *File) u32(s int, i uint64) (uint32, error) {
	b, err := f.span(s, 4*i, 4)
	if err != nil {
		return 0, err
	}
	return le.Uint32(b), nil
}

// run returns the bounds of node i's run in a start section, checked
// against the edges there are.
func (f *File) run(s int, i uint64) (lo, hi uint32, err error) {
	b, err := f.span(s, 4*i, 8)
	if err != nil {
		return 0, 0, err
	}
	lo, hi = le.Uint32(b), le.Uint32(b[4:])
	if lo > hi || hi > f.c.nEdge {
		return 0, 0, f.corrupt("edge run")
	}
	return lo, hi, nil
}

// str returns string i of an offsets section.
func (f *File) str(s int, i uint64) (string, error) {
	b, err := f.span(s, 4*i, 8)
	if err != nil {
		return "", err
	}
	lo, hi := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:]))
	if lo > hi {
		return "", f.corrupt("string offsets")
	}
	sb, err := f.span(secBlob, lo, hi-lo)
	if err != nil {
		return "", err
	}
	return string(sb), nil
}

// findEntity returns the number of the entity with key, or false.
func (f *File) findEntity(key int64) (uint32, bool, error) {
	var ferr error
	i := sort.Search(int(f.c.nEnt), func(i int) bool {
		if ferr != nil {
			return true
		}
		b, err := f.span(secEntKeys, 8*uint64(i), 8)
		if err != nil {
			ferr = err
			return true
		}
		return int64(le.Uint64(b)) >= key
	})
	if ferr != nil || i == int(f.c.nEnt) {
		return 0, false, ferr
	}
	b, err := f.span(secEntKeys, 8*uint64(i), 8)
	if err != nil || int64(le.Uint64(b)) != key {
		return 0, false, err
	}
	return uint32(i), true, nil
}

// findChunk returns the number of the chunk with id, or false.
func (f *File) findChunk(id string) (uint32, bool, error) {
	var ferr error
	i := sort.Search(int(f.c.nChunk), func(i int) bool {
		if ferr != nil {
			return true
		}
		s, err := f.str(secChunkID, uint64(i))
		if err != nil {
			ferr = err
			return true
		}
		return strings.Compare(s, id) >= 0
	})
	if ferr != nil || i == int(f.c.nChunk) {
		return 0, false, ferr
	}
	s, err := f.str(secChunkID, uint64(i))
	if err != nil || s != id {
		return 0, false, err
	}
	return uint32(i), true, nil
}

// ChunkInfo is a chunk with its document.
type ChunkInfo struct{ ID, DocID, DocTitle string }

// chunkInfo reads chunk i's id and document, reusing docs' strings for a
// document read before.
func (f *File) chunkInfo(i uint32, docs map[uint32][2]string) (ChunkInfo, error) {
	if i >= f.c.nChunk {
		return ChunkInfo{}, f.corrupt("chunk number")
	}
	id, err := f.str(secChunkID, uint64(i))
	if err != nil {
		return ChunkInfo{}, err
	}
	d, err := f.u32(secChunkDoc, uint64(i))
	if err != nil {
		return ChunkInfo{}, err
	}
	if d >= f.c.nDoc {
		return ChunkInfo{}, f.corrupt("document number")
	}
	doc, ok := docs[d]
	if !ok {
		if doc[0], err = f.str(secDocID, uint64(d)); err != nil {
			return ChunkInfo{}, err
		}
		if doc[1], err = f.str(secDocTitle, uint64(d)); err != nil {
			return ChunkInfo{}, err
		}
		if docs != nil {
			docs[d] = doc
		}
	}
	return ChunkInfo{ID: id, DocID: doc[0], DocTitle: doc[1]}, nil
}

// entityDegree is entity i's chunk count.
func (f *File) entityDegree(i uint32) (int, error) {
	if i >= f.c.nEnt {
		return 0, f.corrupt("entity number")
	}
	lo, hi, err := f.run(secEntStart, uint64(i))
	return int(hi - lo), err
}

// hub reports whether an entity in n chunks is a hub for maxChunks.
func hub(n, maxChunks int) bool { return maxChunks > 0 && n > maxChunks }

// Reader answers from one file for one call, sharing the documents it has
// read between the nodes asked.
type Reader struct {
	f    *File
	docs map[uint32][2]string
}

// Reader returns a reader for one batch of questions.
func (f *File) Reader() *Reader { return &Reader{f: f, docs: map[uint32][2]string{}} }

// Entity returns the entity's chunk count and, unless it is a hub (in more
// than maxChunks chunks, maxChunks > 0), its chunks in id order; found is
// false for an entity with no chunk in the graph.
func (r *Reader) Entity(key int64, maxChunks int) (found bool, n int, chunks []ChunkInfo, err error) {
	f := r.f
	i, ok, err := f.findEntity(key)
	if !ok || err != nil {
		return false, 0, nil, err
	}
	lo, hi, err := f.run(secEntStart, uint64(i))
	if err != nil {
		return false, 0, nil, err
	}
	n = int(hi - lo)
	if hub(n, maxChunks) {
		return true, n, nil, nil
	}
	b, err := f.span(secEntEdges, 4*uint64(lo), 4*uint64(n))
	if err != nil {
		return false, 0, nil, err
	}
	chunks = make([]ChunkInfo, n)
	for j := range chunks {
		if chunks[j], err = f.chunkInfo(le.Uint32(b[4*j:]), r.docs); err != nil {
			return false, 0, nil, err
		}
	}
	return true, n, chunks, nil
}

// Chunk returns the chunk's document and the keys of the entities in it
// that are not hubs, ascending, with the count of those that are; found
// is false for a chunk not in the graph.
func (r *Reader) Chunk(id string, maxChunks int) (found bool, c ChunkInfo, entities []int64, hubs int, err error) {
	f := r.f
	i, ok, err := f.findChunk(id)
	if !ok || err != nil {
		return false, ChunkInfo{}, nil, 0, err
	}
	if c, err = f.chunkInfo(i, r.docs); err != nil {
		return false, ChunkInfo{}, nil, 0, err
	}
	lo, hi, err := f.run(secChunkStart, uint64(i))
	if err != nil {
		return false, ChunkInfo{}, nil, 0, err
	}
	b, err := f.span(secChunkEdges, 4*uint64(lo), 4*uint64(hi-lo))
	if err != nil {
		return false, ChunkInfo{}, nil, 0, err
	}
	for j := 0; j < len(b); j += 4 {
		e := le.Uint32(b[j:])
		n, err := f.entityDegree(e)
		if err != nil {
			return false, ChunkInfo{}, nil, 0, err
		}
		if hub(n, maxChunks) {
			hubs++
			continue
		}
		kb, err := f.span(secEntKeys, 8*uint64(e), 8)
		if err != nil {
			return false, ChunkInfo{}, nil, 0, err
		}
		entities = append(entities, int64(le.Uint64(kb)))
	}
	return true, c, entities, hubs, nil
}

// Stats are the file's counts.
type Stats struct{ Entities, Chunks, Docs, Edges int }

// Stats returns the file's counts.
func (f *File) Stats() Stats {
	return Stats{Entities: int(f.c.nEnt), Chunks: int(f.c.nChunk), Docs: int(f.c.nDoc), Edges: int(f.c.nEdge)}
}
