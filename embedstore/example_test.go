package embedstore_test

import (
	"context"
	"fmt"

	"github.com/docgraph/docgraph/embedstore"
)

func ExampleNewHash() {
	emb := embedstore.NewHash(embedstore.WithDimension(128))
	vecs, _ := emb.EmbedDocuments(context.Background(), []string{
		"Lothair II was king of Lotharingia.",
		"Teutberga married Lothair II.",
		"Bread needs flour and water.",
	})
	fmt.Println(emb.Name(), emb.Dimension())
	fmt.Println(embedstore.Cosine(vecs[0], vecs[1]) > embedstore.Cosine(vecs[0], vecs[2]))
	// Output:
	// hash-v2 128
	// true
}
