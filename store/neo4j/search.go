package neo4j

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode"

	n4j "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/docgraph/docgraph/cjk"
	"github.com/docgraph/docgraph/store"
)

// maxCandidates bounds how far SearchChunks widens its index query when
// hits of documents not done crowd out the rest; past it, it scans.
const maxCandidates = 4096

// queryVector checks a query vector: another dimension is an error (as in
// the SQLite store); a zero vector matches nothing.
func (s *Store) queryVector(vec []float32) (ok bool, err error) {
	if s.emb.Dimension > 0 && len(vec) != s.emb.Dimension {
		return false, fmt.Errorf("query vector has dimension %d, the store holds %s vectors of dimension %d", len(vec), s.emb.Name, s.emb.Dimension)
	}
	return len(vec) > 0 && norm(vec) > 0, nil
}

// candidates is how many neighbours a vector query asks the index for when
// k are wanted: the index is approximate (HNSW over quantized vectors), so
// the exact top k is taken from a wider set.
func candidates(k int) int64 { return int64(2*k + 10) }

// SearchChunks returns the k chunks of done documents nearest to vec by
// cosine, best first.
func (s *Store) SearchChunks(ctx context.Context, vec []float32, k int) ([]store.ChunkHit, error) {
	if k <= 0 {
		return nil, nil
	}
	ok, err := s.queryVector(vec)
	if err != nil || !ok {
		return nil, s.fail("search chunks", err)
	}
	index := s.indexName("VECTOR", "Chunk")
	var out []store.ChunkHit
	err = s.read(ctx, "search chunks", func(tx n4j.ManagedTransaction) error {
		var err error
		out, err = consistently(ctx, tx, func() ([]store.ChunkHit, error) {
			for n := candidates(k); index != "" && n <= maxCandidates+candidates(k); n *= 4 {
				recs, err := collect(ctx, tx, stmtSearchChunksVector, map[string]any{
					"index": index, "n": n, "vec": param(vec), "qnorm": norm(vec)})
				if err != nil {
					return nil, err
				}
				hits := chunkHits(recs)
				if len(hits) >= k || int64(len(recs)) < n {
					return hits, nil
				}
			}
			recs, err := collect(ctx, tx, stmtSearchChunksScan, map[string]any{
				"vec": param(vec), "qnorm": norm(vec), "k": int64(k), "done": string(store.StatusDone)})
			return chunkHits(recs), err
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	sortChunkHits(out)
	return out[:min(k, len(out))], nil
}

// chunkHits decodes hit records, keeping chunks of done documents.
func chunkHits(recs []*n4j.Record) []store.ChunkHit {
	out := make([]store.ChunkHit, 0, len(recs))
	for _, r := range recs {
		if recordString(r, "status") != string(store.StatusDone) {
			continue
		}
		h := store.ChunkHit{
			Chunk:    decodeChunk(recordMap(r, "c")),
			DocPath:  recordString(r, "path"),
			DocTitle: recordString(r, "title"),
			Score:    recordFloat(r, "score"),
		}
		out = append(out, h)
	}
	return out
}

func sortChunkHits(h []store.ChunkHit) {
	sort.SliceStable(h, func(i, j int) bool {
		if h[i].Score != h[j].Score {
			return h[i].Score > h[j].Score
		}
		return h[i].ID < h[j].ID
	})
}

// SearchEntities returns the k entities nearest to vec by cosine.
func (s *Store) SearchEntities(ctx context.Context, vec []float32, k int) ([]store.EntityHit, error) {
	if k <= 0 {
		return nil, nil
	}
	ok, err := s.queryVector(vec)
	if err != nil || !ok {
		return nil, s.fail("search entities", err)
	}
	var stmt statement = stmtSearchEntitiesScan
	params := map[string]any{"vec": param(vec), "qnorm": norm(vec), "k": int64(k)}
	if index := s.indexName("VECTOR", "Entity"); index != "" {
		stmt = stmtSearchEntitiesVector
		params["index"], params["n"] = index, candidates(k)
	}
	var out []store.EntityHit
	err = s.read(ctx, "search entities", func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return err
		}
		out = entityHits(recs)
		return nil
	})
	return out, err
}

func entityHits(recs []*n4j.Record) []store.EntityHit {
	out := make([]store.EntityHit, 0, len(recs))
	for _, r := range recs {
		out = append(out, store.EntityHit{Entity: decodeEntity(recordMap(r, "e")), Score: recordFloat(r, "score")})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// SearchRelations returns the k relations nearest to vec by cosine, from
// the relationship vector index where the server has one (5.18+) and by a
// scan otherwise.
func (s *Store) SearchRelations(ctx context.Context, vec []float32, k int) ([]store.RelationHit, error) {
	if k <= 0 {
		return nil, nil
	}
	ok, err := s.queryVector(vec)
	if err != nil || !ok {
		return nil, s.fail("search relations", err)
	}
	var stmt statement = stmtSearchRelationsScan
	params := map[string]any{"vec": param(vec), "qnorm": norm(vec), "k": int64(k)}
	if index := s.indexName("VECTOR", "RELATES"); index != "" {
		stmt = stmtSearchRelationsVector
		params["index"], params["n"] = index, candidates(k)
	}
	var out []store.RelationHit
	err = s.read(ctx, "search relations", func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmt, params)
		if err != nil {
			return err
		}
		out = make([]store.RelationHit, 0, len(recs))
		for _, r := range recs {
			out = append(out, store.RelationHit{Relation: decodeRelation(recordMap(r, "r")), Score: recordFloat(r, "score")})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// SearchChunksText ranks chunks of done documents by Lucene BM25 over their
// text (higher is better).
func (s *Store) SearchChunksText(ctx context.Context, query string, k int) ([]store.ChunkHit, error) {
	terms := queryTerms(query)
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	params := map[string]any{
		"index": s.indexName("FULLTEXT", "Chunk"),
		"query": strings.Join(terms, " OR "),
		"k":     int64(k),
		"done":  string(store.StatusDone),
	}
	var out []store.ChunkHit
	err := s.read(ctx, fmt.Sprintf("text search chunks for %q", query), func(tx n4j.ManagedTransaction) error {
		var err error
		out, err = consistently(ctx, tx, func() ([]store.ChunkHit, error) {
			recs, err := collect(ctx, tx, stmtSearchChunksText, params)
			return chunkHits(recs), err
		})
		return err
	})
	return out, err
}

// SearchEntitiesText ranks entities by Lucene BM25 over name and
// description, a name hit weighing as much as five description hits.
func (s *Store) SearchEntitiesText(ctx context.Context, query string, k int) ([]store.EntityHit, error) {
	terms := queryTerms(query)
	if len(terms) == 0 || k <= 0 {
		return nil, nil
	}
	either := strings.Join(terms, " OR ")
	params := map[string]any{
		"index": s.indexName("FULLTEXT", "Entity"),
		"query": "name:(" + either + ")^5 OR description:(" + either + ")",
		"k":     int64(k),
	}
	var out []store.EntityHit
	err := s.read(ctx, fmt.Sprintf("text search entities for %q", query), func(tx n4j.ManagedTransaction) error {
		recs, err := collect(ctx, tx, stmtSearchEntitiesText, params)
		if err != nil {
			return err
		}
		out = entityHits(recs)
		return nil
	})
	return out, err
}

// maxQueryTerms bounds the OR-query built from a user's text.
const maxQueryTerms = 64

// queryTerms turns arbitrary user text into Lucene terms that cannot fail
// to parse or change the query's meaning: its words, lower-cased (so AND,
// OR and NOT are words, not operators), and the bigrams of CJK runs, each
// once and escaped. Bigrams are cut here, as the SQLite store cuts them,
// so every term is one token of the cjk analyzer.
func queryTerms(text string) []string {
	terms := cjk.TermList(text)
	if len(terms) > maxQueryTerms {
		terms = terms[:maxQueryTerms]
	}
	for i, t := range terms {
		terms[i] = escapeLucene(t)
	}
	return terms
}

// escapeLucene backslash-escapes every character Lucene's classic query
// parser gives a meaning to, and whitespace, so s is one literal term.
func escapeLucene(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if strings.ContainsRune(`\+-!():^[]"{}~*?|&/`, r) || unicode.IsSpace(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
