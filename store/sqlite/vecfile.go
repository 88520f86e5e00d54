package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"unsafe"
)

// A vector sidecar file holds one table's normalised matrix as of a write
// generation, next to the database (graph.db.vec-relations). Loading tens of
// thousands of vectors through SQLite rows costs seconds in a fresh process;
// a sidecar is mapped into memory instead, so a one-shot `query` pays only
// for the pages its scans touch. A sidecar whose generation is not the
// store's is ignored and rewritten on the next load, so it can never serve
// stale vectors.
//
// Layout, all little-endian:
//
//	0   magic "DGVEC003"
//	8   generation   uint64
//	16  n (rows)     uint32
//	20  dim          uint32
//	24  strBytes     uint64: length of the string table that follows
//	32  string table: instance, then id and doc of each row, each a uint16
//	    length and its bytes
//	    zero padding up to a multiple of vecFileAlign
//	off n*dim float32s, row-major; the file ends exactly there
//
// The header says where the matrix starts and how long the file must be, so
// a short or overlong file is rejected before anything is mapped: touching a
// mapped page past the end of a file raises SIGBUS. Files are only ever
// replaced by rename, so a mapping keeps its old inode valid however often
// the sidecar is rewritten.
const (
	vecFileMagic  = "DGVEC003"
	vecFileHeader = 32
	// vecFileAlign keeps the matrix on a cache-line boundary (the mapping
	// itself starts on a page).
	vecFileAlign = 64
)

// nativeLittle is false on big-endian machines, which decode the matrix
// instead of mapping it.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatBytes views v's memory as bytes (little-endian machines only).
func floatBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

func alignUp(n uint64) uint64 { return (n + vecFileAlign - 1) &^ (vecFileAlign - 1) }

// vecHeader is a sidecar's header: magic, generation, row count, dimension
// and the length of the string table.
func vecHeader(gen int64, n, dim uint32, strBytes uint64) [vecFileHeader]byte {
	var hdr [vecFileHeader]byte
	copy(hdr[:8], vecFileMagic)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(gen))
	binary.LittleEndian.PutUint32(hdr[16:], n)
	binary.LittleEndian.PutUint32(hdr[20:], dim)
	binary.LittleEndian.PutUint64(hdr[24:], strBytes)
	return hdr
}

// writeVecString writes one string of the sidecar's string table: its
// length as two bytes, then its bytes.
func writeVecString(w *bufio.Writer, s string) {
	var n [2]byte
	binary.LittleEndian.PutUint16(n[:], uint16(len(s)))
	w.Write(n[:])
	w.WriteString(s)
}

// saveFile writes the loaded index to path atomically (temp file + rename).
// Failures are not errors: the sidecar is only a cache.
func (x *vecIndex) saveFile(path string) {
	if path == "" || !x.loaded {
		return
	}
	strBytes := uint64(2 + len(x.instance))
	for i, id := range x.ids {
		if len(id) > math.MaxUint16 || len(x.docs[i]) > math.MaxUint16 {
			return // not representable; searches load from rows instead
		}
		strBytes += uint64(4 + len(id) + len(x.docs[i]))
	}
	f, err := createTemp(path)
	if err != nil {
		return
	}
	w := bufio.NewWriterSize(f, 1<<20)
	hdr := vecHeader(x.gen, uint32(len(x.ids)), uint32(x.dim), strBytes)
	w.Write(hdr[:])
	writeVecString(w, x.instance)
	for i, id := range x.ids {
		writeVecString(w, id)
		writeVecString(w, x.docs[i])
	}
	end := vecFileHeader + strBytes
	w.Write(make([]byte, alignUp(end)-end))
	if nativeLittle {
		w.Write(floatBytes(x.vecs))
	} else {
		var b [4]byte
		for _, v := range x.vecs {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			w.Write(b[:])
		}
	}
	if w.Flush() != nil {
		discardTemp(f)
		return
	}
	commitTemp(f, path)
}

