package docgraph_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/docgraph/docgraph"
)

// Ingest a folder into an embedded store and ask it a question, offline.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "docgraph-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	g, err := docgraph.Open(ctx, "sqlite://"+filepath.Join(dir, "graph.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	sum, err := g.Ingest(ctx, "testdata/corpus")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d documents added, %d failed\n", sum.Added, sum.Failed)

	res, err := g.Query(ctx, "Who designed the Go programming language?", docgraph.WithTopK(3))
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range res.Passages {
		fmt.Println(filepath.Base(p.DocPath))
	}
	// Output:
	// 10 documents added, 0 failed
	// go-language.md
	// ken-thompson.md
	// grace-hopper.md
}
