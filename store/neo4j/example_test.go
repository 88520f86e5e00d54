package neo4j_test

import (
	"context"
	"fmt"
	"os"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/store"
	_ "github.com/docgraph/docgraph/store/neo4j" // registers neo4j://, bolt:// and their TLS variants
)

// Open a Neo4j store through store.Open, the way the commands do: the URL
// names the server, the options carry credentials, database and embedder.
func Example() {
	emb := embedstore.NewHash()
	st, err := store.Open(context.Background(), "neo4j://localhost:7687", store.Options{
		Username: os.Getenv("NEO4J_USER"),
		Password: os.Getenv("NEO4J_PASSWORD"),
		Database: "neo4j",
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   graphbuild.NewMerger(emb),
	})
	if err != nil {
		fmt.Println(err) // never contains the password
		return
	}
	defer st.Close()
	stats, err := st.Stats(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(stats.Documents, "documents,", stats.Entities, "entities")
}
