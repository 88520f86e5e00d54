package sqlite

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
)

// syntheticSize describes a generated document: how many chunks, entity
// mentions and relation mentions, drawn from a pool of entity names shared
// by every document generated with the same pool.
type syntheticSize struct {
	docID, path string
	chunks      int
	entities    int // entity mentions, spread evenly over chunks
	relations   int // relation mentions, between entities of the same chunk
	pool        int // distinct entity names to draw from
	seed        uint64
	dim         int
}

var words = strings.Fields(`river city port trade merchant king queen battle treaty bridge castle
	abbey bishop council harbour market guild ship canal valley mountain forest border empire duchy`)

// synthetic builds a realistic document write: chunk texts of ~200 words,
// mentions as graphbuild would produce them (one per entity and chunk,
// relations only between entities mentioned in the chunk).
func synthetic(sz syntheticSize) *store.DocumentWrite {
	r := rand.New(rand.NewPCG(sz.seed, 42))
	w := &store.DocumentWrite{Document: store.Document{ID: sz.docID, Path: sz.path, Title: "Synthetic " + sz.docID, Format: "txt"}}
	perChunk := max(2, sz.entities/sz.chunks)
	relPerChunk := sz.relations / sz.chunks
	names := func(i int) string {
		return fmt.Sprintf("%s %s %d", words[i%len(words)], words[(i/len(words))%len(words)], i)
	}
	offset := 0
	for c := 0; c < sz.chunks; c++ {
		id := fmt.Sprintf("%s#%04d", sz.docID, c)
		var text strings.Builder
		for i := 0; i < 200; i++ {
			text.WriteString(words[r.IntN(len(words))])
			text.WriteByte(' ')
		}
		vec := make([]float32, sz.dim)
		for i := range vec {
			vec[i] = float32(r.NormFloat64())
		}
		w.Chunks = append(w.Chunks, store.Chunk{ID: id, DocID: sz.docID, Index: c, Text: text.String(), Tokens: 200, Start: offset, End: offset + text.Len(), Embedding: vec})
		offset += text.Len()

		picked := map[int]bool{}
		var ids []string
		for len(ids) < perChunk && len(picked) < sz.pool {
			n := r.IntN(sz.pool)
			if picked[n] {
				continue
			}
			picked[n] = true
			name := names(n)
			eid := graphbuild.EntityID(name)
			ids = append(ids, eid)
			w.Entities = append(w.Entities, store.EntityMention{
				EntityID: eid, ChunkID: id, Name: name, Type: words[n%5],
				Description: fmt.Sprintf("%s appears in %s as a %s of the %s.", name, sz.docID, words[r.IntN(len(words))], words[r.IntN(len(words))]),
			})
		}
		seen := map[string]bool{}
		for k := 0; k < relPerChunk*4 && len(seen) < relPerChunk; k++ {
			a, b := ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
			if a == b {
				continue
			}
			if b < a {
				a, b = b, a
			}
			rid := graphbuild.RelationID(a, b, "")
			if seen[rid] {
				continue
			}
			seen[rid] = true
			w.Relations = append(w.Relations, store.RelationMention{
				RelationID: rid, SourceID: a, TargetID: b, ChunkID: id,
				Keywords: words[r.IntN(len(words))] + ", " + words[r.IntN(len(words))], Description: "They meet at the " + words[r.IntN(len(words))] + ".", Weight: 1,
			})
		}
	}
	return w
}
