package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"docgraph/embedstore"
	"docgraph/graphbuild"
	"docgraph/store"
)

func TestDbgWrite(t *testing.T) {
	if os.Getenv("DBGW") == "" {
		t.Skip()
	}
	dim := 16
	emb := embedstore.NewHash(embedstore.WithDimension(dim))
	s, _ := Open(context.Background(), filepath.Join(t.TempDir(), "g.db"), store.Options{Embedder: store.EmbedderInfo{Name: emb.Name(), Dimension: dim}, Merger: graphbuild.NewMerger(emb)})
	defer s.Close()
	ctx := context.Background()
	size := func(id string, seed uint64) *store.DocumentWrite {
		return synthetic(syntheticSize{docID: id, path: id + ".txt", chunks: 300, entities: 5000, relations: 10000, pool: 4000, seed: seed, dim: dim})
	}
	for i, id := range []string{"other-1", "other-2"} {
		t0 := time.Now()
		s.WriteDocument(ctx, size(id, uint64(100+i)))
		t.Log("setup write", time.Since(t0))
	}
	f, _ := os.Create("/tmp/rewrite.prof")
	pprof.StartCPUProfile(f)
	for i := 0; i < 4; i++ {
		w := size(fmt.Sprint("book", i), uint64(i))
		t0 := time.Now()
		if err := s.WriteDocument(ctx, w); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrite", time.Since(t0))
	}
	pprof.StopCPUProfile()
	f.Close()
}
