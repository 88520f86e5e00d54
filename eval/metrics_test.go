package eval

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRecall(t *testing.T) {
	tests := []struct {
		retrieved, gold []string
		k               int
		want            float64
	}{
		{[]string{"a", "b", "c"}, []string{"a", "c"}, 2, 0.5},
		{[]string{"a", "b", "c"}, []string{"a", "c"}, 3, 1},
		{[]string{"a", "a", "b"}, []string{"a", "b"}, 2, 0.5}, // a repeat counts once
		{[]string{"x"}, []string{"a", "b", "c", "d"}, 5, 0},
		{nil, []string{"a"}, 5, 0},
		{[]string{"d", "c", "b", "a"}, []string{"a", "b", "c", "d"}, 5, 1},
		{[]string{"a"}, nil, 5, 0},
	}
	for _, tt := range tests {
		if got := Recall(tt.retrieved, tt.gold, tt.k); got != tt.want {
			t.Errorf("Recall(%v, %v, %d) = %v, want %v", tt.retrieved, tt.gold, tt.k, got, tt.want)
		}
	}
}

func TestExactMatchAndF1(t *testing.T) {
	tests := []struct {
		pred   string
		golds  []string
		em, f1 float64
	}{
		{"Thomas Valentine Cooper", []string{"Thomas Valentine Cooper"}, 1, 1},
		{"**The** Thomas Valentine Cooper. [1][2]", []string{"Thomas Valentine Cooper"}, 1, 1},
		{"Yes [3]\n\nSources:\n[3] a.txt", []string{"yes"}, 1, 1},
		{"G. Stanley Hall", []string{"Granville Stanley Hall", "G. Stanley Hall"}, 1, 1},
		{"Stanley Hall", []string{"G. Stanley Hall"}, 0, 0.8},
		{"Melbourne, Australia", []string{"Melbourne"}, 0, 2.0 / 3},
		{"no", []string{"yes"}, 0, 0},
		{"", []string{"yes"}, 0, 0},
	}
	for _, tt := range tests {
		if got := ExactMatch(tt.pred, tt.golds); got != tt.em {
			t.Errorf("ExactMatch(%q, %v) = %v, want %v", tt.pred, tt.golds, got, tt.em)
		}
		if got := F1(tt.pred, tt.golds); math.Abs(got-tt.f1) > 1e-9 {
			t.Errorf("F1(%q, %v) = %v, want %v", tt.pred, tt.golds, got, tt.f1)
		}
	}
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for q, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 95: 95 * time.Millisecond, 100: 100 * time.Millisecond, 1: time.Millisecond} {
		if got := Percentile(ds, q); got != want {
			t.Errorf("Percentile(1..100 ms, %v) = %v, want %v", q, got, want)
		}
	}
	if Percentile(nil, 50) != 0 || Percentile([]time.Duration{7}, 95) != 7 {
		t.Error("Percentile of an empty or one-element list")
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Percentile sorted its input in place")
	}
}

func writeDataset(t *testing.T, corpus, questions string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "set")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus.jsonl"), []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "questions.jsonl"), []byte(questions), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadChecksTheLayout(t *testing.T) {
	const p = `{"id": "p1", "title": "A", "text": "a"}` + "\n" + `{"id": "p2", "title": "B", "text": "b"}` + "\n"
	const q = `{"id": "q1", "question": "?", "answers": ["a"], "gold_ids": ["p1"], "type": "x"}` + "\n"
	ds, err := Load(writeDataset(t, p, q))
	if err != nil || len(ds.Passages) != 2 || len(ds.Questions) != 1 || ds.Name != "set" {
		t.Fatalf("Load = %+v, %v", ds, err)
	}
	for name, c := range map[string][2]string{
		"unknown gold":       {p, `{"id": "q1", "question": "?", "gold_ids": ["p9"]}`},
		"no gold":            {p, `{"id": "q1", "question": "?", "gold_ids": []}`},
		"duplicate id":       {p + `{"id": "p1", "title": "C", "text": "c"}`, q},
		"broken line":        {p + "{not json\n", q},
		"no questions":       {p, ""},
		"missing passage id": {`{"title": "A", "text": "a"}`, q},
	} {
		if _, err := Load(writeDataset(t, c[0], c[1])); err == nil {
			t.Errorf("%s: Load succeeded", name)
		}
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "corpus.jsonl") {
		t.Errorf("missing files: %v", err)
	}
}

