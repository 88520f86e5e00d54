package main

import (
	"context"
	"encoding/json"
	"github.com/docgraph/docgraph"
	"github.com/docgraph/docgraph/internal/clitest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
	"github.com/docgraph/docgraph/pipeline"
)

// ingestCorpus ingests testdata/corpus into a new store at db offline;
// every file must be added.
func ingestCorpus(t *testing.T, db string) {
	t.Helper()
	corpus, _ := filepath.Abs("../../testdata/corpus")
	if sum := ingestDir(t, db, corpus); sum.Failed != 0 {
		t.Fatalf("ingest: %+v", sum)
	}
}

// ingestDir ingests dir into a new store at db offline; failures are
// allowed (a test may want a failed document), but something is added.
func ingestDir(t *testing.T, db, dir string) *pipeline.Summary {
	t.Helper()
	emb := embedstore.NewHash()
	s := pipeline.Settings{Store: db}
	st, err := pipeline.OpenStore(context.Background(), s, emb, pipeline.NewMerger(emb))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := pipeline.Offline(s, emb, st)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := p.Ingest(context.Background(), []string{dir}, pipeline.Options{})
	if err != nil || sum.Added == 0 {
		t.Fatalf("ingest: %+v %v", sum, err)
	}
	return sum
}

func TestQueryCommandPrintsRankedPassagesWithSources(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	out, errs, err := run(t, "--store", db, "--config", "", "--top-k", "2", "Who broke Enigma messages at Bletchley Park?")
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "[1] ") || !strings.Contains(lines[0], "alan-turing.txt") {
		t.Fatalf("top passage should be alan-turing.txt:\n%s", out)
	}
	if strings.Count(out, "\n[") != 1 {
		t.Errorf("--top-k 2 should print 2 passages:\n%s", out)
	}

	out, _, err = run(t, "--store", db, "--config", "", "--json", "Who designed the Go programming language?")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Passages []struct {
			DocPath string  `json:"doc_path"`
			Score   float64 `json:"score"`
		} `json:"passages"`
		Timings map[string]int64 `json:"timings_ns"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.Passages) == 0 || !strings.HasSuffix(res.Passages[0].DocPath, "go-language.md") || res.Timings["total"] <= 0 {
		t.Fatalf("json result %+v", res)
	}
}

// TestVersion: --version prints the release and the store schema on
// stdout, from the real binary (cobra writes it to the process's stdout).
func TestVersion(t *testing.T) {
	r := clitest.Run(t, clitest.Command(t, "TestQueryChild", "--version"))
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "query "+docgraph.Version) || !strings.Contains(r.Stdout, "store schema: sqlite v3") {
		t.Errorf("query --version: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}
