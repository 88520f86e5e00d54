package sqlite

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"docgraph/store/storetest"
)

// mapsFiles reports whether loadFile maps sidecars here rather than reading them.
func mapsFiles() bool {
	return nativeLittle && (runtime.GOOS == "linux" || runtime.GOOS == "darwin")
}

func (s *Store) vecIndexes() []*vecIndex {
	return []*vecIndex{s.chunkVecs, s.entityVecs, s.relationVecs}
}

// sidecarStore opens a store at path holding docs synthetic documents with
// chunk, entity and relation vectors.
func sidecarStore(t *testing.T, path string, docs ...string) *Store {
	t.Helper()
	s := openAt(t, path)
	for i, id := range docs {
		writeSynthetic(t, s, id, uint64(i))
	}
	return s
}

func writeSynthetic(t *testing.T, s *Store, id string, seed uint64) {
	t.Helper()
	w := synthetic(syntheticSize{docID: id, path: id + ".txt", chunks: 12, entities: 48, relations: 60, pool: 80, seed: seed, dim: storetest.Dimension})
	if err := s.WriteDocument(context.Background(), w); err != nil {
		t.Fatal(err)
	}
}

func randomQueries(n int) [][]float32 {
	r := rand.New(rand.NewPCG(7, 11))
	qs := make([][]float32, n)
	for i := range qs {
		qs[i] = make([]float32, storetest.Dimension)
		for j := range qs[i] {
			qs[i][j] = float32(r.NormFloat64())
		}
	}
	return qs
}

// checkAgainstRows brings each of s's indexes to the current generation the
// way a search does, and compares its answers with an index loaded from the
// SQLite rows. It returns how many of the indexes ended up on a mapping.
func checkAgainstRows(t *testing.T, s *Store) (mapped int) {
	t.Helper()
	ctx := context.Background()
	gen, err := s.generation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range s.vecIndexes() {
		if err := x.ensure(ctx, s.rdb, gen); err != nil {
			t.Fatal(err)
		}
		ref := newVecIndex(x.table, x.query)
		if err := ref.ensure(ctx, s.rdb, gen); err != nil {
			t.Fatal(err)
		}
		if len(x.ids) != len(ref.ids) || len(ref.ids) == 0 {
			t.Fatalf("%s: index holds %d vectors, the rows %d", x.table, len(x.ids), len(ref.ids))
		}
		for _, q := range randomQueries(8) {
			got, want := x.search(q, 10, nil), ref.search(q, 10, nil)
			if len(got) != len(want) {
				t.Fatalf("%s: %d hits, want %d", x.table, len(got), len(want))
			}
			for i := range got {
				if got[i].id != want[i].id || math.Abs(got[i].score-want[i].score) > 1e-6 {
					t.Fatalf("%s: hit %d = %s %.7f, want %s %.7f", x.table, i, got[i].id, got[i].score, want[i].id, want[i].score)
				}
			}
		}
		if x.mapped != nil {
			mapped++
		}
	}
	return mapped
}

func readSidecars(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, table := range []string{"chunks", "entities", "relations"} {
		b, err := os.ReadFile(path + ".vec-" + table)
		if err != nil {
			t.Fatal(err)
		}
		files[table] = b
	}
	return files
}

func sameSidecars(a, b map[string][]byte) bool {
	for k := range a {
		if !bytes.Equal(a[k], b[k]) {
			return false
		}
	}
	return len(a) == len(b)
}

