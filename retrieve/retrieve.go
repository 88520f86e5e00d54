// Package retrieve finds the passages, entities and relations that answer a
// question over any store.Reader, lays them out for a model and streams its cited answer.
//
// Modes: mix (default) runs full-text, vector, MENTIONED_IN, 2-hop and
// Personalized PageRank paths (PageRank from the question's entities over the
// store's entity-chunk graph, read around them) and fuses them; local, global and
// hybrid are LightRAG's dual-level retrieval; naive is text plus vector search.
// Assemble fits a result into a token budget and Answer asks a langchaingo model.
package retrieve

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/retrieve/paths"
	"github.com/docgraph/docgraph/store"
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
	Signals map[string]int `json:"signals"`

	embedding []float32 // the stored chunk embedding, for reranking
}

// Result is what a retrieval returns. Naive retrieval fills only the
// passages; the graph modes add what they found in the graph.
type Result struct {
	Question string    `json:"question"`
	Mode     string    `json:"mode"`
	Keywords *Keywords `json:"keywords"`
	// Hint tells the answering model the expected answer format, e.g. yes/no.
	Hint     string    `json:"hint,omitempty"`
	Passages []Passage `json:"passages"`
	// Entities are the graph entities the question led to, best first.
	Entities []EntityInfo `json:"entities,omitempty"`
	// Relations are the relationships around those entities (1 and 2 hops).
	Relations []RelationInfo `json:"relations,omitempty"`
	// Facts are relations found by vector search, kept above a similarity threshold.
	Facts []RelationInfo `json:"facts,omitempty"`
	// Paths are the reasoning paths behind mix's path signal, best first.
	Paths []paths.Path `json:"paths,omitempty"`
	// Cypher is the generated graph query and its rows (Neo4j, --cypher).
	Cypher *CypherResult `json:"cypher,omitempty"`
	// Logic is logic-form retrieval's plan and its history of steps (mode logic).
	Logic *LogicTrace `json:"logic,omitempty"`
	// Timings holds the duration of each stage, in nanoseconds in JSON.
	Timings map[string]time.Duration `json:"timings_ns"`
	// Warnings say what the retrieval had to do without, e.g. the vector
	// paths when the embedder failed.
	Warnings []string `json:"warnings,omitempty"`
}

// warn adds w once; "" is nothing to add.
func (res *Result) warn(w string) {
	if w != "" && !slices.Contains(res.Warnings, w) {
		res.Warnings = append(res.Warnings, w)
	}
}

// embedOrWarn embeds text for the vector paths. An embedder that fails
// while ctx is still live (an endpoint answering 500, a refused
// connection) costs those paths, not the query: the vector is nil, the
// warning names the embedder, and the offline paths (full-text, graph)
// answer alone. A canceled or expired ctx is still an error.
func embedOrWarn(ctx context.Context, emb embedstore.Embedder, text string) (vec []float32, warning string, err error) {
	vec, err = emb.EmbedQuery(ctx, text)
	switch {
	case err == nil:
		return vec, "", nil
	case ctx.Err() != nil:
		return nil, "", err
	}
	return nil, fmt.Sprintf("embedder %s failed, so vector search is skipped and full-text and graph search answer alone: %v", emb.Name(), err), nil
}

// EntityInfo is one entity in a result.
type EntityInfo struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Description string  `json:"description"`
	Chunks      int     `json:"chunks"`
	Score       float64 `json:"score"`
	// Via says how it was found: "name", "fulltext", "vector", "relation".
	Via string `json:"via"`
}

// RelationInfo is one relation in a result, with its endpoints' names.
type RelationInfo struct {
	ID          string  `json:"id"`
	Source      string  `json:"source"`
	Target      string  `json:"target"`
	Type        string  `json:"type"`
	Keywords    string  `json:"keywords"`
	Description string  `json:"description"`
	Weight      float64 `json:"weight"`
	Score       float64 `json:"score"`
	// Hops is 1 for a relation touching a found entity, 2 one step further; 0 for facts.
	Hops int `json:"hops"`
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
	vec, warning, err := embedOrWarn(ctx, n.Embedder, question)
	if err != nil {
		return nil, fmt.Errorf("embed question: %w", err)
	}
	res.warn(warning)
	res.Timings["embed"] = time.Since(t)

	var vhits []store.ChunkHit
	if vec != nil {
		t = time.Now()
		vhits, err = n.Store.SearchChunks(ctx, vec, cand)
		if err != nil {
			return nil, fmt.Errorf("vector search: %w", err)
		}
		res.Timings["vector"] = time.Since(t)
	}

	t = time.Now()
	thits, err := n.Store.SearchChunksText(ctx, textQuery(question), cand)
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
		f.fold(signal, weight, i, Passage{ChunkID: h.ID, DocID: h.DocID, DocPath: h.DocPath, DocTitle: h.DocTitle, Index: h.Index, Text: h.Text,
			embedding: h.Embedding})
	}
}

// AddRanked folds in a ranked list of chunk ids (best first); passages it
// introduces carry only their id until filled from the store.
func (f *Fusion) AddRanked(signal string, weight float64, ranked []scoredID) {
	for i, h := range ranked {
		f.fold(signal, weight, i, Passage{ChunkID: h.ID})
	}
}

// fold credits a passage with 0-based rank i of a signal, once per signal;
// p is kept only when its chunk is new to the fusion.
func (f *Fusion) fold(signal string, weight float64, i int, p Passage) {
	q, ok := f.byID[p.ChunkID]
	if !ok {
		p.Signals = map[string]int{}
		q = &p
		f.byID[p.ChunkID] = q
	}
	if _, seen := q.Signals[signal]; seen {
		return
	}
	q.Signals[signal] = i + 1
	f.scores[p.ChunkID] += weight / (f.k + float64(i+1))
}

// update copies what p knows of its chunk and document into the fused
// passage with its id, leaving score and signals alone.
func (f *Fusion) update(p Passage) {
	q, ok := f.byID[p.ChunkID]
	if !ok {
		return
	}
	q.DocID, q.DocPath, q.DocTitle, q.Index, q.Text, q.embedding = p.DocID, p.DocPath, p.DocTitle, p.Index, p.Text, p.embedding
}

// Len is the number of distinct passages folded in.
func (f *Fusion) Len() int { return len(f.byID) }

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
