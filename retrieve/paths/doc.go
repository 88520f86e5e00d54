// Package paths retrieves reasoning paths (Entity -[relation]-> Entity ...)
// from the knowledge graph, as LEGO-GraphRAG's three modules plus GraphRAG-FI filtering.
//
// A Spec names the modules ("se=ppr,pf=beam:bm25,pr=emb", see DOCS.md):
// subgraph extraction around the question's entities (PPR exact or by
// push, RWR, ego network), path filtering inside that subgraph (all
// shortest paths, complete paths, beam search with a scorer) and path
// refinement (top-k by a scorer, or random). A KG is loaded once from a
// store (LoadKG) or a triple file (ReadTriples) and shared by retrievers:
//
//	kg, _ := paths.LoadKG(ctx, st)
//	spec, _ := paths.ParseSpec("se=ppr,pf=spf,pr=bm25")
//	r, _ := paths.New(kg, spec, paths.WithProvenance(st))
//	res, _ := r.Retrieve(ctx, "who directed the films [Marlene Dietrich] starred in", nil)
package paths
