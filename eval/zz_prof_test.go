package eval

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"docgraph/embedstore"
	"docgraph/pipeline"
	_ "docgraph/store/sqlite"
)

func TestZZProfIngest(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZZ_N"))
	if n == 0 {
		t.Skip()
	}
	ds, err := Load("../../shared/data/2wiki")
	if err != nil {
		t.Fatal(err)
	}
	ds.Passages = ds.Passages[:n]
	e := embedstore.NewHash()
	dir := t.TempDir()
	settings := pipeline.Settings{Store: "sqlite://" + filepath.Join(dir, "g.db"), Concurrency: 4}
	st, err := pipeline.OpenStore(context.Background(), settings, e, pipeline.NewMerger(e))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, _ := pipeline.Offline(settings, e, st)
	start := time.Now()
	last := start
	_, err = Ingest(context.Background(), ds, p, st, 4, func(done, total int) {
		if done%500 == 0 {
			t.Logf("%d: %s (last 500: %s)", done, time.Since(start), time.Since(last))
			last = time.Now()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("total %s", time.Since(start))
}
