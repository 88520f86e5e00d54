package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/embedstore"
)

func TestStatus(t *testing.T) {
	work := t.TempDir()
	corpus(t, work, 3, 8)
	if err := os.WriteFile(filepath.Join(work, "empty.md"), []byte("  \n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "binary.txt"), []byte("abc\x00\x01\x02def"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "g.db")
	if _, _, err := runCmd(t, append(storeArgs(db), work)...); exitCode(err) != 2 {
		t.Fatalf("ingest with two bad files should exit 2: %v", err)
	}

	out, errOut, err := runCmd(t, "status", "--store", "sqlite://"+db, "--json")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, errOut)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if rep.Documents != 5 || rep.ByStatus["done"] != 3 || rep.ByStatus["failed"] != 2 || rep.ByStatus["processing"] != 0 {
		t.Fatalf("counts by state: %+v", rep)
	}
	if rep.Embedder.Name != embedstore.NewHash().Name() || rep.Embedder.Dimension != 64 || !strings.Contains(rep.Store, db) {
		t.Fatalf("store and embedder: %+v", rep)
	}
	if rep.Chunks == 0 || rep.Entities == 0 || rep.Relations == 0 || rep.Mentions == 0 {
		t.Fatalf("graph counts: %+v", rep)
	}
	if len(rep.Failed) != 2 {
		t.Fatalf("failed documents: %+v", rep.Failed)
	}
	for _, f := range rep.Failed {
		if f.Error == "" || !strings.Contains(f.Error, filepath.Base(f.Path)) {
			t.Errorf("a failure should carry a reason naming its file: %+v", f)
		}
	}

	text, _, err := runCmd(t, "status", "--store", "sqlite://"+db)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 done, 2 failed", embedstore.NewHash().Name() + ", dimension 64", "failed:", "empty.md: ", "binary.txt: "} {
		if !strings.Contains(text, want) {
			t.Errorf("status output lacks %q:\n%s", want, text)
		}
	}

	// --space accounts for every byte of the database file, and names the
	// store's files.
	out, errOut, err = runCmd(t, "status", "--store", "sqlite://"+db, "--json", "--space")
	if err != nil {
		t.Fatalf("status --space: %v\n%s", err, errOut)
	}
	rep = statusReport{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	var parts, file int64
	kinds := map[string]bool{}
	for _, sp := range rep.Space {
		kinds[sp.Kind] = true
		switch {
		case sp.Kind == "file" && sp.Name == filepath.Base(db):
			file = sp.Bytes
		case sp.Kind != "file":
			parts += sp.Bytes
		}
	}
	if file != info.Size() || parts != file || !kinds["table"] || !kinds["index"] || !kinds["full-text"] {
		t.Errorf("space: parts add up to %d, the file is %d (listed %d); kinds %v\n%+v", parts, info.Size(), file, kinds, rep.Space)
	}
	text, _, err = runCmd(t, "status", "--store", "sqlite://"+db, "--space")
	if err != nil || !strings.Contains(text, "space:") || !strings.Contains(text, "entity_mentions") {
		t.Errorf("status --space output: %v\n%s", err, text)
	}

	_, _, err = runCmd(t, "status", "--store", "sqlite://"+filepath.Join(t.TempDir(), "none.db"))
	if err == nil || !strings.Contains(err.Error(), "no store at") {
		t.Fatalf("status of a missing store should say so: %v", err)
	}
}
