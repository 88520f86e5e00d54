package ann

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync/atomic"
	"unsafe"
)

// File layout (all integers little-endian; the file is used in place through
// a shared mapping, so it is only opened on little-endian machines):
//
//	page 0     header (168 bytes used; see header)
//	codes      capacity × words × 8 bytes: sign bits of the rotated vector
//	scale      capacity × float32: 1/||rot(v)||_1, the estimator's correction
//	ids        capacity × int64: the caller's id of each node
//	info       capacity × uint32: level in bits 0-7, bit 8 set when deleted
//	upOff      capacity × uint32: first slot of the node's upper-layer lists
//	links0     capacity × (1+m0) × uint32: layer-0 list, count then slots
//	upper      upperCap × uint32: for each node of level L ≥ 1, L lists of
//	           (1+m) uint32 (count then slots), layer 1 first
//	sums       blocks × uint32: a CRC of each 4 KiB block of the arrays
//	           above (see checksum.go), on a page of its own
//
// Every array starts on a 64-byte boundary. Nodes are numbered in insertion
// order; a node's records are written before count covers it, and a
// neighbour slot only ever holds a node number that was published (or is
// being published by the same write), so a reader that ignores numbers at or
// above the count it read never follows a half-written node.
//
// Version 2 added the label and the checksums of the contents; a version 1
// file is refused (ErrCorrupt), to be built again by its owner.
const (
	magic       = "docgANN1"
	fileVersion = 2
	headerSize  = 4096
	maxLevel    = 24 // levels above this are clamped: 16^24 nodes are never reached
	deletedBit  = 1 << 8
	levelMask   = 0xff
	noEntry     = ^uint64(0)
	maxDim      = 4096
	// MaxLabel is the longest Options.Label, in bytes.
	MaxLabel = 64
)

// header is page 0 of the file. The first block is written once when the
// file is made and covered by CRC; the rest changes while a writer applies
// and is read and written with atomic operations.
type header struct {
	Magic    [8]byte
	Version  uint32
	Dim      uint32
	PDim     uint32
	M        uint32
	M0       uint32
	Efc      uint32
	Seed     uint64
	Capacity uint32
	UpperCap uint32
	Label    [MaxLabel]byte // the owner's name for what the file indexes, zero-padded
	CRC      uint32         // Castagnoli CRC of the 112 bytes above
	_        uint32

	Count     uint32 // nodes published
	UpperUsed uint32 // upper slots published
	Entry     uint64 // entry node | max level << 32; noEntry when empty
	Deleted   uint32 // nodes marked deleted
	Dirty     uint32 // 1 while an Apply is under way
	Gen       uint64 // last generation fully applied
	Replaced  uint32 // set when a writer has renamed a newer file over this one
	// Seq is odd while a writer changes the file in place (an Apply), and
	// moves on with every Apply: a reader checking the sums knows whether
	// a writer changed the file under it.
	Seq uint32
	// StateCRC is the CRC of the fields Count to Gen (Dirty left out) and
	// of the sums: valid when Dirty is 0.
	StateCRC uint32
	_        uint32
}

const staticSize = 112

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// layout is where each array of a file lies, derived from the static header.
type layout struct {
	dim, pdim, words int
	m, m0, efc       int
	seed             uint64
	capacity         int
	upperCap         int
	label            string
	codes, scale     int64
	ids, info, upOff int64
	links0, upper    int64
	sums             int64 // the block sums: blocks uint32s
	blocks           int   // 4 KiB blocks from headerSize to sums
	size             int64
}

func align64(x int64) int64 { return (x + 63) &^ 63 }

func makeLayout(dim, m, m0, efc int, seed uint64, capacity, upperCap int, label string) layout {
	l := layout{dim: dim, pdim: paddedDim(dim), m: m, m0: m0, efc: efc, seed: seed, capacity: capacity, upperCap: upperCap, label: label}
	l.words = l.pdim / 64
	c := int64(capacity)
	off := int64(headerSize)
	next := func(n int64) int64 { o := off; off = align64(off + n); return o }
	l.codes = next(c * int64(l.words) * 8)
	l.scale = next(c * 4)
	l.ids = next(c * 8)
	l.info = next(c * 4)
	l.upOff = next(c * 4)
	l.links0 = next(c * int64(1+m0) * 4)
	l.upper = next(int64(upperCap) * 4)
	// The sums start on a page of their own, so that no block they cover
	// holds any of them.
	l.sums = (off + blockSize - 1) / blockSize * blockSize
	l.blocks = int((l.sums - headerSize) / blockSize)
	off = l.sums + int64(l.blocks)*4
	l.size = (off + headerSize - 1) / headerSize * headerSize
	return l
}