// streamFile writes the sidecar of x's table as of tx's snapshot, whose
// generation is gen, straight from the rows: the bytes saveFile writes for
// the index ensure would load from them, without holding the matrix (a big
// graph's relation matrix alone is hundreds of MB). The first pass writes
// the string table from ids, docs and embedding lengths; the second the
// normalised vectors, in the same order. Both passes hash the rows they
// take, so a second pass that did not see the first one's rows leaves no
// file. The header goes in last and the file is renamed into place only
// when complete, so a partial file is never read as valid. Failures to
// write are not errors (the sidecar is only a cache); failures to read the
// rows are.
func (x *vecIndex) streamFile(ctx context.Context, tx *sql.Tx, gen int64) error {
	if x.file == "" || x.sizes == "" {
		return nil
	}
	f, err := createTemp(x.file)
	if err != nil {
		return nil
	}
	committed := false
	defer func() {
		if !committed {
			discardTemp(f)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [vecFileHeader]byte
	w.Write(hdr[:]) // filled in once the counts are known
	var strBytes uint64
	str := func(s string) {
		writeVecString(w, s)
		strBytes += uint64(2 + len(s))
	}
	seed := maphash.MakeSeed()
	var first, second maphash.Hash
	first.SetSeed(seed)
	second.SetSeed(seed)
	take := func(h *maphash.Hash, id, doc string) {
		var n [4]byte
		binary.LittleEndian.PutUint16(n[:], uint16(len(id)))
		binary.LittleEndian.PutUint16(n[2:], uint16(len(doc)))
		h.Write(n[:])
		h.WriteString(id)
		h.WriteString(doc)
	}

	// Pass 1: which rows the index would hold (ensure's rule: the first
	// embedding of at least 4 bytes sets the dimension, and only
	// embeddings of exactly that size are kept), and their strings.
	str(x.instance)
	rows, err := tx.QueryContext(ctx, x.sizes)
	if err != nil {
		return err
	}
	var n uint64
	var dim int64
	representable := true
	for rows.Next() {
		var id, doc string
		var size int64
		if err := rows.Scan(&id, &doc, &size); err != nil {
			rows.Close()
			return err
		}
		if dim == 0 && size >= 4 {
			dim = size / 4
		}
		if size == 0 || size != 4*dim {
			continue
		}
		if len(id) > math.MaxUint16 || len(doc) > math.MaxUint16 {
			representable = false // as saveFile: no file
			continue
		}
		str(id)
		str(doc)
		take(&first, id, doc)
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if !representable || n > math.MaxUint32 || dim > math.MaxUint32 {
		return nil
	}
	end := vecFileHeader + strBytes
	w.Write(make([]byte, alignUp(end)-end))

	// Pass 2: the vectors, normalised as putBlob does, written as they come.
	rows, err = tx.QueryContext(ctx, x.query)
	if err != nil {
		return err
	}
	defer rows.Close()
	vec := make([]float32, dim)
	out := make([]byte, 4*dim)
	var blob sql.RawBytes // decoded before the next row, so never copied
	var m uint64
	for rows.Next() {
		var id, doc string
		if err := rows.Scan(&id, &doc, &blob); err != nil {
			return err
		}
		if len(blob) == 0 || int64(len(blob)) != 4*dim {
			continue
		}
		take(&second, id, doc)
		m++
		for j := range vec {
			vec[j] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*j:]))
		}
		normalize(vec)
		for j, v := range vec {
			binary.LittleEndian.PutUint32(out[4*j:], math.Float32bits(v))
		}
		w.Write(out)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if m != n || first.Sum64() != second.Sum64() {
		return nil // the passes disagree: no file rather than a wrong one
	}
	if w.Flush() != nil {
		return nil
	}
	hdr = vecHeader(gen, uint32(n), uint32(dim), strBytes)
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return nil
	}
	committed = true
	commitTemp(f, x.file)
	return nil
}

// fileCurrent reports whether x's sidecar is at generation gen and of this
// store, with the size its header promises: a cheap check, without reading
// the matrix, that streamFile need not run again. A file damaged inside is
// still caught, and replaced, by loadFile.
func (x *vecIndex) fileCurrent(gen int64) bool {
	var hdr [vecFileHeader]byte
	f, size, ok := openSidecar(x.file, vecFileMagic, gen, hdr[:])
	if !ok {
		return false
	}
	defer f.Close()
	n := uint64(binary.LittleEndian.Uint32(hdr[16:]))
	dim := uint64(binary.LittleEndian.Uint32(hdr[20:]))
	strBytes := binary.LittleEndian.Uint64(hdr[24:])
	if size < 0 || strBytes > uint64(size) || (dim > 0 && n > uint64(size)/4/dim) ||
		alignUp(vecFileHeader+strBytes)+4*n*dim != uint64(size) {
		return false
	}
	inst := make([]byte, 2+len(x.instance))
	if _, err := io.ReadFull(f, inst); err != nil {
		return false
	}
	return int(binary.LittleEndian.Uint16(inst)) == len(x.instance) && string(inst[2:]) == x.instance
}

var errStaleVecFile = errors.New("vector sidecar is missing, stale or damaged")

