package sqlite

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// legacySaveFile writes the DGVEC002 sidecar format that preceded the
// mapped one: strings right after the header, then the matrix, unaligned.
// It is kept as the baseline of BenchmarkVecFileLoad and as an old file the
// current loader must refuse.
func legacySaveFile(x *vecIndex, out io.Writer) {
	w := bufio.NewWriterSize(out, 1<<20)
	var hdr [24]byte
	copy(hdr[:8], "DGVEC002")
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
	w.Flush()
}

// legacyLoadFile is the DGVEC002 loader: read the whole file, decode every
// string and float.
func legacyLoadFile(x *vecIndex, path string, gen int64) error {
	stale := errors.New("stale")
	data, err := os.ReadFile(path)
	if err != nil || len(data) < 24 || string(data[:8]) != "DGVEC002" ||
		int64(binary.LittleEndian.Uint64(data[8:])) != gen {
		return stale
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
		return stale
	}
	ids, docs := make([]string, n), make([]string, n)
	slot := make(map[string]int, n)
	for i := range n {
		id, ok1 := str()
		doc, ok2 := str()
		if !ok1 || !ok2 {
			return stale
		}
		ids[i], docs[i], slot[id] = id, doc, i
	}
	if len(data)-p != 4*n*dim || len(slot) != n {
		return stale
	}
	vecs := make([]float32, n*dim)
	for i := range vecs {
		vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[p+4*i:]))
	}
	x.ids, x.docs, x.vecs, x.slot, x.dim = ids, docs, vecs, slot, dim
	x.loaded, x.gen = true, gen
	return nil
}

// BenchmarkVecFileLoad loads a relation-sized sidecar (100k vectors of 384
// dimensions, hex ids, no docs) with the old decoder and through the
// mapping. The "+search" variants add the first search, which is where a
// mapped matrix pays for its pages: together they are what a one-shot query
// spends on the index.
func BenchmarkVecFileLoad(b *testing.B) {
	const n, dim = 100_000, 384
	x := newVecIndex("", "")
	x.reset()
	x.instance = "bench"
	r := rand.New(rand.NewPCG(5, 6))
	v := make([]float32, dim)
	for i := 0; i < n; i++ {
		for j := range v {
			v[j] = r.Float32() - 0.5
		}
		id := sha256.Sum256([]byte(strconv.Itoa(i)))
		x.put(hex.EncodeToString(id[:16]), "", v)
	}
	x.loaded, x.gen = true, 1
	dir := b.TempDir()
	mapped, legacy := filepath.Join(dir, "g.db.vec-relations"), filepath.Join(dir, "legacy")
	x.saveFile(mapped)
	f, err := os.Create(legacy)
	if err != nil {
		b.Fatal(err)
	}
	legacySaveFile(x, f)
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	q := v
	x = nil // let the collector have the matrix back before measuring

	for _, c := range []struct {
		name   string
		search bool
		load   func(y *vecIndex) error
	}{
		{"decode", false, func(y *vecIndex) error { return legacyLoadFile(y, legacy, 1) }},
		{"mapped", false, func(y *vecIndex) error { return y.loadFile(mapped, 1) }},
		{"decode+search", true, func(y *vecIndex) error { return legacyLoadFile(y, legacy, 1) }},
		{"mapped+search", true, func(y *vecIndex) error { return y.loadFile(mapped, 1) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(4 * n * dim)
			for b.Loop() {
				y := newVecIndex("", "")
				y.instance = "bench"
				if err := c.load(y); err != nil {
					b.Fatal(err)
				}
				if c.search && len(y.search(q, 10, nil)) != 10 {
					b.Fatal("search came back short")
				}
				y.reset() // unmaps
			}
		})
	}
}
