package graphbuild

import (
	"context"
	"reflect"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/store"
)

func chunkOf(id, text string, names ...string) ChunkExtraction {
	x := &ner.Extraction{}
	for _, n := range names {
		x.Entities = append(x.Entities, ner.Entity{Name: n, Type: "other", Description: text})
	}
	return ChunkExtraction{ChunkID: id, Extraction: x, Text: text}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		name   string
		chunks []ChunkExtraction
		want   []Merge
	}{
		{"surname", []ChunkExtraction{
			chunkOf("d:0", "Ken Thompson wrote Unix.", "Ken Thompson", "Unix"),
			chunkOf("d:1", "Thompson later designed Go.", "Thompson", "Go"),
		}, []Merge{{Short: "Thompson", Full: "Ken Thompson", Rule: "surname"}}},
		{"two full names share the surname", []ChunkExtraction{
			chunkOf("d:0", "Ken Thompson met Emma Thompson.", "Ken Thompson", "Emma Thompson"),
			chunkOf("d:1", "Thompson smiled.", "Thompson"),
		}, nil},
		{"the word is in another name too", []ChunkExtraction{
			chunkOf("d:0", "Ken Thompson joined Thompson Twins.", "Ken Thompson", "Thompson Twins", "Thompson"),
		}, nil},
		{"a place is no surname", []ChunkExtraction{
			chunkOf("d:0", "The Thompson River joins the Fraser.", "Thompson River", "Fraser"),
			chunkOf("d:1", "Thompson is a town.", "Thompson"),
		}, nil},
		{"full names never merge", []ChunkExtraction{
			chunkOf("d:0", "Ken Thompson and Kenneth Thompson.", "Ken Thompson", "Kenneth Thompson"),
		}, nil},
		{"acronym after its long form", []ChunkExtraction{
			chunkOf("d:0", "International Business Machines (IBM) is a company.", "International Business Machines", "IBM"),
			chunkOf("d:1", "IBM built the System/360.", "IBM", "System/360"),
		}, []Merge{{Short: "IBM", Full: "International Business Machines", Rule: "acronym"}}},
		{"acronym before its long form, with a connector", []ChunkExtraction{
			chunkOf("d:0", "The NSF (National Science Foundation) funds research. BoA is Bank of America (BoA).", "NSF", "National Science Foundation", "Bank of America", "BoA"),
		}, []Merge{
			{Short: "BoA", Full: "Bank of America", Rule: "acronym"},
			{Short: "NSF", Full: "National Science Foundation", Rule: "acronym"},
		}},
		{"legal suffix outside the acronym", []ChunkExtraction{
			chunkOf("d:0", "International Business Machines Corporation (IBM) is big.", "International Business Machines Corporation", "IBM"),
		}, []Merge{{Short: "IBM", Full: "International Business Machines Corporation", Rule: "acronym"}}},
		{"initials that do not spell it", []ChunkExtraction{
			chunkOf("d:0", "The Royal Air Force (USAF) flew.", "Royal Air Force", "USAF"),
		}, nil},
		{"an acronym defined two ways", []ChunkExtraction{
			chunkOf("d:0", "Chaos Computer Club (CCC) and Cape Cod Canal (CCC).", "Chaos Computer Club", "Cape Cod Canal", "CCC"),
		}, nil},
		{"no text: the descriptions quote it", []ChunkExtraction{
			{ChunkID: "d:0", Extraction: &ner.Extraction{Entities: []ner.Entity{
				{Name: "World Health Organization", Description: "The World Health Organization (WHO) is an agency."},
				{Name: "WHO", Description: "WHO coordinates."},
			}}},
		}, []Merge{{Short: "WHO", Full: "World Health Organization", Rule: "acronym"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Resolve(c.chunks); !reflect.DeepEqual(got, c.want) && (len(got) > 0 || len(c.want) > 0) {
				t.Errorf("Resolve = %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestBuildResolved: a short form's mentions go to the full name's entity
// and keep the short form as their name, so the merged entity, named by
// its own mentions, is the full name, and the document's rows say what
// the text said.
func TestBuildResolved(t *testing.T) {
	chunks := []ChunkExtraction{
		chunkOf("d:0", "Thompson and Ken Thompson.", "Thompson", "Ken Thompson"),
		chunkOf("d:1", "Thompson designed Go.", "Thompson", "Go"),
	}
	chunks[1].Extraction.Relations = []ner.Relation{{Source: "Thompson", Target: "Go", Keywords: "designed"}}
	ents, rels, merges := BuildResolved(chunks)
	if len(merges) != 1 {
		t.Fatalf("merges = %+v", merges)
	}
	ken := EntityID("Ken Thompson")
	var rows []store.EntityMention
	for _, m := range ents {
		if m.EntityID == EntityID("Thompson") {
			t.Errorf("a mention still names the short form's own entity: %+v", m)
		}
		if m.EntityID == ken {
			rows = append(rows, m)
		}
	}
	if len(rows) != 2 || rows[0].Name != "Ken Thompson" || rows[1].Name != "Thompson" {
		t.Errorf("rows of Ken Thompson = %+v; want the full name where the chunk has it, the short form where it has only that", rows)
	}
	if len(rels) != 1 || rels[0].RelationID != RelationID(ken, EntityID("Go"), "") {
		t.Errorf("relations = %+v, want Ken Thompson - Go", rels)
	}
	merged, err := NewMerger(embedstore.NewHash(embedstore.WithDimension(16))).MergeEntities(context.Background(), [][]store.EntityMention{rows})
	if err != nil || len(merged) != 1 || merged[0].Name != "Ken Thompson" || merged[0].Mentions != 2 {
		t.Errorf("merged = %+v, %v", merged, err)
	}
}
