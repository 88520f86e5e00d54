package ann

import (
	"path/filepath"
	"testing"
)

// TestDraftInSteps builds an index as a bulk ingest does: vectors arrive
// in groups, some replacing or deleting earlier ones, each group linked
// on one core, and the whole installed once. The file must hold exactly
// the live vectors, with the newest vector of each id, searchable at the
// recall a one-pass Build gives.
func TestDraftInSteps(t *testing.T) {
	const n, dim = 3000, 128
	all := clustered(11, n+100, dim, 40, 0.6)
	vecs, queries := all[:n], all[n:]
	// Replacements: the first 300 ids first get other vectors, put right
	// in a later group; ids 2900.. are added and then deleted.
	decoys := clustered(12, 300, dim, 40, 0.6)
	d, err := NewDraft(Options{Dim: dim, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Add(seqOf(itemsOf(decoys, 0))); err != nil {
		t.Fatal(err)
	}
	d.Link(1)
	for lo := 300; lo < n; lo += 700 {
		if err := d.Add(seqOf(itemsOf(vecs[lo:min(lo+700, n)], int64(lo)))); err != nil {
			t.Fatal(err)
		}
		d.Link(1)
	}
	if err := d.Add(seqOf(itemsOf(vecs[:300], 0))); err != nil { // the replacements
		t.Fatal(err)
	}
	var gone []int64
	for id := int64(2900); id < n; id++ {
		gone = append(gone, id)
	}
	d.Delete(gone...)
	if d.Len() != n-len(gone) {
		t.Fatalf("draft Len %d, want %d", d.Len(), n-len(gone))
	}

	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, dim)
	if err := w.Install(d, 42); err != nil {
		t.Fatal(err)
	}
	checkGraph(t, w.m.v)
	st := w.Stats()
	if st.Live != n-len(gone) || st.Generation != 42 || st.Dirty {
		t.Fatalf("installed: %+v; want %d live, generation 42, clean", st, n-len(gone))
	}
	if st.Capacity > st.Nodes+st.Nodes/4+1024 {
		t.Errorf("capacity %d for %d nodes: the draft's growth slack was kept", st.Capacity, st.Nodes)
	}
	r := openTestReader(t, path)
	live := vecs[:2900]
	if rec := measureRecall(t, r, live, queries, 200); rec < 0.95 {
		t.Errorf("recall@10 %.3f < 0.95", rec)
	}
	// A replaced id is found by its new vector (not the decoy), a
	// deleted one never.
	for _, id := range []int64{0, 150, 299} {
		hits, err := r.Search(vecs[id], 1, SearchOptions{Exact: exactFor(live, vecs[id])})
		if err != nil || len(hits) == 0 || hits[0].ID != id {
			t.Errorf("search by id %d's vector: %v, %v", id, hits, err)
		}
	}
	for _, id := range []int64{2900, 2999} {
		hits, err := r.Search(vecs[id], 10, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ID >= 2900 {
				t.Errorf("deleted id %d returned", h.ID)
			}
		}
	}
	// The writer goes on from the installed file.
	if err := w.Apply(43, itemsOf(vecs[2900:2910], 2900), nil); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Live != 2910 || st.Generation != 43 {
		t.Errorf("after Apply: %+v", st)
	}
	// Install closed the draft.
	if err := d.Add(seqOf(itemsOf(vecs[:1], 0))); err == nil {
		t.Error("Add on an installed draft: no error")
	}
}

// TestDraftCompactsOnInstall replaces most vectors in a later step: the
// installed file must not keep the dead nodes.
func TestDraftCompactsOnInstall(t *testing.T) {
	const n, dim = 1500, 64
	first := clustered(21, n, dim, 20, 0.6)
	more := clustered(22, n+50, dim, 20, 0.6)
	second, queries := more[:n], more[n:]
	d, err := NewDraft(Options{Dim: dim, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, vs := range [][][]float32{first, second} {
		if err := d.Add(seqOf(itemsOf(vs, 0))); err != nil {
			t.Fatal(err)
		}
		d.Link(1)
	}
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, dim)
	if err := w.Install(d, 2); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Nodes != n || st.Live != n || st.Deleted != 0 {
		t.Fatalf("installed: %+v; want %d nodes, all live", st, n)
	}
	checkGraph(t, w.m.v)
	r := openTestReader(t, path)
	if rec := measureRecall(t, r, second, queries, 200); rec < 0.95 {
		t.Errorf("recall@10 %.3f < 0.95", rec)
	}
}