// upperCapFor is room for the upper lists of capacity nodes: a node has
// 1/(m-1) upper levels on average; twice that plus a margin is exceeded only
// by chance so small that growing the file then is fine.
func upperCapFor(capacity, m int) int {
	return (capacity/(m-1)*2 + 64) * (1 + m)
}

// writeStatic fills a fresh header for l.
func writeStatic(b []byte, l layout) {
	copy(b[0:8], magic)
	le := binary.LittleEndian
	le.PutUint32(b[8:], fileVersion)
	le.PutUint32(b[12:], uint32(l.dim))
	le.PutUint32(b[16:], uint32(l.pdim))
	le.PutUint32(b[20:], uint32(l.m))
	le.PutUint32(b[24:], uint32(l.m0))
	le.PutUint32(b[28:], uint32(l.efc))
	le.PutUint64(b[32:], l.seed)
	le.PutUint32(b[40:], uint32(l.capacity))
	le.PutUint32(b[44:], uint32(l.upperCap))
	copy(b[48:48+MaxLabel], l.label)
	le.PutUint32(b[staticSize:], crc32.Checksum(b[:staticSize], castagnoli))
	h := (*header)(unsafe.Pointer(&b[0]))
	h.Entry = noEntry
}

// parseLayout validates the header of a mapped file of size bytes.
func parseLayout(b []byte) (layout, error) {
	if len(b) < headerSize {
		return layout{}, fmt.Errorf("%w: %d bytes, shorter than the header", ErrCorrupt, len(b))
	}
	if string(b[:8]) != magic {
		return layout{}, fmt.Errorf("%w: not an index file (magic %q)", ErrCorrupt, b[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != fileVersion {
		return layout{}, fmt.Errorf("%w: file version %d, want %d", ErrCorrupt, v, fileVersion)
	}
	if crc32.Checksum(b[:staticSize], castagnoli) != le.Uint32(b[staticSize:]) {
		return layout{}, fmt.Errorf("%w: header checksum mismatch", ErrCorrupt)
	}
	dim, pdim := int(le.Uint32(b[12:])), int(le.Uint32(b[16:]))
	m, m0, efc := int(le.Uint32(b[20:])), int(le.Uint32(b[24:])), int(le.Uint32(b[28:]))
	capacity, upperCap := int(le.Uint32(b[40:])), int(le.Uint32(b[44:]))
	switch {
	case dim < 1 || dim > maxDim || pdim != paddedDim(dim):
		return layout{}, fmt.Errorf("%w: dimension %d (padded %d)", ErrCorrupt, dim, pdim)
	case m < 2 || m > 256 || m0 < m || m0 > 512 || efc < 1 || efc > 1<<16:
		return layout{}, fmt.Errorf("%w: graph parameters m %d, m0 %d, efConstruction %d", ErrCorrupt, m, m0, efc)
	}
	label := string(bytes.TrimRight(b[48:48+MaxLabel], "\x00"))
	l := makeLayout(dim, m, m0, efc, le.Uint64(b[32:]), capacity, upperCap, label)
	if l.size > int64(len(b)) {
		return layout{}, fmt.Errorf("%w: file has %d bytes, its header needs %d", ErrCorrupt, len(b), l.size)
	}
	h := (*header)(unsafe.Pointer(&b[0]))
	if n := atomic.LoadUint32(&h.Count); int(n) > capacity {
		return layout{}, fmt.Errorf("%w: %d nodes in room for %d", ErrCorrupt, n, capacity)
	}
	if u := atomic.LoadUint32(&h.UpperUsed); int(u) > upperCap {
		return layout{}, fmt.Errorf("%w: %d upper slots in room for %d", ErrCorrupt, u, upperCap)
	}
	return l, nil
}
