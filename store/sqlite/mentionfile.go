package sqlite

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"unsafe"

	"docgraph/store"
)

// A mentions sidecar (graph.db.mentions) holds the exact sequence of
// mentions ScanMentions returned for one state of the store. Scanning ~100k
// MENTIONED_IN rows through SQLite costs a fresh process a third of a
// second; the key and the sidecar cost it a tenth of that. Like the vector
// sidecars it is only a cache: a file that is missing, damaged or keyed by
// another state is ignored and rewritten by the next scan.
//
// What a scan returns is a function of the mention rows and of which
// documents are done. Every write of mention rows happens in inTx, which
// bumps the generation in the same transaction; SetStatus changes the done
// set without bumping it, and a pair of opposite flips keeps the number of
// done documents, so the key holds a hash of the done ids themselves. The
// instance tells a database from another one later created at the same path.
//
// Layout, little-endian integers:
//
//	0   magic "DGMEN002"
//	8   generation  uint64
//	16  done hash   sha256 of the sorted done document ids
//	48  rows        uint32
//	52  checksum    uint32: CRC-32C of the body
//	56  body: the instance as a uvarint length and its bytes, then per row
//	    the entity id (uvarint length, bytes), then the chunk id and the
//	    doc id each as a uvarint 0 for "the previous row's" or length+1
//	    followed by the bytes
//
// Rows come document by document and mostly chunk by chunk, so most rows
// store only their entity id. A scan from the file hands out substrings of
// one string: no row allocates.
const (
	mentionFileMagic  = "DGMEN002"
	mentionFileHeader = 56
	// maxMentionFile bounds the sidecar, which a hit reads whole into
	// memory: a larger graph is scanned from SQL every time.
	maxMentionFile = 256 << 20
)

var (
	errStaleMentionFile = errors.New("mentions sidecar is missing, stale or damaged")
	castagnoli          = crc32.MakeTable(crc32.Castagnoli)
)

// mentionKey is the state a mentions sidecar holds.
type mentionKey struct {
	gen  int64
	done [sha256.Size]byte
}

