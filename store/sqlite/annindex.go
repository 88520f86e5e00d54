package sqlite

import (
	"container/heap"
	"context"
	"fmt"

	"docgraph/store"
)

// annSet keeps the approximate nearest-neighbour index of each vector kind
// beside the database and searches through it.
type annSet struct {
	s *Store
}

func newANNSet(s *Store) *annSet { return &annSet{s: s} }

// written hears that this process committed generation gen.
func (a *annSet) written(gen int64) {}

// close brings the index files up to date and closes them.
func (a *annSet) close() error { return nil }

// vectorSearch returns the k rows of a kind nearest to q by cosine, best
// first, and whether it returned every row there is.
func (s *Store) vectorSearch(ctx context.Context, db querier, kind int, q []float32, k int) ([]scored, bool, error) {
	if kind != kindChunk && s.reembed != nil {
		return s.exactDerived(ctx, db, kind, q, k)
	}
	return exactSearch(ctx, db, kind, q, k)
}

// exactDerived scans every entity or relation, making their vectors.
func (s *Store) exactDerived(ctx context.Context, db querier, kind int, q []float32, k int) ([]scored, bool, error) {
	qn := norm(q)
	h := &minHeap{}
	n := 0
	offerAll := func(seqs []int64, vecs [][]float32) {
		for i, v := range vecs {
			n++
			offer(h, k, scored{seqs[i], cosine(q, qn, v)})
		}
	}
	const page = 1024
	switch kind {
	case kindEntity:
		rows, err := db.QueryContext(ctx, `SELECT e.seq, `+entityColumns+` FROM entities e`+entityVector)
		if err != nil {
			return nil, false, err
		}
		defer rows.Close()
		var seqs []int64
		var es []store.Entity
		flush := func() error {
			vecs, err := s.reembed.EntityVectors(ctx, es)
			if err != nil {
				return err
			}
			offerAll(seqs, vecs)
			seqs, es = seqs[:0], es[:0]
			return nil
		}
		for rows.Next() {
			var seq int64
			e, err := scanEntityKeyed(rows, &seq)
			if err != nil {
				return nil, false, err
			}
			seqs, es = append(seqs, seq), append(es, e)
			if len(es) == page {
				if err := flush(); err != nil {
					return nil, false, err
				}
			}
		}
		if err := rows.Err(); err != nil {
			return nil, false, err
		}
		if err := flush(); err != nil {
			return nil, false, err
		}
	case kindRelation:
		rows, err := db.QueryContext(ctx, `SELECT r.seq, `+relationColumns+` FROM relations r`+relationVector)
		if err != nil {
			return nil, false, err
		}
		defer rows.Close()
		var seqs []int64
		var rs []store.Relation
		flush := func() error {
			vecs, err := s.reembed.RelationVectors(ctx, rs)
			if err != nil {
				return err
			}
			offerAll(seqs, vecs)
			seqs, rs = seqs[:0], rs[:0]
			return nil
		}
		for rows.Next() {
			var seq int64
			r, err := scanRelationKeyed(rows, &seq)
			if err != nil {
				return nil, false, err
			}
			seqs, rs = append(seqs, seq), append(rs, r)
			if len(rs) == page {
				if err := flush(); err != nil {
					return nil, false, err
				}
			}
		}
		if err := rows.Err(); err != nil {
			return nil, false, err
		}
		if err := flush(); err != nil {
			return nil, false, err
		}
	}
	out := []scored(*h)
	sortScored(out)
	return out, n <= k, nil
}

// cosine is the cosine of q (of norm qn) and v.
func cosine(q []float32, qn float64, v []float32) float64 {
	if len(v) != len(q) || qn == 0 {
		return 0
	}
	var dot float64
	for i, x := range q {
		dot += float64(x) * float64(v[i])
	}
	vn := norm(v)
	if vn == 0 {
		return 0
	}
	return dot / (qn * vn)
}

// exactSearch scans every vector of a kind.
func exactSearch(ctx context.Context, db querier, kind int, q []float32, k int) ([]scored, bool, error) {
	qn := norm(q)
	rows, err := db.QueryContext(ctx, `SELECT id, vec FROM vectors WHERE kind = ?`, kind)
	if err != nil {
		return nil, false, fmt.Errorf("scan vectors: %w", err)
	}
	defer rows.Close()
	h := &minHeap{}
	n := 0
	for rows.Next() {
		var id int64
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return nil, false, fmt.Errorf("scan vectors: %w", err)
		}
		n++
		offer(h, k, scored{id, cosineEncoded(q, qn, blob)})
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("scan vectors: %w", err)
	}
	out := []scored(*h)
	sortScored(out)
	return out, n <= k, nil
}

// minHeap keeps the best k scores seen, the worst on top.
type minHeap []scored

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].id > h[j].id
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer adds c to the best k in h.
func offer(h *minHeap, k int, c scored) {
	if h.Len() < k {
		heap.Push(h, c)
		return
	}
	if (*h)[0].score < c.score || (*h)[0].score == c.score && (*h)[0].id > c.id {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
}
