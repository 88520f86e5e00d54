package ann_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"

	"github.com/docgraph/docgraph/store/ann"
)

func cosine(a, b []float32) float32 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return float32(ab / math.Sqrt(aa*bb))
}

// The caller keeps the vectors (here a map; in docgraph, the SQLite store)
// and scores the index's candidates exactly.
func Example() {
	dir, err := os.MkdirTemp("", "ann")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vectors.ann")

	vectors := map[int64][]float32{
		1: {1, 0, 0, 0},
		2: {0, 1, 0, 0},
		3: {0.9, 0.1, 0, 0},
		4: {0, 0, 1, 1},
	}
	w, err := ann.OpenWriter(context.Background(), path, ann.Options{Dim: 4})
	if err != nil {
		log.Fatal(err)
	}
	var items []ann.Item
	for id, v := range vectors {
		items = append(items, ann.Item{ID: id, Vec: v})
	}
	if err := w.Apply(1, items, nil); err != nil {
		log.Fatal(err)
	}
	w.Close()

	r, err := ann.OpenReader(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	q := []float32{1, 0.2, 0, 0}
	hits, err := r.Search(q, 2, ann.SearchOptions{
		Exact: func(ids []int64) ([]float32, error) {
			scores := make([]float32, len(ids))
			for i, id := range ids {
				scores[i] = cosine(q, vectors[id])
			}
			return scores, nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("%d %.3f\n", h.ID, h.Score)
	}
	fmt.Println("generation", r.Generation(), "vectors", r.Len())
	// Output:
	// 3 0.996
	// 1 0.981
	// generation 1 vectors 4
}

// Build makes a fresh index from all items on all cores and renames it
// over the old file; readers move to it by themselves. Later changes go
// through Apply, which replaces an id's vector and drops deleted ids.
func ExampleWriter_Build() {
	dir, err := os.MkdirTemp("", "ann")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "vectors.ann")

	w, err := ann.OpenWriter(context.Background(), path, ann.Options{Dim: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	r, err := ann.OpenReader(path) // the empty index OpenWriter made
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()

	err = w.Build(7, func(yield func(int64, []float32) bool) {
		for id := int64(1); id <= 100; id++ {
			x := float32(id)
			if !yield(id, []float32{x, 100 - x, 1}) {
				return
			}
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("after Build:", r.Len(), r.Generation())

	if err := w.Apply(8, nil, []int64{1, 2, 3}); err != nil {
		log.Fatal(err)
	}
	st := w.Stats()
	fmt.Println("live", st.Live, "deleted", st.Deleted, "generation", r.Generation())
	hits, err := r.Search([]float32{1, 99, 1}, 1, ann.SearchOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("nearest live id to deleted 1:", hits[0].ID)
	// Output:
	// after Build: 100 7
	// live 97 deleted 3 generation 8
	// nearest live id to deleted 1: 4
}
