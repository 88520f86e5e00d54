package sqlite_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/retrieve"
	"github.com/docgraph/docgraph/store"
	"github.com/docgraph/docgraph/store/sqlite"
	"github.com/docgraph/docgraph/store/storetest"
)

// passageSet is a corpus.jsonl and questions.jsonl pair of ../shared/data.
type passageSet struct {
	passages  []struct{ ID, Title, Text string }
	questions []struct {
		Question string
		GoldIDs  []string `json:"gold_ids"`
	}
}

func loadSet(tb testing.TB, name string) *passageSet {
	tb.Helper()
	dir := filepath.Join("..", "..", "..", "shared", "data", name)
	var ps passageSet
	for _, f := range []struct {
		file string
		add  func([]byte) error
	}{
		{"corpus.jsonl", func(b []byte) error {
			var p struct{ ID, Title, Text string }
			err := json.Unmarshal(b, &p)
			ps.passages = append(ps.passages, p)
			return err
		}},
		{"questions.jsonl", func(b []byte) error {
			var q struct {
				Question string
				GoldIDs  []string `json:"gold_ids"`
			}
			err := json.Unmarshal(b, &q)
			ps.questions = append(ps.questions, q)
			return err
		}},
	} {
		fh, err := os.Open(filepath.Join(dir, f.file))
		if err != nil {
			tb.Skipf("no %s data: %v", name, err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<22)
		for sc.Scan() {
			if err := f.add(sc.Bytes()); err != nil {
				tb.Fatal(err)
			}
		}
		fh.Close()
	}
	return &ps
}

var capitalised = regexp.MustCompile(`\b[A-Z][a-zA-Z]+\b`)

// textStore writes copies copies of a passage set as one-chunk documents
// (copy c > 0 renames every capitalised word, as scale_corpus.py does, so
// nothing repeats), text only: full-text search needs no graph.
func textStore(tb testing.TB, ps *passageSet, copies int) *sqlite.Store {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "g.db"), storetest.Options())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	var ws []*store.DocumentWrite
	for c := 0; c < copies; c++ {
		for _, p := range ps.passages {
			text := p.Title + "\n" + p.Text
			if c > 0 {
				text = capitalised.ReplaceAllStringFunc(text, func(w string) string { return w + fmt.Sprintf("q%c", 'a'+c) })
			}
			id := fmt.Sprintf("c%d-%s", c, p.ID)
			ws = append(ws, &store.DocumentWrite{
				Document: store.Document{ID: id, Path: id, Title: p.Title},
				Chunks:   []store.Chunk{{ID: id + ":0", DocID: id, Text: text, Tokens: len(text) / 4, End: len(text)}},
			})
			if len(ws) == 2000 {
				if err := st.WriteDocuments(ctx, ws...); err != nil {
					tb.Fatal(err)
				}
				ws = ws[:0]
			}
		}
	}
	if err := st.WriteDocuments(ctx, ws...); err != nil {
		tb.Fatal(err)
	}
	return st
}

// prunedRecall is Recall@5 of full-text search with and without the
// common terms, over the first n questions, and the mean overlap of the
// two top 10s.
func prunedRecall(tb testing.TB, st *sqlite.Store, ps *passageSet, n int) (pruned, all, overlap float64) {
	ctx := context.Background()
	n = min(n, len(ps.questions))
	for _, q := range ps.questions[:n] {
		query := strings.Join(retrieve.ContentWords(q.Question), " ")
		var top [2][]string
		for i, keepAll := range []bool{false, true} {
			st.KeepAllTerms(keepAll)
			hits, err := st.SearchChunksText(ctx, query, 10)
			if err != nil {
				tb.Fatal(err)
			}
			for _, h := range hits {
				top[i] = append(top[i], h.DocID)
			}
		}
		st.KeepAllTerms(false)
		gold := map[string]bool{}
		for _, g := range q.GoldIDs {
			gold["c0-"+g] = true
		}
		hit := func(ids []string) float64 {
			n := 0
			for i, id := range ids {
				if i < 5 && gold[id] {
					n++
				}
			}
			return float64(n) / float64(max(len(gold), 1))
		}
		pruned += hit(top[0])
		all += hit(top[1])
		same := 0
		for _, a := range top[0] {
			for _, b := range top[1] {
				if a == b {
					same++
				}
			}
		}
		overlap += float64(same) / float64(max(len(top[1]), 1))
	}
	return pruned / float64(n), all / float64(n), overlap / float64(n)
}

// TestPrunedFullTextKeepsRecall: leaving out the terms over a thousand and
// a half rows hold finds the supporting passages of the 2wiki and CMRC
// questions as well as ranking with every term does (R@5 within a point).
func TestPrunedFullTextKeepsRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("writes the 2wiki passages")
	}
	for _, name := range []string{"2wiki", "cmrc2018"} {
		ps := loadSet(t, name)
		st := textStore(t, ps, 1)
		pruned, all, overlap := prunedRecall(t, st, ps, 400)
		t.Logf("%s: R@5 pruned %.1f, every term %.1f; top-10 overlap %.2f", name, 100*pruned, 100*all, overlap)
		if pruned < all-0.01 {
			t.Errorf("%s: pruning common terms costs recall: R@5 %.1f against %.1f", name, 100*pruned, 100*all)
		}
	}
}

// BenchmarkPrunedFullText measures the same at 1 and 4 copies of 2wiki
// (DOCGRAPH_BENCH_COPIES), reporting recall and time per search.
func BenchmarkPrunedFullText(b *testing.B) {
	ps := loadSet(b, "2wiki")
	for _, copies := range []int{1, 4} {
		b.Run(fmt.Sprintf("x%d", copies), func(b *testing.B) {
			st := textStore(b, ps, copies)
			ctx := context.Background()
			var queries []string
			for _, q := range ps.questions {
				queries = append(queries, strings.Join(retrieve.ContentWords(q.Question), " "))
			}
			for _, keepAll := range []bool{false, true} {
				st.KeepAllTerms(keepAll)
				name := "pruned"
				if keepAll {
					name = "every-term"
				}
				b.Run(name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if _, err := st.SearchChunksText(ctx, queries[i%len(queries)], 50); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run("recall", func(b *testing.B) {
				var pruned, all, overlap float64
				for i := 0; i < b.N; i++ {
					pruned, all, overlap = prunedRecall(b, st, ps, len(ps.questions))
				}
				b.ReportMetric(100*pruned, "R@5-pruned")
				b.ReportMetric(100*all, "R@5-every-term")
				b.ReportMetric(overlap, "top10-overlap")
			})
		})
	}
}
