package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/eval"
)

// filmSet is a two-question benchmark in the shared layout: each question
// needs a passage that shares almost no words with it.
func filmSet(t *testing.T) string {
	t.Helper()
	passages := []eval.Passage{
		{ID: "p0", Title: "Won In The Clouds", Text: "Won In The Clouds is a 1935 American adventure film directed by Harold Fairfax."},
		{ID: "p1", Title: "Harold Fairfax", Text: "Harold Fairfax was an English filmmaker. He was born in Melbourne."},
		{ID: "p2", Title: "Clouds (film)", Text: "Clouds is a drama. The director of Clouds was born in Ohio; the film won an award."},
		{ID: "p3", Title: "Director of the Clouds Observatory", Text: "The director of the clouds observatory was born in Zurich and won a prize."},
		{ID: "p4", Title: "The Lone Prairie", Text: "The Lone Prairie is a 1942 western film directed by William Berke."},
		{ID: "p5", Title: "William Berke", Text: "William Berke was an American producer. He died in Los Angeles in 1958."},
		{ID: "p6", Title: "Prairie Death", Text: "Prairie Death is a song; the director of the lone video died young."},
	}
	questions := []eval.Question{
		{ID: "q1", Question: "Where was the director of Won In The Clouds born?", Answers: []string{"Melbourne"}, GoldIDs: []string{"p0", "p1"}},
		{ID: "q2", Question: "When did the director of The Lone Prairie die?", Answers: []string{"1958"}, GoldIDs: []string{"p4", "p5"}},
	}
	dir := filepath.Join(t.TempDir(), "films")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSONL(t, filepath.Join(dir, "corpus.jsonl"), passages)
	writeJSONL(t, filepath.Join(dir, "questions.jsonl"), questions)
	return dir
}

func writeJSONL[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	for _, r := range rows {
		b, _ := json.Marshal(r)
		w.Write(append(b, '\n'))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func evalReports(t *testing.T, args ...string) (map[string]eval.Report, string) {
	t.Helper()
	out, errs, err := run(t, append([]string{"eval", "--config", "", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	var reps []eval.Report
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	byMethod := map[string]eval.Report{}
	for _, r := range reps {
		byMethod[r.Dataset+"/"+r.Method] = r
	}
	return byMethod, errs
}

func TestEvalAllModes(t *testing.T) {
	dir := filmSet(t)
	stores := t.TempDir()
	reps, errs := evalReports(t, "--dataset", dir, "--mode", "all", "--baseline", "bm25", "--store-dir", stores)
	if len(reps) != 6 {
		t.Fatalf("reports %v; want bm25 and five modes", reps)
	}
	for name, r := range reps {
		if r.Questions != 2 || r.Recall[2] < 0 || r.Recall[5] > 100 || r.Recall[2] > r.Recall[5] || r.P50 <= 0 || r.P95 < r.P50 {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if mix, bm25 := reps["films/mix"], reps["films/bm25"]; mix.Recall[2] <= bm25.Recall[2] || mix.Recall[5] != 100 {
		t.Errorf("mix R@2 %.1f R@5 %.1f vs bm25 R@2 %.1f: the graph should find both bridge passages", mix.Recall[2], mix.Recall[5], bm25.Recall[2])
	}
	if !strings.Contains(errs, "ingested 7 passages") {
		t.Errorf("no ingest report on stderr: %q", errs)
	}
	// A second run reuses the kept store.
	again, errs := evalReports(t, "--dataset", dir, "--store-dir", stores)
	if !strings.Contains(errs, "reusing") || again["films/mix"].Recall[5] != reps["films/mix"].Recall[5] {
		t.Errorf("second run: %q, mix %+v", errs, again["films/mix"])
	}
}

func TestEvalAnswersWithLLM(t *testing.T) {
	dir := filmSet(t)
	fakeLLM(t, "Melbourne [2]")
	reps, _ := evalReports(t, "--dataset", dir, "--llm", "openai:test-model")
	r := reps["films/mix"]
	// The fake model says Melbourne to both: right for one question only.
	if r.Answered != 2 || r.EM != 50 || r.F1 != 50 {
		t.Errorf("EM/F1 = %.1f/%.1f over %d answers; want 50/50 over 2", r.EM, r.F1, r.Answered)
	}
}

func TestEvalRejectsBadInput(t *testing.T) {
	dir := filmSet(t)
	for _, args := range [][]string{
		{"eval", "--config", ""},
		{"eval", "--config", "", "--dataset", dir, "--mode", "mix,psychic"},
		{"eval", "--config", "", "--dataset", dir, "--baseline", "grep"},
		{"eval", "--config", "", "--dataset", filepath.Join(dir, "missing")},
	} {
		if _, errs, err := run(t, args...); err == nil || errs == "" {
			t.Errorf("%v: want an error message, got %v %q", args, err, errs)
		}
	}
}

// TestEvalOnSharedData runs mix and the BM25 baseline on a slice of the
// shared MuSiQue set: the first questions' gold passages among a few
// hundred others. The full run is `go run ./cmd/query eval --dataset ...`.
func TestEvalOnSharedData(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the benchmark slice")
	}
	data, err := eval.FindData(".")
	if err != nil {
		t.Skip("no shared benchmark data")
	}
	ds, err := eval.Load(filepath.Join(data, "musique"))
	if err != nil {
		t.Fatal(err)
	}
	const questions, passages = 20, 300
	ds.Questions = ds.Questions[:questions]
	keep := map[string]bool{}
	for _, q := range ds.Questions {
		for _, g := range q.GoldIDs {
			keep[g] = true
		}
	}
	var corpus []eval.Passage
	for _, p := range ds.Passages {
		if keep[p.ID] || len(corpus) < passages {
			corpus = append(corpus, p)
		}
	}
	dir := filepath.Join(t.TempDir(), "musique-slice")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSONL(t, filepath.Join(dir, "corpus.jsonl"), corpus)
	writeJSONL(t, filepath.Join(dir, "questions.jsonl"), ds.Questions)
	reps, _ := evalReports(t, "--dataset", dir, "--baseline", "bm25")
	mix, bm25 := reps["musique-slice/mix"], reps["musique-slice/bm25"]
	t.Logf("%d passages, %d questions: mix R@2 %.1f R@5 %.1f, bm25 R@2 %.1f R@5 %.1f", len(corpus), questions,
		mix.Recall[2], mix.Recall[5], bm25.Recall[2], bm25.Recall[5])
	if mix.Recall[5] < bm25.Recall[5]+5 {
		t.Errorf("mix R@5 %.1f does not beat bm25's %.1f by 5 points", mix.Recall[5], bm25.Recall[5])
	}
}
