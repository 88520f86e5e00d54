package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/pipeline"
)

func TestIngestKGTriples(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	kb := filepath.Join(dir, "kb.txt")
	os.WriteFile(kb, []byte("Kismet|directed_by|William Dieterle\nKismet|starred_actors|Marlene Dietrich\nnot a triple\n"), 0o644)
	db := "sqlite://" + filepath.Join(dir, "g.db")

	out, logs, err := runCmd(t, "--store", db, "--kg-triples", kb)
	if err != nil {
		t.Fatalf("import: %v\n%s", err, logs)
	}
	if !strings.Contains(out, "1 documents, 1 chunks, 3 entities, 2 relations") {
		t.Errorf("summary: %q", out)
	}
	if !strings.Contains(logs, "kg added "+kb) || !strings.Contains(logs, "1 malformed lines skipped") || !strings.Contains(logs, "line 3") {
		t.Errorf("log: %q", logs)
	}

	out, logs, err = runCmd(t, "--store", db, "--json", "--kg-triples", kb)
	if err != nil {
		t.Fatal(err)
	}
	var rs []pipeline.FileResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 || rs[0].Outcome != pipeline.Unchanged {
		t.Errorf("second import as JSON: %v %+v\n%s", err, rs, logs)
	}

	// A file without any triple fails the run with exit status 2 and keeps
	// the PATH arguments for a later run.
	bad := filepath.Join(dir, "prose.txt")
	os.WriteFile(bad, []byte("just prose\n"), 0o644)
	_, logs, err = runCmd(t, "--store", db, "--kg-triples", bad, bad)
	if !errors.Is(err, errSomeFailed) || !strings.Contains(logs, "kg failed") {
		t.Errorf("bad import: err %v, log %q", err, logs)
	}

	if _, _, err := runCmd(t, "--store", db); err == nil {
		t.Error("no PATH and no --kg-triples must be an argument error")
	}
}
