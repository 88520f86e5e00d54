// Package embedstore turns text into vectors for chunks, entities and relations.
// It defines the Embedder stage and an offline feature-hashing embedder.
package embedstore

import "github.com/tmc/langchaingo/embeddings"

// Embedder is a langchaingo embedder that also says what it is, so a store can
// refuse vectors from a different model or dimension.
type Embedder interface {
	embeddings.Embedder
	Name() string
	Dimension() int
}
