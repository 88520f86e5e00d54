package ann

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestDamagedContentsRefused: a byte changed anywhere in a file's
// published records (codes, scales, ids, flags, lists) or in the header's
// counts, entry and generation is noticed when the file is opened, by a
// reader and by a writer: the file is refused with ErrCorrupt, never
// searched.
func TestDamagedContentsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx")
	w := openTestWriter(t, path, 16)
	vecs := clustered(21, 600, 16, 6, 0.5)
	if err := w.Apply(1, itemsOf(vecs, 0), []int64{3}); err != nil {
		t.Fatal(err)
	}
	l := w.m.v.l
	n := int64(w.Stats().Nodes)
	used := int64(w.m.v.h.UpperUsed)
	w.Close()
	if used == 0 {
		t.Fatal("no upper-layer lists: the test needs some")
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h header
	at := map[string]int64{
		"code of the first node": l.codes,
		"code of the last node":  l.codes + (n-1)*int64(l.words)*8 + 3,
		"scale":                  l.scale + 4*(n/2),
		"id":                     l.ids + 8*(n/3),
		"flags":                  l.info + 4*(n/4),
		"upper offset":           l.upOff + 4*(n-1),
		"layer-0 list":           l.links0 + int64(1+l.m0)*4*(n/5) + 4,
		"upper list":             l.upper + 4*(used-1),
		"header entry":           int64(unsafe.Offsetof(h.Entry)),
		"header deleted count":   int64(unsafe.Offsetof(h.Deleted)),
		"header generation":      int64(unsafe.Offsetof(h.Gen)),
	}
	for name, off := range at {
		b := slices.Clone(good)
		b[off] ^= 0x40
		bad := filepath.Join(dir, "bad")
		if err := os.WriteFile(bad, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if r, err := OpenReader(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s changed: OpenReader %v, want ErrCorrupt", name, err)
			if err == nil {
				r.Close()
			}
		}
		if w, err := OpenWriter(context.Background(), bad, Options{Dim: 16}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s changed: OpenWriter %v, want ErrCorrupt", name, err)
			if err == nil {
				w.Close()
			}
		}
	}
}

// TestLeftoverTempRemoved: a new file that a writer wrote beside the index
// and did not rename over it before it died is removed by the next writer,
// which holds the lock every writer writes them under.
func TestLeftoverTempRemoved(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx")
	w := openTestWriter(t, path, 8)
	if err := w.Apply(1, itemsOf(clustered(22, 50, 8, 2, 0.5), 0), nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	img, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// What a writer that died leaves: a new file named as os.CreateTemp
	// names them, holding an image; and files that only look alike.
	f, err := os.CreateTemp(dir, "idx.*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(img)
	f.Close()
	others := []string{"idx.backup.tmp", "idx.12.tmp.keep", "idx2.34.tmp", "idx.lock"}
	for _, name := range others {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w = openTestWriter(t, path, 8)
	if _, err := os.Stat(f.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead writer's %s is still there after a writer opened the index: %v", filepath.Base(f.Name()), err)
	}
	for _, name := range others {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	w.Close()
}

// checkSums fails the test unless the index at path checks: the writer's
// own view, and a reader's fresh open.
func checkSums(t *testing.T, w *Writer, path, when string) {
	t.Helper()
	if err := w.m.v.verify(nil); err != nil {
		t.Fatalf("%s: the writer's file: %v", when, err)
	}
	r, err := OpenReader(path)
	if err != nil {
		t.Fatalf("%s: OpenReader: %v", when, err)
	}
	r.Close()
}

// TestSumsFollowApplies: the sums stay right through every way a writer
// changes a file: applies in place that add, replace and delete (each
// writes scattered blocks, whose sums only are computed again), growth in
// the middle of an Apply, compaction, Build, a draft's Install, and a
// writer dying half-way through an Apply, after which the file cannot be
// checked until the next Apply computes every sum again.
func TestSumsFollowApplies(t *testing.T) {
	const dim = 24
	vecs := clustered(23, 5000, dim, 20, 0.5)
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, dim)
	rng := rand.New(rand.NewPCG(23, 1))
	gen := uint64(0)
	next := 0
	for range 30 {
		gen++
		var ups []Item
		for range 1 + rng.IntN(120) {
			if next > 0 && rng.IntN(3) == 0 {
				id := rng.IntN(next)
				ups = append(ups, Item{int64(id), vecs[rng.IntN(len(vecs))]})
			} else if next < len(vecs) {
				ups = append(ups, Item{int64(next), vecs[next]})
				next++
			}
		}
		var dels []int64
		for range rng.IntN(20) {
			dels = append(dels, int64(rng.IntN(next+1)))
		}
		if err := w.Apply(gen, ups, dels); err != nil {
			t.Fatal(err)
		}
		checkSums(t, w, path, fmt.Sprintf("after Apply %d (%+v)", gen, w.Stats()))
	}
	if w.Stats().Capacity == 1024 {
		t.Fatalf("the file never grew: %+v", w.Stats())
	}
	if err := w.Compact(); err != nil {
		t.Fatal(err)
	}
	checkSums(t, w, path, "after Compact")
	gen++
	if err := w.Build(gen, seqOf(itemsOf(vecs[:3000], 0))); err != nil {
		t.Fatal(err)
	}
	checkSums(t, w, path, "after Build")

	d, err := NewDraft(Options{Dim: dim, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Add(seqOf(itemsOf(vecs[:2000], 0))); err != nil {
		t.Fatal(err)
	}
	d.Delete(5, 6, 7)
	gen++
	if err := w.Install(d, gen); err != nil {
		t.Fatal(err)
	}
	checkSums(t, w, path, "after Install")

	// A writer dies half-way through an Apply (after its 100th node).
	published := 0
	testHookPublished = func(uint32) bool { published++; return published == 100 }
	batch := itemsOf(vecs[2000:2400], 2000)
	err = w.Apply(gen+1, batch, []int64{10})
	testHookPublished = nil
	if !errors.Is(err, errHalted) {
		t.Fatalf("Apply with the halting hook: %v", err)
	}
	w.Close()
	r := openTestReader(t, path) // dirty: opened as it is
	if !r.Dirty() {
		t.Fatal("the file is not dirty after the writer died")
	}
	w = openTestWriter(t, path, dim)
	if err := w.Apply(gen+1, batch, []int64{10}); err != nil {
		t.Fatal(err)
	}
	checkSums(t, w, path, "after the replay")
	if r.Dirty() || r.Generation() != gen+1 {
		t.Errorf("reader after the replay: Dirty %v Generation %d", r.Dirty(), r.Generation())
	}
}

// TestCheckWhileApplying: readers that open the file while a writer in
// another goroutine (here, as in another process, through a mapping of
// its own) applies change after change never take a change under way for
// damage.
func TestCheckWhileApplying(t *testing.T) {
	const dim = 16
	vecs := clustered(24, 4000, dim, 10, 0.5)
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, dim)
	if err := w.Apply(1, itemsOf(vecs[:500], 0), nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var opened, checked int
	var failure error
	go func() {
		defer close(done)
		for gen := uint64(2); gen < 40; gen++ {
			lo := 500 + int(gen-2)*90
			if err := w.Apply(gen, itemsOf(vecs[lo:lo+90], int64(lo)), []int64{int64(gen)}); err != nil {
				failure = err
				return
			}
		}
	}()
	for stop := false; !stop; {
		select {
		case <-done:
			stop = true
		default:
		}
		var ok bool
		m, err := openMapped(path, false, func(m *mapped, f *os.File) (err error) {
			ok, err = m.v.checked(f)
			return err
		})
		if err != nil {
			t.Fatalf("a reader took a change under way for damage: %v", err)
		}
		m.close()
		opened++
		if ok {
			checked++
		}
	}
	if failure != nil {
		t.Fatal(failure)
	}
	t.Logf("%d opens during the applies, %d of them checked the file", opened, checked)
	checkSums(t, w, path, "after the applies")
}

// TestForeignLabel: a file made with another label (another kind of
// vector's index, another store's) is refused with ErrForeign by a
// writer, and a reader says what label it has; a draft of another label
// is not installed.
func TestForeignLabel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx")
	w, err := OpenWriter(context.Background(), path, Options{Dim: 8, Label: "entities of store 1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(1, itemsOf(clustered(25, 40, 8, 2, 0.5), 0), nil); err != nil {
		t.Fatal(err)
	}
	d, err := NewDraft(Options{Dim: 8, Label: "chunks of store 1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Install(d, 2); !errors.Is(err, ErrForeign) {
		t.Errorf("Install of a draft of another label: %v, want ErrForeign", err)
	}
	w.Close()
	r := openTestReader(t, path)
	if r.Label() != "entities of store 1" {
		t.Errorf("Label %q", r.Label())
	}
	for _, label := range []string{"chunks of store 1", "entities of store 2", ""} {
		if w, err := OpenWriter(context.Background(), path, Options{Dim: 8, Label: label}); !errors.Is(err, ErrForeign) {
			t.Errorf("OpenWriter labelled %q: %v, want ErrForeign", label, err)
			if err == nil {
				w.Close()
			}
		}
	}
	if _, err := OpenWriter(context.Background(), path, Options{Dim: 8, Label: strings.Repeat("x", MaxLabel+1)}); err == nil {
		t.Error("a label longer than MaxLabel was taken")
	}
}

// TestRemoveLeftoversLeavesLiveWriters: RemoveLeftovers removes a dead
// writer's new file only when no writer holds the index.
func TestRemoveLeftoversLeavesLiveWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "idx")
	w := openTestWriter(t, path, 8)
	f, err := os.CreateTemp(dir, "idx.*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if n, err := RemoveLeftovers(path); n != 0 || err != nil {
		t.Errorf("RemoveLeftovers while a writer holds the index: %d, %v", n, err)
	}
	if _, err := os.Stat(f.Name()); err != nil {
		t.Fatalf("a live writer's new file was removed: %v", err)
	}
	w.Close()
	if n, err := RemoveLeftovers(path); n != 1 || err != nil {
		t.Errorf("RemoveLeftovers once the writer let go: %d, %v", n, err)
	}
	if _, err := os.Stat(f.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v", f.Name(), err)
	}
}
