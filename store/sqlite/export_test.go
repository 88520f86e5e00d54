package sqlite

// KeepAllTerms makes full-text queries keep the terms most rows hold, as
// FTS5's BM25 ranks with every term: the reference pruning is measured
// against.
func (s *Store) KeepAllTerms(keep bool) { s.allTerms = keep }
