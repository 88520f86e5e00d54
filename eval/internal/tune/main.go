// Command tune is a development harness (temporary).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"docgraph/eval"
	"docgraph/pipeline"
	"docgraph/retrieve"
	"docgraph/store"
	_ "docgraph/store/sqlite"
)

func main() {
	data := flag.String("data", "/work/shared/data", "")
	sets := flag.String("sets", "2wiki,musique", "")
	cfgJSON := flag.String("cfg", "", "config overrides as JSON")
	mode := flag.String("mode", "mix", "")
	limit := flag.Int("limit", 0, "")
	timings := flag.Bool("t", false, "")
	prof := flag.String("prof", "", "")
	verbose := flag.Bool("v", false, "")
	flag.Parse()
	ctx := context.Background()
	for _, name := range filepath.SplitList(*sets) {
		_ = name
	}
	for _, name := range split(*sets) {
		ds, err := eval.Load(filepath.Join(*data, name))
		check(err)
		if *limit > 0 {
			ds.Passages = ds.Passages[:*limit]
			ds.Questions = nil
		}
		db := "/tmp/dg-eval/" + name + ".db"
		emb, _ := pipeline.NewEmbedder("hash")
		_, statErr := os.Stat(db)
		st, err := pipeline.OpenStore(ctx, pipeline.Settings{Store: "sqlite://" + db}, emb, pipeline.NewMerger(emb))
		check(err)
		var idx *eval.Index
		if statErr != nil {
			p, err := pipeline.Offline(pipeline.Settings{}, emb, st)
			check(err)
			t := time.Now()
			idx, err = eval.Ingest(ctx, ds, p, st, 4, nil)
			check(err)
			fmt.Fprintf(os.Stderr, "ingest %s: %v\n", name, time.Since(t))
		} else {
			_, idx = eval.Documents(ds)
		}
		cfg := retrieve.DefaultConfig()
		if strings.Contains(*cfgJSON, "Weights") {
			cfg.Weights = retrieve.Weights{}
		}
		if *cfgJSON != "" {
			check(json.Unmarshal([]byte(*cfgJSON), &cfg))
		}
		r := retrieve.New(st, emb, retrieve.WithConfig(cfg))
		var fn eval.RetrieveFunc
		stageT := map[string]time.Duration{}
		noSeed := map[string]bool{}
		if *mode == "bm25" {
			fn = func(ctx context.Context, q string) ([]string, error) {
				hits, err := st.SearchChunksText(ctx, q, 5)
				var ids []string
				for _, h := range hits {
					ids = append(ids, h.DocID)
				}
				return ids, err
			}
		} else {
			fn = func(ctx context.Context, q string) ([]string, error) {
				res, err := r.Retrieve(ctx, q, *mode)
				if err != nil {
					return nil, err
				}
				for k, v := range res.Timings {
					stageT[k] += v
				}
				named := 0
				for _, e := range res.Entities {
					if e.Via == "name" && e.Chunks <= 40 {
						named++
					}
				}
				if named == 0 {
					noSeed[q] = true
				}
				var ids []string
				for _, p := range res.Passages {
					ids = append(ids, p.DocID)
				}
				return ids, nil
			}
		}
		// warm the graph
		fn(ctx, "warm up")
		stop := startProf(*prof)
		rep, err := eval.Evaluate(ctx, ds, idx, *mode, fn, nil)
		stop()
		if *mode != "bm25" {
			fmt.Printf("questions without seeds: %d\n", len(noSeed))
			if *verbose {
				for q := range noSeed {
					fmt.Println("   ", q)
				}
			}
		}
		check(err)
		fmt.Printf("%-8s %-6s R@2 %.1f R@5 %.1f p50 %v p95 %v\n", name, *mode, rep.Recall[2], rep.Recall[5], rep.P50.Round(time.Microsecond*100), rep.P95.Round(time.Microsecond*100))
		_ = store.ErrNotFound
		if *timings {
			for k, v := range stageT {
				fmt.Printf("  %-18s %v\n", k, (v / time.Duration(len(ds.Questions)+1)).Round(10*time.Microsecond))
			}
		}
		st.Close()
	}
}

func split(s string) []string {
	var out []string
	cur := ""
	for _, c := range s {
		if c == ',' {
			out = append(out, cur)
			cur = ""
			continue
		}
		cur += string(c)
	}
	return append(out, cur)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
