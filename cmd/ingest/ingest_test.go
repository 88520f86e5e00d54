package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/docgraph/docgraph"
	"github.com/docgraph/docgraph/internal/clitest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/pipeline"
)

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := execute(context.Background(), streams{Out: &out, Err: &errb}, args)
	return out.String(), errb.String(), err
}

func TestIngestCommandSummaryAndExitStatus(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("# Alpha\n\nAlan Turing worked at Bletchley Park."), 0o644)
	os.WriteFile(filepath.Join(docs, "bad.pdf"), []byte("%PDF-1.4 this is not really a pdf"), 0o644)
	db := "sqlite://" + filepath.Join(dir, "g.db")
	t.Chdir(dir) // no docgraph.yaml here

	out, logs, err := runCmd(t, "--store", db, docs)
	if !errors.Is(err, errSomeFailed) || exitCode(err) != 2 {
		t.Fatalf("a failed file must give exit status 2, got %v", err)
	}
	if !strings.Contains(out, "1 added") || !strings.Contains(out, "1 failed") || !strings.Contains(out, "bad.pdf") ||
		!strings.Contains(out, "writes: 1 document in 1 transaction, 0 transaction retries") {
		t.Errorf("summary:\n%s", out)
	}
	if !strings.Contains(logs, "added "+filepath.Join(docs, "a.md")) {
		t.Errorf("plain log lines expected when not on a terminal:\n%s", logs)
	}

	os.Remove(filepath.Join(docs, "bad.pdf"))
	out, _, err = runCmd(t, "--store", db, "--json", "--prune", docs)
	if err != nil {
		t.Fatalf("clean run: %v", err)
	}
	var sum pipeline.Summary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out)
	}
	if sum.Unchanged != 1 || sum.Failed != 0 || sum.Totals == nil || sum.Totals.Documents != 1 || sum.Writes == nil || sum.Writes.Retries != 0 {
		t.Errorf("json summary %+v", sum)
	}
	if !strings.Contains(out, `"retries": 0`) {
		t.Errorf("--json summary does not say how many write retries happened:\n%s", out)
	}
	if _, _, err := runCmd(t, "--store", db, "--write-retry-budget", "-1s", docs); err == nil || !strings.Contains(err.Error(), "--write-retry-budget") {
		t.Errorf("a negative retry budget: %v; want an error naming the flag", err)
	}
}

func TestIngestCommandConfigAndEnv(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("Grace Hopper wrote the A-0 System."), 0o644)
	os.WriteFile(filepath.Join(dir, "docgraph.yaml"), []byte("store: sqlite://"+filepath.Join(dir, "from-file.db")+"\n"), 0o644)
	if _, _, err := runCmd(t, "a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "from-file.db")); err != nil {
		t.Fatalf("store from docgraph.yaml not used: %v", err)
	}
	t.Setenv("DOCGRAPH_STORE", "sqlite://"+filepath.Join(dir, "from-env.db"))
	if _, _, err := runCmd(t, "a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "from-env.db")); err != nil {
		t.Fatalf("DOCGRAPH_STORE not used: %v", err)
	}
	_, logs, err := runCmd(t, "--embedder", "hash:64", "a.txt")
	if err == nil || !strings.Contains(logs, "embedder") {
		t.Fatalf("a store made with hash/384 must refuse hash/64: %v\n%s", err, logs)
	}
}

// TestVersion: --version prints the release and the store schema on
// stdout, from the real binary (cobra writes it to the process's stdout).
func TestVersion(t *testing.T) {
	r := clitest.Run(t, clitest.Command(t, "TestIngestChild", "--version"))
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "ingest "+docgraph.Version) || !strings.Contains(r.Stdout, "store schema: sqlite v3") {
		t.Errorf("ingest --version: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}
