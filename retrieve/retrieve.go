// Package retrieve finds the passages, entities and relations that answer a
// question, over any store that implements the read side of the contract.
package retrieve

import (
	"context"
	"fmt"
	"sort"
	"time"

	"docgraph/embedstore"
	"docgraph/store"
)

// ChunkSearcher is what naive retrieval needs of a store.
type ChunkSearcher interface {
	SearchChunks(ctx context.Context, vec []float32, k int) ([]store.ChunkHit, error)
	SearchChunksText(ctx context.Context, query string, k int) ([]store.ChunkHit, error)
}

// Passage is one retrieved chunk with its source and fused score.
type Passage struct {
	ChunkID  string  `json:"chunk_id"`
	DocID    string  `json:"doc_id"`
	DocPath  string  `json:"doc_path"`
	DocTitle string  `json:"doc_title"`
	Index    int     `json:"chunk_index"`
	Text     string  `json:"text"`
	Score    float64 `json:"score"`
	// Signals records the rank each retrieval path gave this passage (1-based).
	Signals map[string]int `json:"signals,omitempty"`
}

// Result is what a retrieval returns.
type Result struct {
	Question string                   `json:"question"`
	Mode     string                   `json:"mode"`
	Passages []Passage                `json:"passages"`
	Timings  map[string]time.Duration `json:"timings_ns"`
}

// Naive is hybrid chunk retrieval: vector search and full-text search, fused
// by reciprocal rank.
type Naive struct {
	Store    ChunkSearcher
	Embedder embedstore.Embedder
	// Candidates is how many hits each path contributes before fusion.
	Candidates int
	// RRFK is the reciprocal-rank constant (60 in the original paper).
	RRFK float64
}

// Retrieve returns the top k passages for the question.
func (n *Naive) Retrieve(ctx context.Context, question string, k int) (*Result, error) {
	res := &Result{Question: question, Mode: "naive", Timings: map[string]time.Duration{}}
	cand := max(n.Candidates, k*4, 20)
	t := time.Now()
	vec, err := n.Embedder.EmbedQuery(ctx, question)
	if err != nil {
		return nil, fmt.Errorf("embed question: %w", err)
	}
	res.Timings["embed"] = time.Since(t)

	t = time.Now()
	vhits, err := n.Store.SearchChunks(ctx, vec, cand)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	res.Timings["vector"] = time.Since(t)

	t = time.Now()
	thits, err := n.Store.SearchChunksText(ctx, question, cand)
	if err != nil {
		return nil, fmt.Errorf("full-text search: %w", err)
	}
	res.Timings["fulltext"] = time.Since(t)

	f := NewFusion(n.RRFK)
	f.Add("vector", 1, vhits)
	f.Add("fulltext", 1, thits)
	res.Passages = f.Top(k)
	return res, nil
}

// Fusion combines ranked lists by weighted reciprocal rank.
type Fusion struct {
	k      float64
	byID   map[string]*Passage
	scores map[string]float64
}

// NewFusion returns an empty fusion with reciprocal-rank constant k (60 when 0).
func NewFusion(k float64) *Fusion {
	if k <= 0 {
		k = 60
	}
	return &Fusion{k: k, byID: map[string]*Passage{}, scores: map[string]float64{}}
}

// Add folds one ranked list in under a signal name with a weight.
func (f *Fusion) Add(signal string, weight float64, hits []store.ChunkHit) {
	for i, h := range hits {
		p, ok := f.byID[h.ID]
		if !ok {
			p = &Passage{ChunkID: h.ID, DocID: h.DocID, DocPath: h.DocPath, DocTitle: h.DocTitle, Index: h.Index, Text: h.Text, Signals: map[string]int{}}
			f.byID[h.ID] = p
		}
		if _, seen := p.Signals[signal]; seen {
			continue
		}
		p.Signals[signal] = i + 1
		f.scores[h.ID] += weight / (f.k + float64(i+1))
	}
}

// Top returns the k best passages by fused score (ties by chunk id).
func (f *Fusion) Top(k int) []Passage {
	out := make([]Passage, 0, len(f.byID))
	for id, p := range f.byID {
		p.Score = f.scores[id]
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ChunkID < out[j].ChunkID
	})
	if k > 0 && len(out) > k {
		out = out[:k]
	}
	return out
}
