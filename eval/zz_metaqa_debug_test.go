package eval

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"docgraph/embedstore"
	"docgraph/retrieve/paths"
)

func TestZZMetaQADebug(t *testing.T) {
	if os.Getenv("MQD") == "" {
		t.Skip()
	}
	ctx := context.Background()
	f, _ := os.Open("/work/shared/data/metaqa/kb.txt")
	kg, _ := paths.ReadTriples(f)
	hop, _ := strconv.Atoi(os.Getenv("HOP"))
	qs, _ := LoadMetaQA("/work/shared/data/metaqa", []int{hop}, 200)
	spec, _ := paths.ParseSpec(os.Getenv("MQD"))
	r, _ := paths.New(kg, spec, paths.WithEmbedder(embedstore.NewHash()), paths.WithTopK(100000))
	shown := 0
	for _, q := range qs[hop] {
		seed, _ := kg.Lookup(q.Topic)
		sid, _ := kg.Entity(seed)
		ans := map[string]bool{}
		for _, a := range q.Answers {
			if n, ok := kg.Lookup(a); ok {
				id, _ := kg.Entity(n)
				ans[id] = true
			}
		}
		res, _ := r.Retrieve(ctx, q.Question, []string{sid})
		found := map[string]bool{}
		firstRank := -1
		for i, p := range res.Paths[:min(64, len(res.Paths))] {
			if ans[p.End().ID] {
				found[p.End().ID] = true
				if firstRank < 0 {
					firstRank = i
				}
			}
		}
		if len(found) == len(ans) {
			continue
		}
		shown++
		if shown > 12 {
			break
		}
		fmt.Printf("\nQ: %s  answers=%d found=%d\n", q.Question, len(ans), len(found))
		for i, p := range res.Paths[:min(6, len(res.Paths))] {
			fmt.Printf("  %d %.3f %v %s\n", i, p.Score, ans[p.End().ID], p.Text)
		}
		for i, p := range res.Paths {
			if ans[p.End().ID] && !found[p.End().ID] {
				fmt.Printf("  missed at %d %.3f %s\n", i, p.Score, p.Text)
				break
			}
		}
	}
}
