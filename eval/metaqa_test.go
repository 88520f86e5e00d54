package eval

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/retrieve/paths"
)

const testKB = `Kismet|directed_by|William Dieterle
Kismet|starred_actors|Marlene Dietrich
Morocco|directed_by|Josef von Sternberg
Morocco|starred_actors|Marlene Dietrich
Morocco|starred_actors|Gary Cooper
Juarez|directed_by|William Dieterle
Juarez|starred_actors|Bette Davis
`

// writeMetaQA lays out a tiny MetaQA directory.
func writeMetaQA(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "kb.txt"), []byte(testKB), 0o644)
	files := map[int]string{
		1: "what movies did [Marlene Dietrich] act in\tKismet|Morocco\nwho directed [Juarez]\tWilliam Dieterle\n",
		2: "who directed the movies [Gary Cooper] acted in\tJosef von Sternberg\nwho starred in films directed by [William Dieterle]\tMarlene Dietrich|Bette Davis|Nobody Known\n",
	}
	for h, text := range files {
		os.MkdirAll(filepath.Join(dir, fmt.Sprintf("%d-hop", h)), 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-hop", h), "qa_dev.txt"), []byte(text), 0o644)
	}
	return dir
}

func TestLoadMetaQA(t *testing.T) {
	dir := writeMetaQA(t)
	qs, err := LoadMetaQA(dir, []int{1, 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs[1]) != 1 || len(qs[2]) != 1 {
		t.Fatalf("limit 1: %d and %d questions", len(qs[1]), len(qs[2]))
	}
	q := qs[1][0]
	if q.Topic != "Marlene Dietrich" || q.Hops != 1 || strings.Join(q.Answers, "|") != "Kismet|Morocco" {
		t.Errorf("question %+v", q)
	}
	if _, err := LoadMetaQA(dir, []int{3}, 0); err == nil {
		t.Error("missing 3-hop file accepted")
	}
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "1-hop"), 0o755)
	os.WriteFile(filepath.Join(bad, "1-hop", "qa_dev.txt"), []byte("no topic here\tx\n"), 0o644)
	if _, err := LoadMetaQA(bad, []int{1}, 0); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Errorf("question without a topic: %v", err)
	}
}

func TestEvaluateMetaQA(t *testing.T) {
	dir := writeMetaQA(t)
	qs, _ := LoadMetaQA(dir, []int{1, 2}, 0)
	f, _ := os.Open(filepath.Join(dir, "kb.txt"))
	kg, err := paths.ReadTriples(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := paths.ParseSpec("se=ppr:exact,pf=spf,pr=bm25")
	r, err := paths.New(kg, spec, paths.WithTopK(2))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateMetaQA(context.Background(), r, qs[1])
	if err != nil {
		t.Fatal(err)
	}
	// Both 1-hop questions are answered completely within two paths.
	if rep.Questions != 2 || rep.Hit != 100 || rep.Recall != 100 || rep.SubgraphRecall != 100 || rep.Paths != 2 {
		t.Errorf("1-hop report %+v", rep)
	}
	rep, err = EvaluateMetaQA(context.Background(), r, qs[2])
	if err != nil {
		t.Fatal(err)
	}
	// The second 2-hop question has an answer missing from the graph: its
	// recall is at most 2/3, and the mean at most (1 + 2/3) / 2.
	if rep.Recall > 100*(1+2.0/3)/2+1e-9 || rep.Hit != 100 {
		t.Errorf("2-hop report %+v", rep)
	}
	var b strings.Builder
	WriteMetaQATable(&b, []*MetaQAReport{rep})
	if !strings.Contains(b.String(), "se=ppr:exact,pf=spf,pr=bm25") {
		t.Errorf("table:\n%s", b.String())
	}
}

// TestComparePPRWithIgraph runs igraph when python3 has it; the numbers of
// the real comparison come from `query eval --metaqa --baseline igraph`.
func TestComparePPRWithIgraph(t *testing.T) {
	python := FindIgraphPython()
	if python == "" {
		t.Skip("python3 with python-igraph not installed")
	}
	dir := writeMetaQA(t)
	kb := filepath.Join(dir, "kb.txt")
	qs, _ := LoadMetaQA(dir, []int{1}, 0)
	tops, err := RunIgraphTop(context.Background(), python, kb, filepath.Join(dir, "1-hop", "qa_dev.txt"), 2, 5, 0.8)
	if err != nil {
		t.Fatal(err)
	}
	if len(tops) != 2 || tops[0].Topic != "Marlene Dietrich" || len(tops[0].Top) != 5 {
		t.Fatalf("igraph tops %+v", tops)
	}
	f, _ := os.Open(kb)
	kg, _ := paths.ReadTriples(f, paths.WithExactNames())
	f.Close()
	rep, err := ComparePPR(kg, qs[1], tops, 5, 0.8, 1e-12, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if rep.TieOverlap != 1 || rep.PushTieOverlap != 1 {
		t.Errorf("top-5 agreement with igraph: %+v", rep)
	}
}
