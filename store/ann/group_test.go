package ann

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestGroupOfOneIsInsert: a group of one node links it exactly as insert
// does, so splitting an insertion into steps changed nothing.
func TestGroupOfOneIsInsert(t *testing.T) {
	vecs := clustered(21, 1500, 64, 20, 0.6)
	build := func(grouped bool) *view {
		d, err := NewDraft(Options{Dim: 64, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		if err := d.Add(seqOf(itemsOf(vecs, 0))); err != nil {
			t.Fatal(err)
		}
		v := d.v
		b, g := newBuilder(v), new(group)
		var s searcher
		n := v.h.Count
		for i := range n {
			if grouped {
				g.insert(b, i, i+1, n)
			} else {
				b.insert(&s, i, n, v.level(i), v.l.efc, nil)
			}
		}
		return v
	}
	one, grouped := build(false), build(true)
	checkGraph(t, grouped)
	if !slices.Equal(one.links0, grouped.links0) || !slices.Equal(one.upper, grouped.upper) {
		t.Fatal("a group of one links its node differently from insert")
	}
	if one.h.Entry != grouped.h.Entry {
		t.Fatalf("entry %x, want %x", grouped.h.Entry, one.h.Entry)
	}
}

// TestGroupsSkipDeletedNodes links a draft in groups of nodes some of
// which were deleted before linking: the graph is sound, a deleted node
// is neither linked nor linked to, every live node past the first has
// neighbours, and search keeps the recall of the other tests. Nodes linked
// after some linked ones are deleted never choose those.
func TestGroupsSkipDeletedNodes(t *testing.T) {
	const n, dim = 3000, 96
	all := clustered(31, n+100, dim, 40, 0.6)
	vecs, queries := all[:n], all[n:]
	decoys := clustered(32, n/10, dim, 40, 0.6)
	d, err := NewDraft(Options{Dim: dim, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Every tenth node is a decoy, deleted before anything is linked, so
	// most groups hold one.
	var gone []int64
	err = d.Add(func(yield func(int64, []float32) bool) {
		for i, v := range vecs {
			if i%10 == 9 {
				id := int64(n + i/10)
				gone = append(gone, id)
				if !yield(id, decoys[i/10]) {
					return
				}
			}
			if !yield(int64(i), v) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Delete(gone...)
	d.LinkUntil(nil)
	v := d.v
	checkGraph(t, v)
	for i := range v.count() {
		blk := v.block(i, 0)
		if v.deleted(i) {
			if blk[0] != 0 {
				t.Fatalf("deleted node %d has %d neighbours", i, blk[0])
			}
			continue
		}
		if i > 0 && blk[0] == 0 {
			t.Fatalf("live node %d has no neighbours", i)
		}
		for _, nb := range blk[1 : 1+blk[0]] {
			if v.deleted(nb) {
				t.Fatalf("node %d links to deleted node %d", i, nb)
			}
		}
	}
	// Nodes deleted once linked are still walked by later searches, which
	// must not choose them as neighbours.
	first := v.count()
	var linked []int64
	for id := int64(0); id < 200; id++ {
		linked = append(linked, id)
	}
	d.Delete(linked...)
	if err := d.Add(seqOf(itemsOf(vecs[:200], 0))); err != nil { // back, as new nodes
		t.Fatal(err)
	}
	d.LinkUntil(nil)
	v = d.v
	for i := first; i < v.count(); i++ {
		blk := v.block(i, 0)
		for _, nb := range blk[1 : 1+blk[0]] {
			if v.deleted(nb) {
				t.Fatalf("node %d, linked after the deletes, links to deleted node %d", i, nb)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, dim)
	if err := w.Install(d, 1); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Live != n {
		t.Fatalf("installed %d live vectors, want %d", st.Live, n)
	}
	r := openTestReader(t, path)
	if rec := measureRecall(t, r, vecs, queries, 200); rec < 0.95 {
		t.Errorf("recall@10 %.3f < 0.95", rec)
	}
}
