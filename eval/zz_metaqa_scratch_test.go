package eval

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"docgraph/embedstore"
	"docgraph/retrieve/paths"
)

func TestZZMetaQAScratch(t *testing.T) {
	if os.Getenv("MQ") == "" {
		t.Skip()
	}
	ctx := context.Background()
	f, _ := os.Open("/work/shared/data/metaqa/kb.txt")
	t0 := time.Now()
	kg, err := paths.ReadTriples(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kg %d nodes %d edges in %v", kg.NumEntities(), kg.NumRelations(), time.Since(t0))
	qs, err := LoadMetaQA("/work/shared/data/metaqa", []int{1, 2, 3}, 200)
	if err != nil {
		t.Fatal(err)
	}
	var reps []*MetaQAReport
	for _, s := range []string{os.Getenv("MQ")} {
		spec, err := paths.ParseSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		pe, _ := strconv.Atoi(os.Getenv("PE"))
		r, err := paths.New(kg, spec, paths.WithEmbedder(embedstore.NewHash()), paths.WithPerEnd(pe))
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range []int{1, 2, 3} {
			rep, err := EvaluateMetaQA(ctx, r, qs[h])
			if err != nil {
				t.Fatal(err)
			}
			reps = append(reps, rep)
		}
	}
	WriteMetaQATable(os.Stdout, reps)
}
