package graphbuild

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/splitter"
)

// TestResolveOnBenchmarks runs entity resolution over the shared multi-hop
// corpora as ingest does (passage = title + text, default splitter, offline
// extractor) and reports how many names it merged, by rule, with an even
// sample of 30 for checking by hand (go test -run ResolveOnBenchmarks -v).
func TestResolveOnBenchmarks(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the benchmark corpora")
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(filepath.Dir(dir), "..", "shared", "data")
	sp, err := splitter.New()
	if err != nil {
		t.Fatal(err)
	}
	ex := ner.NewOffline()
	for _, set := range []string{"2wiki", "musique"} {
		f, err := os.Open(filepath.Join(data, set, "corpus.jsonl"))
		if err != nil {
			t.Skipf("benchmark data: %v", err)
		}
		var all []string
		rules := map[string]int{}
		docs := 0
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var p struct{ ID, Title, Text string }
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Fatal(err)
			}
			docs++
			var chunks []ChunkExtraction
			for _, c := range sp.Split(p.ID, p.Title+"\n"+p.Text) {
				x, err := ex.Extract(context.Background(), ner.Chunk{ID: c.ID(), DocTitle: p.Title, Text: c.Text})
				if err != nil {
					t.Fatal(err)
				}
				chunks = append(chunks, ChunkExtraction{ChunkID: c.ID(), Extraction: x, Text: c.Text})
			}
			for _, m := range Resolve(chunks) {
				rules[m.Rule]++
				all = append(all, fmt.Sprintf("%-8s %-22q -> %-36q in %q", m.Rule, m.Short, m.Full, p.Title))
			}
		}
		f.Close()
		sort.Strings(all)
		t.Logf("%s: %d documents, %d names merged (%d surname, %d acronym)", set, docs, len(all), rules["surname"], rules["acronym"])
		if n := len(all); n > 0 {
			if os.Getenv("RESOLVE_ALL") != "" {
				for _, m := range all {
					t.Logf("  %s", m)
				}
			}
			for i := 0; i < 30 && i < n; i++ {
				t.Logf("  %s", all[i*n/min(30, n)])
			}
		}
	}
}
