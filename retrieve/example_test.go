package retrieve_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/eval"
	"github.com/docgraph/docgraph/pipeline"
	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
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
	st, err := filmStore(ctx, dir, emb)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

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

// A server keeps one warm retriever and derives one per request from it:
// the derived retrievers share its caches of the store's graphs.
func ExampleRetriever_WithConfig() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "retrieve-example")
	defer os.RemoveAll(dir)
	emb := embedstore.NewHash()
	st, err := filmStore(ctx, dir, emb)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	warm := retrieve.New(st, emb, retrieve.WithBackgroundReload())
	if err := warm.Refresh(ctx); err != nil { // load what the first request would
		fmt.Println(err)
		return
	}
	cfg := warm.Config()
	cfg.TopK = 1
	res, err := warm.WithConfig(cfg).Retrieve(ctx, "Where was the director of Won In The Clouds born?", retrieve.ModeMix)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(res.Passages), res.Passages[0].DocTitle)
	// Output:
	// 1 Won In The Clouds
}

// filmStore ingests the film passages into a new store in dir.
func filmStore(ctx context.Context, dir string, emb embedstore.Embedder) (*sqlite.Store, error) {
	st, err := sqlite.Open(ctx, filepath.Join(dir, "graph.db"), store.Options{
		Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: emb.Dimension()},
		Merger:   pipeline.NewMerger(emb),
	})
	if err != nil {
		return nil, err
	}
	p, _ := pipeline.Offline(pipeline.Settings{}, emb, st)
	if _, err := eval.Ingest(ctx, &eval.Dataset{Name: "films", Dir: dir, Passages: film}, p, st, 2, nil); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}