func TestDocumentsMergeIdenticalPassages(t *testing.T) {
	ds := &Dataset{Dir: "/data/x", Passages: []Passage{
		{ID: "p1", Title: "Same", Text: "text"}, {ID: "p2", Title: "Other", Text: "text"}, {ID: "p3", Title: "Same", Text: "text"},
	}}
	docs, idx := Documents(ds)
	if len(docs) != 3 || idx.Documents() != 2 {
		t.Fatalf("%d docs, %d distinct; want 3 and 2", len(docs), idx.Documents())
	}
	if fmt.Sprint(idx.Passages(docs[0].ID)) != "[p1 p3]" || docs[0].Text != "Same\ntext" || docs[0].Title != "Same" {
		t.Errorf("doc 0 = %+v stands for %v", docs[0], idx.Passages(docs[0].ID))
	}
	if got := idx.expand([]string{docs[1].ID, docs[0].ID, docs[2].ID}); fmt.Sprint(got) != "[p2 p1 p3]" {
		t.Errorf("expand = %v", got)
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	err := WriteTable(&b, []*Report{
		{Dataset: "musique", Method: "mix", Questions: 100, Recall: map[int]float64{2: 56.4, 5: 73.9}, P50: 21 * time.Millisecond, P95: 40 * time.Millisecond},
		{Dataset: "2wiki", Method: "bm25", Questions: 381, Recall: map[int]float64{2: 54, 5: 66.1}, EM: 40, F1: 50.5, Answered: 381},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "2wiki") || !strings.Contains(lines[2], "73.9") || !strings.Contains(lines[1], "50.5") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestHit(t *testing.T) {
	golds := []string{"Josef von Sternberg", "William Dieterle"}
	for pred, want := range map[string]float64{
		"William Dieterle [1]":                    1,
		"- Kismet\n- **Josef von Sternberg** [2]": 1,
		"Dieterle":            0, // part of a name is not the answer
		"Williams Dieterlein": 0,
		"":                    0,
	} {
		if got := Hit(pred, golds); got != want {
			t.Errorf("Hit(%q) = %v, want %v", pred, got, want)
		}
	}
}

// TestEvaluateAnswerOnly: questions without gold passages (MetaQA's
// answer sets) get answers scored and no recall.
func TestEvaluateAnswerOnly(t *testing.T) {
	ds := MetaQADatasets(map[int][]MetaQAQuestion{1: {
		{Hops: 1, Question: "who directed [Kismet]", Topic: "Kismet", Answers: []string{"William Dieterle"}},
		{Hops: 1, Question: "what films did [Marlene Dietrich] act in", Topic: "Marlene Dietrich", Answers: []string{"Kismet", "Morocco"}},
	}}, []int{1})[0]
	if ds.Name != "metaqa-1hop" || ds.Questions[0].Question != "who directed Kismet" {
		t.Fatalf("dataset %+v", ds)
	}
	answers := map[string]string{"who directed Kismet": "William Dieterle", "what films did Marlene Dietrich act in": "Morocco\nBlonde Venus"}
	rep, err := Evaluate(context.Background(), ds, nil, "mix", func(context.Context, string) ([]string, error) { return nil, nil },
		func(_ context.Context, q string) (string, error) { return answers[q], nil })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Recall != nil || rep.Answered != 2 || rep.EM != 50 || rep.Hit != 100 {
		t.Errorf("report %+v", rep)
	}
	var b strings.Builder
	if err := WriteTable(&b, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	if row := strings.Fields(strings.Split(b.String(), "\n")[1]); strings.Join(row[3:5], " ") != "- -" || row[len(row)-1] != "100.0" {
		t.Errorf("table row %q; want no recall and Hit 100", row)
	}
}
func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{4.4, 4.1, 4.9, 4.2, 4.3}, 4.3},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
