package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/pipeline"
)

// Watch a folder: the first sync ingests what is there, then every change
// is applied as it happens.
func ExamplePipeline_Watch() {
	tmp, _ := os.MkdirTemp("", "watch-example")
	defer os.RemoveAll(tmp)
	docs := filepath.Join(tmp, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "ada.md"), []byte("Ada Lovelace worked with Charles Babbage.\n"), 0o644)

	ctx := context.Background()
	emb := embedstore.NewHash(embedstore.WithDimension(64))
	s := pipeline.Settings{Store: "sqlite://" + filepath.Join(tmp, "graph.db")}
	st, err := pipeline.OpenStore(ctx, s, emb, pipeline.NewMerger(emb))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	p, _ := pipeline.Offline(s, emb, st)

	stop := make(chan struct{})
	synced := make(chan *pipeline.Summary, 1)
	changes := make(chan pipeline.FileResult, 16)
	done := make(chan error, 1)
	go func() {
		done <- p.Watch(ctx, []string{docs},
			pipeline.WithDebounce(50*time.Millisecond),
			pipeline.WithStop(stop),
			pipeline.WithOnSynced(func(sum *pipeline.Summary) { synced <- sum }),
			pipeline.WithOnChange(func(r pipeline.FileResult) { changes <- r }))
	}()
	fmt.Println("initial sync added", (<-synced).Added)

	os.WriteFile(filepath.Join(docs, "hopper.md"), []byte("Grace Hopper built the A-0 compiler.\n"), 0o644)
	r := <-changes
	fmt.Println(r.Outcome, filepath.Base(r.Path))

	os.Remove(filepath.Join(docs, "ada.md"))
	r = <-changes
	fmt.Println(r.Outcome, filepath.Base(r.Path))

	close(stop)
	fmt.Println("stopped:", <-done)
	// Output:
	// initial sync added 1
	// added hopper.md
	// deleted ada.md
	// stopped: <nil>
}