// TestVecFileMappedRoundTrip checks that indexes mapped from sidecars hold
// exactly what loading the rows gives, and answer searches identically.
func TestVecFileMappedRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s := sidecarStore(t, path, "d1", "d2", "d3")
	q := randomQueries(1)[0]
	want, err := s.SearchChunks(ctx, q, 5) // loads from rows, writes the sidecar
	if err != nil || len(want) != 5 {
		t.Fatalf("search from rows: %d hits, %v", len(want), err)
	}
	if err := s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	saved := map[string]*vecIndex{} // copies: Close drops the indexes
	for _, x := range s.vecIndexes() {
		saved[x.table] = &vecIndex{ids: slices.Clone(x.ids), docs: slices.Clone(x.docs), vecs: slices.Clone(x.vecs), dim: x.dim}
	}
	s.Close()

	s = sidecarStore(t, path)
	defer s.Close()
	got, err := s.SearchChunks(ctx, q, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Score != want[i].Score {
			t.Errorf("hit %d from sidecar = %s %v, from rows %s %v", i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
	if err := s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	for _, x := range s.vecIndexes() {
		ref := saved[x.table]
		// Vectors compare as their stored bytes: bit-exact, NaNs included.
		if !slices.Equal(x.ids, ref.ids) || !slices.Equal(x.docs, ref.docs) || x.dim != ref.dim ||
			!bytes.Equal(encodeVector(x.vecs), encodeVector(ref.vecs)) {
			t.Errorf("%s: index loaded from the sidecar differs from the one that wrote it", x.table)
		}
		if mapsFiles() && x.mapped == nil {
			t.Errorf("%s: sidecar was not mapped", x.table)
		}
	}
	if n := checkAgainstRows(t, s); mapsFiles() && n != 3 {
		t.Errorf("%d of 3 indexes mapped", n)
	}
}

// TestVecFileUpdatesAfterLoad writes to a store whose indexes were mapped
// from sidecars: the in-process indexes follow every write, the files stay
// as they were (the mapping is private) until the next load from rows
// rewrites them, and growth moves a matrix off its mapping.
func TestVecFileUpdatesAfterLoad(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s := sidecarStore(t, path, "d1", "d2", "d3")
	if err := s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := readSidecars(t, path)

	s = sidecarStore(t, path)
	if err := s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		write  func()
		mapped bool // whether the chunk matrix still lives in the mapping
	}{
		// Replacing a document removes its chunks and puts as many back:
		// rows are patched inside the mapping.
		{"replace", func() { writeSynthetic(t, s, "d2", 99) }, true},
		{"delete", func() {
			if err := s.DeleteDocument(ctx, "d1"); err != nil {
				t.Fatal(err)
			}
		}, true},
		// More chunks than the mapping has rows: the matrix grows onto the heap.
		{"add", func() { writeSynthetic(t, s, "d4", 4); writeSynthetic(t, s, "d5", 5) }, false},
	}
	for _, st := range steps {
		st.write()
		checkAgainstRows(t, s)
		if got := s.chunkVecs.mapped != nil; mapsFiles() && got != st.mapped {
			t.Errorf("after %s: chunk matrix mapped = %v, want %v", st.name, got, st.mapped)
		}
		if !sameSidecars(before, readSidecars(t, path)) {
			t.Fatalf("after %s: a sidecar changed on disk", st.name)
		}
	}
	s.Close()

	// The next process finds the sidecars stale, loads the rows and
	// rewrites them; the one after maps the new files.
	s = sidecarStore(t, path)
	if n := checkAgainstRows(t, s); n != 0 {
		t.Errorf("%d indexes mapped from stale sidecars", n)
	}
	s.Close()
	if sameSidecars(before, readSidecars(t, path)) {
		t.Fatal("stale sidecars were not rewritten")
	}
	s = sidecarStore(t, path)
	defer s.Close()
	if n := checkAgainstRows(t, s); mapsFiles() && n != 3 {
		t.Errorf("%d of 3 rewritten sidecars mapped", n)
	}
}

// TestVecFileReopenAfterClose checks that Close drops the mappings, that a
// closed store fails searches cleanly, and that a new Store maps again.
func TestVecFileReopenAfterClose(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "g.db")
	s := sidecarStore(t, path, "d1", "d2")
	if err := s.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	q := randomQueries(1)[0]
	for round := 0; round < 3; round++ {
		s = sidecarStore(t, path)
		if n := checkAgainstRows(t, s); mapsFiles() && n != 3 {
			t.Fatalf("round %d: %d of 3 indexes mapped", round, n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		for _, x := range s.vecIndexes() {
			if x.mapped != nil || x.vecs != nil || x.loaded {
				t.Fatalf("round %d: %s index kept after Close", round, x.table)
			}
		}
		if _, err := s.SearchChunks(ctx, q, 3); err == nil {
			t.Fatalf("round %d: search on a closed store succeeded", round)
		}
	}
}

// TestVecFileStale checks that every kind of unusable sidecar is refused
// before its matrix is touched, and that an intact one round-trips.
func TestVecFileStale(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	x := newVecIndex("", "")
	x.reset()
	x.instance = "inst"
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		v := make([]float32, 24)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		x.put(fmt.Sprintf("id-%d", i), fmt.Sprintf("doc-%d", i%7), v)
	}
	x.loaded, x.gen = true, 7
	x.saveFile(good)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if off := len(data) - 4*50*24; off%vecFileAlign != 0 {
		t.Fatalf("matrix starts at %d, not aligned to %d", off, vecFileAlign)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(data)) }
	putU32 := func(at int, v uint32) []byte {
		return edit(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[at:], v); return b })
	}
	putU64 := func(at int, v uint64) []byte {
		return edit(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[at:], v); return b })
	}
	strBytes := binary.LittleEndian.Uint64(data[24:])
	var legacy bytes.Buffer
	legacySaveFile(x, &legacy)

	for _, c := range []struct {
		name     string
		file     []byte // nil: no file
		gen      int64
		instance string
		ok       bool
	}{
		{"intact", data, 7, "inst", true},
		{"missing", nil, 7, "inst", false},
		{"other generation", data, 8, "inst", false},
		{"other instance", data, 7, "other", false},
		{"empty", []byte{}, 7, "inst", false},
		{"truncated header", data[:20], 7, "inst", false},
		{"truncated in strings", data[:100], 7, "inst", false},
		{"truncated by one byte", data[:len(data)-1], 7, "inst", false},
		{"truncated by one row", data[:len(data)-4*24], 7, "inst", false},
		{"one byte appended", append(bytes.Clone(data), 0), 7, "inst", false},
		{"old magic", edit(func(b []byte) []byte { copy(b, "DGVEC002"); return b }), 7, "inst", false},
		{"old format", legacy.Bytes(), 7, "inst", false},
		{"more rows", putU32(16, 51), 7, "inst", false},
		{"huge rows", putU32(16, math.MaxUint32), 7, "inst", false},
		{"huge dimension", putU32(20, math.MaxUint32), 7, "inst", false},
		{"rows without dimension", putU32(20, 0), 7, "inst", false},
		{"string table longer", putU64(24, strBytes+1), 7, "inst", false},
		{"string table shorter", putU64(24, strBytes-1), 7, "inst", false},
		{"string table past the end", putU64(24, math.MaxUint64), 7, "inst", false},
		{"damaged string length", edit(func(b []byte) []byte { b[vecFileHeader] = 0xff; return b }), 7, "inst", false},
		{"duplicate id", edit(func(b []byte) []byte { return bytes.Replace(b, []byte("id-1\x05"), []byte("id-0\x05"), 1) }), 7, "inst", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "case")
			os.Remove(path)
			if c.file != nil {
				if err := os.WriteFile(path, c.file, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			y := newVecIndex("", "")
			y.reset()
			y.instance = c.instance
			err := y.loadFile(path, c.gen)
			if !c.ok {
				if err == nil || y.loaded || y.mapped != nil || y.ids != nil {
					t.Fatalf("loaded a bad sidecar: err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(y.ids, x.ids) || !slices.Equal(y.docs, x.docs) || !bytes.Equal(encodeVector(y.vecs), encodeVector(x.vecs)) || y.gen != 7 {
				t.Fatal("sidecar does not round-trip")
			}
			if mapsFiles() != (y.mapped != nil) {
				t.Errorf("mapped = %v on %s/%s", y.mapped != nil, runtime.GOOS, runtime.GOARCH)
			}
			// Replacing the file (as saveFile does, by rename) leaves the
			// mapping valid; the index keeps serving what it loaded.
			z := newVecIndex("", "")
			z.reset()
			z.instance = "inst"
			z.put("other", "", make([]float32, 24))
			z.loaded, z.gen = true, 8
			z.saveFile(path)
			if got := y.search(x.vecs[:24], 1, nil); len(got) != 1 || got[0].id != "id-0" {
				t.Errorf("search after the file was replaced = %v", got)
			}
			y.reset()
			if y.mapped != nil {
				t.Error("reset kept the mapping")
			}
		})
	}
}
