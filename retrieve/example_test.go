package retrieve_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"docgraph/embedstore"
	"docgraph/eval"
	"docgraph/pipeline"
	"docgraph/retrieve"
	"docgraph/store"
	"docgraph/store/sqlite"
)

func ExampleParseKeywords() {
	kw, err := retrieve.ParseKeywords("```json\n" + `{"high_level_keywords": ["film directors"], "low_level_keywords": ["Won In The Clouds"]}` + "\n```")
	fmt.Println(kw.High, kw.Low, err)
	_, err = retrieve.ParseKeywords("Sorry, I cannot do that.")
	fmt.Println(err != nil)
	// Output:
	// [film directors] [Won In The Clouds] <nil>
	// true
}

func ExampleRetriever_Retrieve() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "retrieve-example")
	defer os.RemoveAll(dir)
	emb := embedstore.NewHash()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "graph.db"), store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   pipeline.NewMerger(emb),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	p, _ := pipeline.Offline(pipeline.Settings{}, emb, st)
	ds := &eval.Dataset{Name: "films", Dir: dir, Passages: film}
	if _, err := eval.Ingest(ctx, ds, p, st, 2, nil); err != nil {
		fmt.Println(err)
		return
	}

	r := retrieve.New(st, emb, retrieve.WithTopK(2))
	res, err := r.Retrieve(ctx, "Where was the director of Won In The Clouds born?", retrieve.ModeMix)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range res.Passages {
		fmt.Println(p.DocTitle)
	}
	// Output:
	// Won In The Clouds
	// Harold Fairfax
}
