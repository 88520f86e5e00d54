package ann

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clustered makes n vectors of dim dimensions around k random centres
// (Gaussian noise of the given spread): dense data like a real embedder's.
func clustered(seed uint64, n, dim, k int, spread float64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	centres := make([][]float64, k)
	for i := range centres {
		centres[i] = make([]float64, dim)
		for j := range centres[i] {
			centres[i][j] = r.NormFloat64()
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(k)]
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(c[j] + spread*r.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func itemsOf(vecs [][]float32, base int64) []Item {
	items := make([]Item, len(vecs))
	for i, v := range vecs {
		items[i] = Item{ID: base + int64(i), Vec: v}
	}
	return items
}

func seqOf(items []Item) func(yield func(int64, []float32) bool) {
	return func(yield func(int64, []float32) bool) {
		for _, it := range items {
			if !yield(it.ID, it.Vec) {
				return
			}
		}
	}
}

func openTestWriter(t *testing.T, path string, dim int) *Writer {
	t.Helper()
	w, err := OpenWriter(context.Background(), path, Options{Dim: dim, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func openTestReader(t *testing.T, path string) *Reader {
	t.Helper()
	r, err := OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// measureRecall is recall@10 of r against exact search over vecs (ids are
// indexes), with exact re-scoring.
func measureRecall(t *testing.T, r *Reader, vecs, queries [][]float32, ef int) float64 {
	t.Helper()
	tr := exactTopK(vecs, queries, 10)
	hit := 0
	for qi, q := range queries {
		hits, err := r.Search(q, 10, SearchOptions{Ef: ef, Exact: exactFor(vecs, q)})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := tr.recall(qi, hits, vecs, q)
		hit += p
	}
	return float64(hit) / float64(10*len(queries))
}

// checkGraph verifies what readers rely on: every list count is within
// bounds and every published slot names a published node.
func checkGraph(t *testing.T, v *view) {
	t.Helper()
	n := v.count()
	for i := range n {
		for l := 0; l <= v.level(i); l++ {
			blk := v.block(i, l)
			if blk == nil {
				t.Fatalf("node %d has no list at layer %d of %d", i, l, v.level(i))
			}
			if int(blk[0]) > len(blk)-1 {
				t.Fatalf("node %d layer %d: count %d > %d", i, l, blk[0], len(blk)-1)
			}
			for _, nb := range blk[1 : 1+blk[0]] {
				if nb >= n {
					t.Fatalf("node %d layer %d links to %d of %d nodes", i, l, nb, n)
				}
			}
		}
	}
}

func TestRecallSynthetic(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 2000
	}
	for _, tc := range []struct {
		name  string
		dim   int
		apply bool
	}{
		{"dim64 build", 64, false},
		{"dim384 apply", 384, true},
		{"dim768 build", 768, false},
		{"dim100 build", 100, false}, // not a power of two: padded
	} {
		t.Run(tc.name, func(t *testing.T) {
			all := clustered(uint64(tc.dim), n+100, tc.dim, 50, 0.6)
			vecs, queries := all[:n], all[n:]
			path := filepath.Join(t.TempDir(), "idx")
			w := openTestWriter(t, path, tc.dim)
			var err error
			if tc.apply {
				err = w.Apply(1, itemsOf(vecs, 0), nil)
			} else {
				err = w.Build(1, seqOf(itemsOf(vecs, 0)))
			}
			if err != nil {
				t.Fatal(err)
			}
			checkGraph(t, w.m.v)
			r := openTestReader(t, path)
			if r.Len() != n || r.Generation() != 1 || r.Dirty() {
				t.Fatalf("Len %d Generation %d Dirty %v, want %d 1 false", r.Len(), r.Generation(), r.Dirty(), n)
			}
			if rec := measureRecall(t, r, vecs, queries, 200); rec < 0.95 {
				t.Errorf("recall@10 %.3f < 0.95", rec)
			}
		})
	}
}

func TestSelfSearch(t *testing.T) {
	// Without Exact, hits carry estimates; a stored vector finds itself
	// among the first few (close neighbours may be estimated higher).
	vecs := clustered(3, 1500, 64, 20, 0.5)
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, 64)
	if err := w.Apply(1, itemsOf(vecs, 1000), nil); err != nil {
		t.Fatal(err)
	}
	r := openTestReader(t, path)
	miss := 0
	for i := 0; i < len(vecs); i += 7 {
		hits, err := r.Search(vecs[i], 5, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 5 {
			t.Fatalf("%d hits, want 5", len(hits))
		}
		if !slices.ContainsFunc(hits, func(h Hit) bool { return h.ID == int64(1000+i) }) {
			miss++
		}
		if math.Abs(float64(hits[0].Score)-1) > 0.2 {
			t.Errorf("estimate of self-similarity %.3f, want about 1", hits[0].Score)
		}
	}
	if miss > 0 {
		t.Errorf("%d of %d vectors are not among their own first 5 hits", miss, len(vecs)/7)
	}
}

func TestUpsertReplaceDelete(t *testing.T) {
	vecs := clustered(4, 600, 32, 10, 0.5)
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, 32)
	if err := w.Apply(1, itemsOf(vecs[:500], 0), nil); err != nil {
		t.Fatal(err)
	}
	r := openTestReader(t, path)
	exactAll := func(q []float32, cur map[int64][]float32) func([]int64) ([]float32, error) {
		return func(ids []int64) ([]float32, error) {
			out := make([]float32, len(ids))
			for i, id := range ids {
				out[i] = cosine(q, cur[id])
			}
			return out, nil
		}
	}
	cur := map[int64][]float32{}
	for i, v := range vecs[:500] {
		cur[int64(i)] = v
	}

	// An unchanged vector adds no node.
	if err := w.Apply(2, itemsOf(vecs[:10], 0), nil); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Nodes != 500 || st.Live != 500 || st.Deleted != 0 {
		t.Fatalf("after unchanged upserts: %+v", st)
	}

	// Id 7 gets vector 550's value: a search for it finds id 7 at score 1.
	if err := w.Apply(3, []Item{{7, vecs[550]}}, []int64{8, 9, 12345}); err != nil {
		t.Fatal(err)
	}
	cur[7] = vecs[550]
	delete(cur, 8)
	delete(cur, 9)
	if st := w.Stats(); st.Nodes != 501 || st.Live != 498 || st.Deleted != 3 || st.Generation != 3 {
		t.Fatalf("after replace and deletes: %+v", st)
	}
	if r.Len() != 498 || r.Generation() != 3 {
		t.Fatalf("reader Len %d Generation %d", r.Len(), r.Generation())
	}
	hits, err := r.Search(vecs[550], 3, SearchOptions{Exact: exactAll(vecs[550], cur)})
	if err != nil {
		t.Fatal(err)
	}
	if hits[0].ID != 7 || math.Abs(float64(hits[0].Score)-1) > 1e-5 {
		t.Errorf("search for the new vector of id 7: %v", hits)
	}
	// The old vector of 7, and the deleted 8 and 9, are never returned.
	for _, q := range [][]float32{vecs[7], vecs[8], vecs[9]} {
		hits, err := r.Search(q, 20, SearchOptions{Exact: exactAll(q, cur)})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, h := range hits {
			if h.ID == 8 || h.ID == 9 {
				t.Errorf("deleted id %d returned", h.ID)
			}
			if seen[h.ID] {
				t.Errorf("id %d returned twice", h.ID)
			}
			seen[h.ID] = true
			if h.ID == 7 && h.Score > 0.999 && !slices.Equal(vecs[7], vecs[550]) {
				t.Errorf("old vector of id 7 matched")
			}
		}
	}
}

func TestSkip(t *testing.T) {
	vecs := clustered(5, 800, 48, 8, 0.4)
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, 48)
	if err := w.Build(1, seqOf(itemsOf(vecs, 0))); err != nil {
		t.Fatal(err)
	}
	r := openTestReader(t, path)
	odd := func(id int64) bool { return id%2 == 1 }
	for qi := 0; qi < 50; qi++ {
		q := vecs[qi*16]
		hits, err := r.Search(q, 10, SearchOptions{Skip: odd, Exact: exactFor(vecs, q)})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 10 {
			t.Fatalf("%d hits, want 10", len(hits))
		}
		for _, h := range hits {
			if odd(h.ID) {
				t.Fatalf("skipped id %d returned", h.ID)
			}
		}
		if hits[0].ID != int64(qi*16) {
			t.Errorf("query %d: first hit %d, want itself", qi*16, hits[0].ID)
		}
	}
	// Skipping everything returns nothing and stops.
	hits, err := r.Search(vecs[0], 10, SearchOptions{Skip: func(int64) bool { return true }})
	if err != nil || len(hits) != 0 {
		t.Fatalf("skip all: %v %v", hits, err)
	}
}

func TestReopenAndDeterminism(t *testing.T) {
	vecs := clustered(6, 1200, 40, 12, 0.5)
	dir := t.TempDir()
	var files [2][]byte
	for k := range 2 {
		path := filepath.Join(dir, fmt.Sprint("idx", k))
		w, err := OpenWriter(context.Background(), path, Options{Dim: 40, Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		// Two batches, closing and reopening the writer in between.
		if err := w.Apply(1, itemsOf(vecs[:700], 0), []int64{3}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w, err = OpenWriter(context.Background(), path, Options{Dim: 40}); err != nil {
			t.Fatal(err)
		}
		if err := w.Apply(2, itemsOf(vecs[700:], 700), []int64{5, 6}); err != nil {
			t.Fatal(err)
		}
		if st := w.Stats(); st.Live != 1198 || st.Generation != 2 {
			t.Fatalf("stats after reopen: %+v", st)
		}
		w.Close()
		if files[k], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(files[0], files[1]) {
		t.Error("the same items applied twice made different files")
	}
	r := openTestReader(t, filepath.Join(dir, "idx0"))
	if rec := measureRecall(t, r, vecs, vecs[:40], 200); rec < 0.95 {
		t.Errorf("recall after reopen %.3f", rec)
	}
	if _, err := OpenWriter(context.Background(), filepath.Join(dir, "idx0"), Options{Dim: 41}); !errors.Is(err, ErrMismatch) {
		t.Errorf("open with another dimension: %v, want ErrMismatch", err)
	}
}

func TestCrashHalfway(t *testing.T) {
	vecs := clustered(7, 1000, 64, 10, 0.5)
	path := filepath.Join(t.TempDir(), "idx")
	w, err := OpenWriter(context.Background(), path, Options{Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(1, itemsOf(vecs[:500], 0), nil); err != nil {
		t.Fatal(err)
	}
	// Generation 2 replaces ids 0-99 and adds 500-999; it dies after
	// publishing its 300th node, before any node links back to it.
	batch := append(itemsOf(vecs[500:600], 0), itemsOf(vecs[500:], 500)...)
	published := 0
	testHookPublished = func(uint32) bool { published++; return published == 300 }
	err = w.Apply(2, batch, []int64{400})
	testHookPublished = nil
	if !errors.Is(err, errHalted) {
		t.Fatalf("Apply with the halting hook: %v", err)
	}
	if err := w.Apply(3, nil, nil); !errors.Is(err, errHalted) {
		t.Fatalf("Apply after the halt: %v, want it refused", err)
	}
	w.Close()

	r := openTestReader(t, path)
	if r.Generation() != 1 || !r.Dirty() {
		t.Fatalf("after the crash: Generation %d Dirty %v, want 1 true", r.Generation(), r.Dirty())
	}
	for _, q := range vecs[:50] {
		if _, err := r.Search(q, 10, SearchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	w2 := openTestWriter(t, path, 64)
	if !w2.Stats().Dirty || !w2.recovering {
		t.Fatal("reopened writer does not see the dirty header")
	}
	checkGraph(t, w2.m.v)
	// Replay everything changed since generation 1.
	if err := w2.Apply(2, batch, []int64{400}); err != nil {
		t.Fatal(err)
	}
	st := w2.Stats()
	if st.Dirty || st.Generation != 2 || st.Live != 999 {
		t.Fatalf("after replay: %+v", st)
	}
	checkGraph(t, w2.m.v)
	final := slices.Clone(vecs)
	copy(final[:100], vecs[500:600])
	final[400] = make([]float32, 64) // deleted: scores 0, never returned
	// The replay grew the file: the reader follows without a Refresh.
	if r.Generation() != 2 || r.Dirty() {
		t.Fatalf("reader after replay: Generation %d Dirty %v", r.Generation(), r.Dirty())
	}
	if rec := measureRecall(t, r, final, final[100:150], 200); rec < 0.95 {
		t.Errorf("recall after replay %.3f", rec)
	}
	for id := range int64(1000) {
		if id == 400 {
			continue
		}
		hits, err := r.Search(final[id], 1, SearchOptions{Exact: exactFor(final, final[id])})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || cosine(final[hits[0].ID], final[id]) < 0.9999 {
			t.Fatalf("id %d not found after replay: %v", id, hits)
		}
	}
}

func TestConcurrentReadWrite(t *testing.T) {
	const dim = 32
	vecs := clustered(8, 6000, dim, 30, 0.5)
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, dim)
	if err := w.Apply(1, itemsOf(vecs[:200], 0), nil); err != nil {
		t.Fatal(err)
	}
	r := openTestReader(t, path)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var searches atomic.Int64
	for g := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 2))
			for !stop.Load() {
				q := vecs[rng.IntN(len(vecs))]
				hits, err := r.Search(q, 10, SearchOptions{Ef: 64, Exact: exactFor(vecs, q)})
				if err != nil {
					t.Error(err)
					return
				}
				for _, h := range hits {
					if h.ID < 0 || h.ID >= int64(len(vecs)) {
						t.Errorf("hit id %d out of range", h.ID)
						return
					}
				}
				if rng.IntN(20) == 0 {
					if err := r.Refresh(); err != nil {
						t.Error(err)
						return
					}
				}
				searches.Add(1)
			}
		})
	}
	// Batches that add, replace and delete, growing the file past its
	// first capacity (1024 nodes) twice and compacting once.
	gen := uint64(1)
	for lo := 200; lo < len(vecs); lo += 500 {
		gen++
		hi := min(lo+500, len(vecs))
		del := []int64{int64(lo - 100), int64(lo - 99)}
		upd := itemsOf(vecs[lo:hi], int64(lo))
		upd = append(upd, Item{int64(lo - 50), vecs[lo-49]})
		if err := w.Apply(gen, upd, del); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Compact(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	// Compact replaced the file: the reader follows by itself.
	if r.Generation() != gen || r.Len() != w.Stats().Live || w.Stats().Deleted != 0 {
		t.Errorf("reader Generation %d Len %d, writer %+v", r.Generation(), r.Len(), w.Stats())
	}
	t.Logf("%d searches ran during the writes", searches.Load())
}

func TestWriterLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	w1 := openTestWriter(t, path, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := OpenWriter(ctx, path, Options{Dim: 8}); !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second writer: %v, want ErrLocked and DeadlineExceeded", err)
	}
	got := make(chan error)
	go func() {
		w2, err := OpenWriter(context.Background(), path, Options{Dim: 8})
		if err == nil {
			err = w2.Apply(2, []Item{{1, []float32{1, 0, 0, 0, 0, 0, 0, 0}}}, nil)
			w2.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second writer did not wait: %v", err)
	case <-time.After(30 * time.Millisecond):
	}
	if err := w1.Apply(1, []Item{{2, []float32{0, 1, 0, 0, 0, 0, 0, 0}}}, nil); err != nil {
		t.Fatal(err)
	}
	w1.Close()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	r := openTestReader(t, path)
	if r.Len() != 2 || r.Generation() != 2 {
		t.Errorf("Len %d Generation %d, want 2 2", r.Len(), r.Generation())
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenReader(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(dir, "idx")
	w := openTestWriter(t, path, 16)
	if err := w.Apply(1, itemsOf(clustered(9, 300, 16, 4, 0.5), 0), nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	damage := map[string]func(b []byte) []byte{
		"empty":       func(b []byte) []byte { return nil },
		"truncated":   func(b []byte) []byte { return b[:len(b)/2] },
		"header only": func(b []byte) []byte { return b[:headerSize] },
		"magic":       func(b []byte) []byte { b[0] = 'X'; return b },
		"version":     func(b []byte) []byte { b[8] = 9; return b },
		"static":      func(b []byte) []byte { b[40]++; return b }, // capacity, caught by the checksum
		"count":       func(b []byte) []byte { b[123] = 0xff; return b },
		"upper":       func(b []byte) []byte { b[127] = 0xff; return b },
	}
	for name, f := range damage {
		bad := filepath.Join(dir, name)
		if err := os.WriteFile(bad, f(slices.Clone(good)), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenReader(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	r := openTestReader(t, path)
	if _, err := r.Search(make([]float32, 15), 5, SearchOptions{}); !errors.Is(err, ErrMismatch) {
		t.Errorf("query of the wrong length: %v", err)
	}
	if _, err := OpenWriter(context.Background(), path, Options{}); err == nil {
		t.Error("OpenWriter without a dimension succeeded")
	}
}

// FuzzOpen feeds damaged files to the reader: opening and searching must
// fail or succeed, never panic or hang. The fuzzer's input is small (a
// list of byte changes and a length to cut the file to) and applied to a
// real index file: whole files as inputs make the fuzzer crawl.
func FuzzOpen(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed")
	w, err := OpenWriter(context.Background(), path, Options{Dim: 8, M: 4})
	if err != nil {
		f.Fatal(err)
	}
	if err := w.Apply(1, itemsOf(clustered(10, 60, 8, 3, 0.5), 0), nil); err != nil {
		f.Fatal(err)
	}
	w.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	// Each change is 4 bytes: a file offset (3 bytes, big-endian, taken
	// modulo the length) and a byte to xor there.
	f.Add([]byte{}, uint32(0))
	f.Add([]byte{0, 0, 120, 0xff}, uint32(0))               // count
	f.Add([]byte{0, 0, 128, 0x05, 0, 0, 132, 1}, uint32(0)) // entry
	f.Add([]byte{0, 0x10, 0x80, 0x7f}, uint32(0))           // codes
	f.Add([]byte{}, uint32(5000))
	f.Fuzz(func(t *testing.T, changes []byte, cut uint32) {
		b := slices.Clone(good)
		for ; len(changes) >= 4; changes = changes[4:] {
			off := (int(changes[0])<<16 | int(changes[1])<<8 | int(changes[2])) % len(b)
			b[off] ^= changes[3]
		}
		if cut > 0 && int(cut) < len(b) {
			b = b[:cut]
		}
		p := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReader(p)
		if err != nil {
			return
		}
		defer r.Close()
		for _, q := range clustered(11, 3, r.Dim(), 1, 1) {
			r.Search(q, 5, SearchOptions{Ef: 20})
		}
	})
}

func TestAutoCompact(t *testing.T) {
	vecs := clustered(12, 1000, 24, 10, 0.5)
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, 24)
	if err := w.Apply(1, itemsOf(vecs, 0), nil); err != nil {
		t.Fatal(err)
	}
	// 200 deletions (20%) stay in the graph.
	var del []int64
	for id := range int64(200) {
		del = append(del, id)
	}
	if err := w.Apply(2, nil, del); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Deleted != 200 || st.Nodes != 1000 {
		t.Fatalf("after 20%% deleted: %+v", st)
	}
	// 150 more (35%): Apply compacts.
	del = del[:0]
	for id := int64(200); id < 350; id++ {
		del = append(del, id)
	}
	if err := w.Apply(3, nil, del); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Deleted != 0 || st.Nodes != 650 || st.Live != 650 || st.Generation != 3 || st.Dirty {
		t.Fatalf("after 35%% deleted: %+v, want compacted", st)
	}
	checkGraph(t, w.m.v)
	r := openTestReader(t, path)
	live := vecs[350:]
	for i := 0; i < len(live); i += 13 {
		q := live[i]
		hits, err := r.Search(q, 1, SearchOptions{Exact: func(ids []int64) ([]float32, error) {
			out := make([]float32, len(ids))
			for k, id := range ids {
				out[k] = cosine(q, vecs[id])
			}
			return out, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != int64(350+i) {
			t.Errorf("id %d not found after compaction: %v", 350+i, hits)
		}
	}
}

func TestDimensions(t *testing.T) {
	for _, dim := range []int{1, 2, 63, 65, 4096} {
		t.Run(fmt.Sprint(dim), func(t *testing.T) {
			vecs := clustered(uint64(dim), 150, dim, 5, 0.5)
			path := filepath.Join(t.TempDir(), "idx")
			w := openTestWriter(t, path, dim)
			if err := w.Apply(1, itemsOf(vecs, 0), nil); err != nil {
				t.Fatal(err)
			}
			checkGraph(t, w.m.v)
			r := openTestReader(t, path)
			for i := 0; i < len(vecs); i += 10 {
				q := vecs[i]
				hits, err := r.Search(q, 3, SearchOptions{Exact: exactFor(vecs, q)})
				if err != nil {
					t.Fatal(err)
				}
				// In one dimension every vector of the same sign has cosine 1.
				if len(hits) == 0 || cosine(q, vecs[hits[0].ID]) < 0.9999 {
					t.Errorf("vector %d: best hit %v", i, hits)
				}
			}
		})
	}
	if _, err := OpenWriter(context.Background(), filepath.Join(t.TempDir(), "x"), Options{Dim: 4097}); err == nil {
		t.Error("dimension 4097 accepted")
	}
}
