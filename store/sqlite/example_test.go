package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/store"
	_ "github.com/docgraph/docgraph/store/sqlite" // registers sqlite:// and bare paths
)

func Example() {
	dir, err := os.MkdirTemp("", "docgraph-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	emb := embedstore.NewHash(embedstore.WithDimension(64))
	s, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, ".docgraph", "graph.db"), store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   graphbuild.NewMerger(emb),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	text := "Basel lies on the Rhine."
	ents, rels := graphbuild.Build([]graphbuild.ChunkExtraction{{ChunkID: "d1#0", Extraction: &ner.Extraction{
		Entities:  []ner.Entity{{Name: "Basel", Type: "city", Description: "Swiss city."}, {Name: "Rhine", Type: "river"}},
		Relations: []ner.Relation{{Source: "Basel", Target: "Rhine", Description: "Basel lies on the Rhine."}},
	}}})
	err = s.WriteDocument(ctx, &store.DocumentWrite{
		Document: store.Document{ID: "d1", Path: "notes/basel.md", Title: "Basel"},
		Chunks:   []store.Chunk{{ID: "d1#0", Text: text, End: len(text), Embedding: emb.Vector(text)}},
		Entities: ents, Relations: rels,
	})
	if err != nil {
		log.Fatal(err)
	}
	hits, err := s.SearchEntitiesText(ctx, "basel", 1)
	if err != nil {
		log.Fatal(err)
	}
	stats, err := s.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hits[0].Name, "-", hits[0].Description)
	fmt.Println(stats.Documents, "document,", stats.Entities, "entities,", stats.Relations, "relation")
	// Output:
	// Basel - Swiss city.
	// 1 document, 2 entities, 1 relation
}
