package sqlite

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// A vector sidecar file holds one table's normalised matrix as of a write
// generation, next to the database (graph.db.vec-relations). Loading tens of
// thousands of vectors through SQLite rows costs seconds in a fresh process;
// reading the sidecar costs a sequential file read, which is what makes a
// one-shot `query` fast. A sidecar whose generation is not the store's is
// ignored and rewritten on the next load, so it can never serve stale vectors.

const vecFileMagic = "DGVEC002"

// saveFile writes the loaded index to path atomically (temp file + rename).
// Failures are not errors: the sidecar is only a cache.
func (x *vecIndex) saveFile(path string) {
	if path == "" || !x.loaded {
		return
	}
	tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [24]byte
	copy(hdr[:8], vecFileMagic)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(x.gen))
	binary.LittleEndian.PutUint32(hdr[16:], uint32(len(x.ids)))
	binary.LittleEndian.PutUint32(hdr[20:], uint32(x.dim))
	w.Write(hdr[:])
	var n [2]byte
	binary.LittleEndian.PutUint16(n[:], uint16(len(x.instance)))
	w.Write(n[:])
	w.WriteString(x.instance)
	for i, id := range x.ids {
		for _, s := range []string{id, x.docs[i]} {
			binary.LittleEndian.PutUint16(n[:], uint16(len(s)))
			w.Write(n[:])
			w.WriteString(s)
		}
	}
	var b [4]byte
	for _, v := range x.vecs {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		w.Write(b[:])
	}
	if w.Flush() != nil || f.Close() != nil || os.Rename(tmp, path) != nil {
		os.Remove(tmp)
	}
}

var errStaleVecFile = errors.New("vector sidecar is missing, stale or damaged")

// loadFile fills the index from path if the file is intact and at generation gen.
func (x *vecIndex) loadFile(path string, gen int64) error {
	if path == "" {
		return errStaleVecFile
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 24 || string(data[:8]) != vecFileMagic ||
		int64(binary.LittleEndian.Uint64(data[8:])) != gen {
		return errStaleVecFile
	}
	n := int(binary.LittleEndian.Uint32(data[16:]))
	dim := int(binary.LittleEndian.Uint32(data[20:]))
	p := 24
	str := func() (string, bool) {
		if p+2 > len(data) {
			return "", false
		}
		l := int(binary.LittleEndian.Uint16(data[p:]))
		p += 2
		if p+l > len(data) {
			return "", false
		}
		s := string(data[p : p+l])
		p += l
		return s, true
	}
	if inst, ok := str(); !ok || inst != x.instance {
		return errStaleVecFile
	}
	ids, docs := make([]string, n), make([]string, n)
	slot := make(map[string]int, n)
	for i := range n {
		id, ok1 := str()
		doc, ok2 := str()
		if !ok1 || !ok2 {
			return errStaleVecFile
		}
		ids[i], docs[i], slot[id] = id, doc, i
	}
	if len(data)-p != 4*n*dim || len(slot) != n {
		return errStaleVecFile
	}
	vecs := make([]float32, n*dim)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[p+4*i:]))
	}
	x.ids, x.docs, x.vecs, x.slot, x.dim = ids, docs, vecs, slot, dim
	x.loaded, x.gen = true, gen
	return nil
}

// Warm loads the vector indexes now (writing their sidecars), so that the
// first query after an ingest does not pay for it.
func (s *Store) Warm(ctx context.Context) error {
	gen, err := s.generation(ctx)
	if err != nil {
		return fmt.Errorf("sqlite store %s: warm: %w", s.path, err)
	}
	for _, x := range []*vecIndex{s.chunkVecs, s.entityVecs, s.relationVecs} {
		if err := x.ensure(ctx, s.rdb, gen); err != nil {
			return fmt.Errorf("sqlite store %s: warm %s vectors: %w", s.path, x.table, err)
		}
	}
	return nil
}