// readMentionKey reads the key of the snapshot tx sees. It must run in the
// transaction that scans the rows (or decides not to), so the sidecar is
// never labelled with a state it does not hold.
func readMentionKey(ctx context.Context, tx *sql.Tx) (mentionKey, error) {
	var k mentionKey
	var err error
	if k.gen, err = readGeneration(ctx, tx); err != nil {
		return k, fmt.Errorf("read generation: %w", err)
	}
	// One row rather than one per document: the driver's per-row cost is
	// most of reading a few thousand ids. Hex cannot contain the comma, so
	// the list splits back exactly; sorting here rather than by ORDER BY
	// avoids a temporary B-tree, as the status index yields rowid order.
	var list sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT group_concat(hex(id), ',') FROM documents WHERE status = 'done'`).Scan(&list); err != nil {
		return k, fmt.Errorf("read done documents: %w", err)
	}
	var ids []string
	if list.Valid { // NULL when no document is done
		ids = strings.Split(list.String, ",")
	}
	slices.Sort(ids)
	h := sha256.New()
	for _, id := range ids {
		io.WriteString(h, id)
		h.Write([]byte{','})
	}
	h.Sum(k.done[:0])
	return k, nil
}

// mentionWriter streams a scan's output into a temporary sidecar as the
// scan runs, so the miss path holds no copy of the graph, and renames it
// into place only once the scan completed. It gives up (and nothing is
// written) when the file cannot be made or would exceed limit. Failures are
// not errors: the sidecar is only a cache.
type mentionWriter struct {
	path       string
	limit      int64
	f          *os.File // made by createTemp; nil once given up or renamed
	w          *bufio.Writer
	crc        uint32
	size       int64 // bytes written, header included
	rows       uint64
	chunk, doc string
	num        [binary.MaxVarintLen64]byte
}

func newMentionWriter(path, instance string) *mentionWriter {
	f, err := createTemp(path)
	if err != nil {
		return &mentionWriter{} // failed: every call is a no-op
	}
	m := &mentionWriter{path: path, limit: maxMentionFile, f: f}
	// The header, not checksummed, is filled in by finish.
	if _, err := f.Write(make([]byte, mentionFileHeader)); err != nil {
		m.abort()
		return m
	}
	m.w = bufio.NewWriterSize(crcWriter{m}, 256<<10)
	m.str(instance, false)
	return m
}

// crcWriter checksums the body as bufio flushes it, a buffer at a time.
type crcWriter struct{ m *mentionWriter }

func (c crcWriter) Write(p []byte) (int, error) {
	c.m.crc = crc32.Update(c.m.crc, castagnoli, p)
	return c.m.f.Write(p)
}

// str writes s as a uvarint length and its bytes; with repeatable, the
// length is stored plus one, leaving 0 to mean "the previous row's".
func (m *mentionWriter) str(s string, repeatable bool) {
	n := uint64(len(s))
	if repeatable {
		n++
	}
	l := binary.PutUvarint(m.num[:], n)
	m.w.Write(m.num[:l])
	m.w.WriteString(s)
	m.size += int64(l + len(s))
}

func (m *mentionWriter) add(e store.Mention) {
	if m.f == nil {
		return
	}
	first := m.rows == 0
	m.str(e.EntityID, false)
	for _, f := range [2]struct{ cur, prev string }{{e.ChunkID, m.chunk}, {e.DocID, m.doc}} {
		if f.cur == f.prev && !first {
			m.w.WriteByte(0)
			m.size++
		} else {
			m.str(f.cur, true)
		}
	}
	m.chunk, m.doc = e.ChunkID, e.DocID
	m.rows++
	if mentionFileHeader+m.size > m.limit || m.rows > math.MaxUint32 {
		m.abort()
	}
}

// abort drops the temporary file.
func (m *mentionWriter) abort() {
	if m.f == nil {
		return
	}
	discardTemp(m.f)
	m.f = nil
}

// finish labels the file with key and moves it into place.
func (m *mentionWriter) finish(key mentionKey) {
	if m.f == nil {
		return
	}
	defer m.abort() // no-op once renamed
	if m.w.Flush() != nil {
		return
	}
	var hdr [mentionFileHeader]byte
	copy(hdr[:8], mentionFileMagic)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(key.gen))
	copy(hdr[16:48], key.done[:])
	binary.LittleEndian.PutUint32(hdr[48:], uint32(m.rows))
	binary.LittleEndian.PutUint32(hdr[52:], m.crc)
	if _, err := m.f.WriteAt(hdr[:], 0); err != nil {
		return
	}
	f := m.f
	m.f = nil
	commitTemp(f, m.path)
}

// mentionFile is a checked sidecar body.
type mentionFile struct {
	body  string
	start int // first row
	rows  int
}

// loadMentionFile reads path if it is intact and holds the state key of the
// database instance.
func loadMentionFile(path, instance string, key mentionKey) (*mentionFile, error) {
	var hdr [mentionFileHeader]byte
	f, size, ok := openSidecar(path, mentionFileMagic, key.gen, hdr[:])
	if !ok {
		return nil, errStaleMentionFile
	}
	defer f.Close()
	if [sha256.Size]byte(hdr[16:48]) != key.done || size > maxMentionFile {
		return nil, errStaleMentionFile
	}
	buf := make([]byte, size-mentionFileHeader)
	if _, err := io.ReadFull(f, buf); err != nil || crc32.Checksum(buf, castagnoli) != binary.LittleEndian.Uint32(hdr[52:]) {
		return nil, errStaleMentionFile
	}
	// buf is never written again, so the ids can be cut from it directly
	// instead of from a second copy.
	m := &mentionFile{body: unsafe.String(unsafe.SliceData(buf), len(buf)), rows: int(binary.LittleEndian.Uint32(hdr[48:]))}
	inst, _, p, ok := m.str(0, false)
	if !ok || inst != instance {
		return nil, errStaleMentionFile
	}
	m.start = p
	// Every row is parsed once before the first is handed out, so a bad
	// file never delivers half a scan.
	var prev store.Mention
	for i := range m.rows {
		if prev, p, ok = m.row(p, prev, i == 0); !ok {
			return nil, errStaleMentionFile
		}
	}
	if p != len(m.body) {
		return nil, errStaleMentionFile
	}
	return m, nil
}

// uvarint decodes an unsigned varint at p of m.body.
func (m *mentionFile) uvarint(p int) (n uint64, next int, ok bool) {
	for shift := 0; shift < 64 && p < len(m.body); shift += 7 {
		b := m.body[p]
		p++
		n |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return n, p, true
		}
	}
	return 0, p, false
}

// str decodes the string at p. With repeatable, a 0 length means the
// previous row's value, reported as same.
func (m *mentionFile) str(p int, repeatable bool) (s string, same bool, next int, ok bool) {
	n, p, ok := m.uvarint(p)
	if !ok {
		return "", false, p, false
	}
	if repeatable {
		if n == 0 {
			return "", true, p, true
		}
		n--
	}
	if n > uint64(len(m.body)-p) {
		return "", false, p, false
	}
	return m.body[p : p+int(n)], false, p + int(n), true
}

// row decodes the row at p, whose predecessor was prev; the first row has
// none to repeat.
func (m *mentionFile) row(p int, prev store.Mention, first bool) (store.Mention, int, bool) {
	e, _, p, ok1 := m.str(p, false)
	c, sameC, p, ok2 := m.str(p, true)
	d, sameD, p, ok3 := m.str(p, true)
	if !ok1 || !ok2 || !ok3 || (first && (sameC || sameD)) {
		return prev, p, false
	}
	out := store.Mention{EntityID: e, ChunkID: c, DocID: d}
	if sameC {
		out.ChunkID = prev.ChunkID
	}
	if sameD {
		out.DocID = prev.DocID
	}
	return out, p, true
}

// scan calls fn for every row in file order; db names the store in errors.
func (m *mentionFile) scan(ctx context.Context, db string, fn func(store.Mention) error) error {
	p := m.start
	var cur store.Mention
	for i := range m.rows {
		// The SQL scan notices a cancelled context between steps; this one
		// checks as often as a page of rows would.
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("sqlite store %s: scan mentions: %w", db, err)
			}
		}
		cur, p, _ = m.row(p, cur, i == 0) // checked by loadMentionFile
		if err := fn(cur); err != nil {
			return err
		}
	}
	return nil
}
