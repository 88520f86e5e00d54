// Package ner extracts named entities and the relations between them from chunks of text.
// It defines the Extractor stage and ships an offline extractor that needs no model.
package ner

import "context"

// Chunk is what an extractor reads: one chunk of a document and the document's title.
type Chunk struct {
	ID       string
	DocTitle string
	Text     string
}

// Entity is one extracted entity with a short description from this chunk.
type Entity struct {
	Name        string
	Type        string
	Description string
}

// Relation is one extracted relation between two entities named in the same chunk.
type Relation struct {
	Source      string
	Target      string
	Keywords    string
	Description string
	Weight      float64 // strength of the relation in this chunk; 0 means 1
}

// Extraction is an extractor's result for one chunk.
type Extraction struct {
	Entities  []Entity
	Relations []Relation
	// Rejected counts records the extractor could not parse (LLM extractors).
	Rejected int
}

// Extractor turns a chunk into entities and relations.
type Extractor interface {
	Extract(ctx context.Context, c Chunk) (*Extraction, error)
}
