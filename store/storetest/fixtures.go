package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/store"
)

// chunkFx is one chunk of a fixture document and what an extractor found in it.
type chunkFx struct {
	text string
	ents []ner.Entity
	rels []ner.Relation
}

// docFx is a fixture document; write turns it into what the pipeline would
// hand a store, mentions built by graphbuild.Build like the real pipeline.
type docFx struct {
	id, path, title string
	chunks          []chunkFx
	warning         string // first of two warnings the document carries
}

func ent(name, typ, desc string) ner.Entity {
	return ner.Entity{Name: name, Type: typ, Description: desc}
}

func rel(src, tgt, kw, desc string, w float64) ner.Relation {
	return ner.Relation{Source: src, Target: tgt, Keywords: kw, Description: desc, Weight: w}
}

func (f docFx) write(replaces ...string) *store.DocumentWrite {
	emb := Embedder()
	var text strings.Builder
	w := &store.DocumentWrite{Replaces: replaces}
	var ex []graphbuild.ChunkExtraction
	for i, c := range f.chunks {
		start := text.Len()
		text.WriteString(c.text)
		id := fmt.Sprintf("%s#%03d", f.id, i)
		w.Chunks = append(w.Chunks, store.Chunk{
			ID: id, DocID: f.id, Index: i, Text: c.text, Tokens: len(strings.Fields(c.text)),
			Start: start, End: text.Len(), Embedding: emb.Vector(c.text),
		})
		text.WriteString("\n\n")
		ex = append(ex, graphbuild.ChunkExtraction{ChunkID: id, Extraction: &ner.Extraction{Entities: c.ents, Relations: c.rels}})
	}
	w.Entities, w.Relations = graphbuild.Build(ex)
	sum := sha256.Sum256([]byte(text.String()))
	w.Document = store.Document{
		ID: f.id, Path: f.path, Title: f.title, Hash: hex.EncodeToString(sum[:]), Format: "md",
		Fingerprint: "storetest-v1", Size: int64(text.Len()),
		ModTime: time.Date(2024, 5, 17, 9, 30, 0, 123456789, time.UTC),
		FileKey: "size=" + fmt.Sprint(text.Len()) + ";mtime=1715938200123456789",
	}
	if f.warning != "" {
		w.Document.Warnings = []string{f.warning, "second warning: 2 pages skipped"}
	}
	return w
}

// rhineV1 and rhineV2 are two versions of one file; ports shares the Rhine,
// Rotterdam and the Rotterdam–Rhine relation with both.
func rhineV1() docFx {
	return docFx{id: "doc-rhine-v1", path: "geo/rhine.md", title: "The Rhine", warning: "page 3 skipped: unreadable content stream", chunks: []chunkFx{
		{
			text: "The Rhine rises in the Swiss Alps and flows north to the North Sea.",
			ents: []ner.Entity{
				ent("Rhine", "river", "A major European river."),
				ent("Alps", "mountain range", "Mountain range where the Rhine rises."),
				ent("North Sea", "sea", "Sea into which the Rhine flows."),
			},
			rels: []ner.Relation{
				rel("Rhine", "Alps", "source, origin", "The Rhine rises in the Alps.", 1),
				rel("Rhine", "North Sea", "mouth", "The Rhine flows into the North Sea.", 1),
			},
		},
		{
			text: "Basel is a Swiss city on the Rhine known for its chemical industry and pharmaceutical companies.",
			ents: []ner.Entity{
				ent("Basel", "city", "Swiss city on the Rhine with a chemical industry."),
				ent("Rhine", "river", "River flowing through Basel."),
			},
			rels: []ner.Relation{rel("Basel", "Rhine", "location", "Basel lies on the Rhine.", 2)},
		},
		{
			text: "Rotterdam, at the mouth of the Rhine, is the largest port in Europe.",
			ents: []ner.Entity{
				ent("Rotterdam", "city", "Largest port in Europe."),
				ent("Rhine", "river", "River whose mouth is at Rotterdam."),
			},
			rels: []ner.Relation{rel("Rotterdam", "Rhine", "mouth, port", "Rotterdam lies at the mouth of the Rhine.", 1)},
		},
	}}
}

func rhineV2() docFx {
	f := rhineV1()
	f.id = "doc-rhine-v2"
	f.chunks = append(f.chunks[1:3:3], chunkFx{
		text: "Strasbourg faces Kehl across the Rhine, linked by a bridge.",
		ents: []ner.Entity{
			ent("Strasbourg", "city", "French city on the Rhine."),
			ent("Kehl", "city", "German town facing Strasbourg."),
		},
		rels: []ner.Relation{rel("Strasbourg", "Kehl", "bridge, border", "Strasbourg and Kehl are linked by a bridge.", 3)},
	})
	return f
}

func ports() docFx {
	return docFx{id: "doc-ports", path: "geo/ports.md", title: "Ports of Europe", chunks: []chunkFx{
		{
			text: "Rotterdam and Antwerp compete as the busiest container ports of Europe.",
			ents: []ner.Entity{
				ent("Rotterdam", "city", "Busy container port."),
				ent("Antwerp", "city", "Belgian port city."),
			},
			rels: []ner.Relation{rel("Rotterdam", "Antwerp", "competition", "Rotterdam and Antwerp compete.", 1)},
		},
		{
			text: "Antwerp lies on the Scheldt, while Rotterdam is fed by the Rhine.",
			ents: []ner.Entity{
				ent("Antwerp", "city", "City on the Scheldt."),
				ent("Scheldt", "river", "River through Antwerp."),
				ent("Rotterdam", "city", ""),
				ent("Rhine", "river", "River feeding Rotterdam."),
			},
			rels: []ner.Relation{
				rel("Antwerp", "Scheldt", "location", "Antwerp lies on the Scheldt.", 1),
				rel("Rotterdam", "Rhine", "supply", "Rotterdam is fed by the Rhine.", 1),
			},
		},
	}}
}

// sized is a document of n chunks with no graph, all chunks sharing a word
// (marker) so a text search finds each of them.
func sized(id, path, marker string, n int) *store.DocumentWrite {
	f := docFx{id: id, path: path, title: "sized " + id}
	for i := 0; i < n; i++ {
		f.chunks = append(f.chunks, chunkFx{text: fmt.Sprintf("Chunk %d of %s mentions %s among other words.", i, id, marker)})
	}
	return f.write()
}

// randomVectors is n seeded random vectors.
func randomVectors(seed uint64, n int) [][]float32 {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, Dimension)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		out[i] = v
	}
	return out
}
