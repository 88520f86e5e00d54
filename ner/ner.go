// Package ner extracts named entities and the relations between them from chunks of text.
// It defines the Extractor stage and ships an offline extractor that needs no model.
package ner

import (
	"context"
	"fmt"
)

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
	// Unusable says the chunk's extraction answer had no record in the
	// extraction format (LLM extractors): the chunk has no records, not
	// because its text names nothing but because the answer was not read.
	Unusable bool
	// UnusableAnswers describes each answer for this chunk (extraction or
	// gleaning) that was not in the extraction format, one line each with
	// the model's name and the answer's start (not escaped).
	UnusableAnswers []string
}

// Extractor turns a chunk into entities and relations.
type Extractor interface {
	Extract(ctx context.Context, c Chunk) (*Extraction, error)
}

// UnusableAnswersError stops a run whose model answered the first extraction
// prompts with no record in the extraction format, before any usable answer:
// a wrong model behind a gateway, or a chat template that ignores the
// prompt. Going on would spend the whole corpus on answers that are thrown
// away.
type UnusableAnswersError struct {
	Model  string // the model's name, e.g. openai:gpt-4o-mini
	Count  int    // consecutive unusable answers that stopped the run
	Answer string // the start of one of them, on one line, not escaped
}

func (e *UnusableAnswersError) Error() string {
	return fmt.Sprintf("the model's answers are not in the extraction format: the first %d answers of %s had no record, e.g. %q; check --llm",
		e.Count, e.Model, e.Answer)
}