// loadFile fills the index from path if the file is intact and at generation
// gen. On little-endian machines x.vecs then points into a private mapping
// of the file: writes by apply copy the pages they touch and never reach the
// file, and growth past the mapped rows moves the matrix to the heap.
func (x *vecIndex) loadFile(path string, gen int64) error {
	var hdr [vecFileHeader]byte
	f, fsize, ok := openSidecar(path, vecFileMagic, gen, hdr[:])
	if !ok {
		return errStaleVecFile
	}
	defer f.Close() // a mapping outlives its descriptor
	n := uint64(binary.LittleEndian.Uint32(hdr[16:]))
	dim := uint64(binary.LittleEndian.Uint32(hdr[20:]))
	strBytes := binary.LittleEndian.Uint64(hdr[24:])
	size := uint64(fsize)
	// Every bound is checked against the real size before it is multiplied,
	// so a damaged header cannot overflow into a plausible one.
	if size > math.MaxInt || strBytes > size || (n > 0 && dim == 0) || (dim > 0 && n > size/4/dim) {
		return errStaleVecFile
	}
	off := alignUp(vecFileHeader + strBytes)
	if off+4*n*dim != size {
		return errStaleVecFile
	}
	data, err := mapFile(f, int(size))
	if err != nil {
		return errStaleVecFile
	}
	ids, docs, slot, ok := parseVecStrings(data[vecFileHeader:vecFileHeader+strBytes], int(n), x.instance)
	if !ok {
		unmapFile(data)
		return errStaleVecFile
	}
	var vecs []float32
	switch {
	case n*dim == 0:
		unmapFile(data)
		data = nil
	case nativeLittle:
		vecs = unsafe.Slice((*float32)(unsafe.Pointer(&data[off])), int(n*dim))
	default:
		vecs = decodeVector(data[off:])
		unmapFile(data)
		data = nil
	}
	old := x.mapped
	x.ids, x.docs, x.vecs, x.slot, x.dim = ids, docs, vecs, slot, int(dim)
	x.mapped = data
	x.loaded, x.gen = true, gen
	if old != nil {
		unmapFile(old) // x.vecs no longer points into it
	}
	return nil
}

// parseVecStrings decodes a sidecar's string table, which must hold exactly
// the instance and n distinct ids with their docs. The ids and docs are
// substrings of one copy of the table: two allocations in all rather than
// one per string.
func parseVecStrings(table []byte, n int, instance string) (ids, docs []string, slot map[string]int, ok bool) {
	all := string(table)
	p := 0
	str := func() (string, bool) {
		if p+2 > len(all) {
			return "", false
		}
		l := int(all[p]) | int(all[p+1])<<8
		p += 2
		if p+l > len(all) {
			return "", false
		}
		s := all[p : p+l]
		p += l
		return s, true
	}
	if inst, ok := str(); !ok || inst != instance {
		return nil, nil, nil, false
	}
	ids, docs = make([]string, n), make([]string, n)
	slot = make(map[string]int, n)
	for i := range n {
		id, ok1 := str()
		doc, ok2 := str()
		if !ok1 || !ok2 {
			return nil, nil, nil, false
		}
		ids[i], docs[i], slot[id] = id, doc, i
	}
	if p != len(all) || len(slot) != n {
		return nil, nil, nil, false
	}
	return ids, docs, slot, true
}

// releaseMap unmaps the sidecar mapping once x.vecs no longer points into
// it (after growth moved the matrix to the heap, or a reset dropped it).
func (x *vecIndex) releaseMap() {
	if x.mapped == nil {
		return
	}
	if p := unsafe.SliceData(x.vecs); p != nil {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(x.mapped)))
		if a := uintptr(unsafe.Pointer(p)); a >= base && a < base+uintptr(len(x.mapped)) {
			return
		}
	}
	unmapFile(x.mapped)
	x.mapped = nil
}

// close drops the index and its mapping; searches in flight finish first.
func (x *vecIndex) close() {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.reset()
}

// Warm loads the vector indexes now (writing their sidecars), so that the
// first query after an ingest does not pay for it.
func (s *Store) Warm(ctx context.Context) error { return s.warm(ctx, false) }

// SaveSidecars writes the vector sidecars for the next process, as Warm
// does, but streams each file from the rows instead of loading the index
// (streamFile): a process that will not search (ingest) need not hold any
// matrix of a big graph.
func (s *Store) SaveSidecars(ctx context.Context) error { return s.warm(ctx, true) }

func (s *Store) warm(ctx context.Context, drop bool) error {
	gen, err := s.generation(ctx)
	if err != nil {
		return fmt.Errorf("sqlite store %s: warm: %w", s.path, err)
	}
	// Dropping, read through the write connection: the read pool maps the
	// database file into memory (mmap_size), which a scan of every vector
	// would fill.
	db := s.rdb
	if drop && s.wdb != nil {
		db = s.wdb
	}
	for _, x := range []*vecIndex{s.chunkVecs, s.entityVecs, s.relationVecs} {
		ensure := x.ensure
		if drop {
			ensure = x.saveDropped
		}
		if err := ensure(ctx, db, gen); err != nil {
			return fmt.Errorf("sqlite store %s: warm %s vectors: %w", s.path, x.table, err)
		}
	}
	return nil
}

// saveDropped brings x's sidecar to the store's generation and leaves x
// unloaded. An index already loaded at that generation writes its own
// matrix; otherwise the file is streamed from the rows (streamFile), so no
// matrix is ever built.
func (x *vecIndex) saveDropped(ctx context.Context, db *sql.DB, gen int64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	defer x.reset()
	if x.file == "" {
		return nil
	}
	if x.loaded && x.gen == gen {
		if !x.fileCurrent(gen) {
			x.saveFile(x.file)
		}
		return nil
	}
	tx, g, err := snapshot(ctx, db)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if x.fileCurrent(g) {
		return nil
	}
	return x.streamFile(ctx, tx, g)
}
