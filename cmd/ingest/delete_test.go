package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/pipeline"
)

// TestDeleteIsExact ingests two sets of documents that mention the same
// people and places, deletes one set, and compares the whole graph with a
// clean ingest of the other: merged descriptions, weights, mention counts and
// vectors must all be as if the deleted documents had never been there.
func TestDeleteIsExact(t *testing.T) {
	work := t.TempDir()
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	corpus(t, a, 8, 5)
	corpus(t, b, 6, 6)
	want := dump(t, ingestClean(t, a))

	tests := []struct {
		name    string
		targets func(t *testing.T, db string) []string
	}{
		{name: "by folder", targets: func(*testing.T, string) []string { return []string{b} }},
		{name: "by path and id", targets: func(t *testing.T, db string) []string {
			var targets []string
			for i, d := range storedDocs(t, db) {
				if !strings.HasPrefix(d.Path, b+string(filepath.Separator)) {
					continue
				}
				if i%2 == 0 {
					targets = append(targets, d.ID)
				} else {
					targets = append(targets, d.Path)
				}
			}
			return targets
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "g.db")
			if _, errOut, err := runCmd(t, append(storeArgs(db), a, b)...); err != nil {
				t.Fatalf("ingest: %v\n%s", err, errOut)
			}
			// No --embedder: delete takes the one the store holds.
			out, errOut, err := runCmd(t, append([]string{"delete", "--store", "sqlite://" + db}, tt.targets(t, db)...)...)
			if err != nil {
				t.Fatalf("delete: %v\n%s", err, errOut)
			}
			if n := strings.Count(out, "deleted "); n != 6 {
				t.Fatalf("want 6 documents deleted, output:\n%s", out)
			}
			sameGraph(t, dump(t, db), want)
		})
	}
}

func TestDeleteReportsMissingTargets(t *testing.T) {
	work := t.TempDir()
	corpus(t, work, 2, 7)
	db := filepath.Join(t.TempDir(), "g.db")
	if _, errOut, err := runCmd(t, append(storeArgs(db), work)...); err != nil {
		t.Fatalf("ingest: %v\n%s", err, errOut)
	}
	_, errOut, err := runCmd(t, "delete", "--store", "sqlite://"+db, "--json", filepath.Join(work, "nope.md"))
	if !errors.Is(err, errNothingDeleted) || exitCode(err) != 1 || !strings.Contains(errOut, "nope.md") {
		t.Fatalf("deleting nothing should fail naming the target: %v\n%s", err, errOut)
	}
	out, _, err := runCmd(t, "delete", "--store", "sqlite://"+db, "--json", work)
	if err != nil {
		t.Fatal(err)
	}
	var results []pipeline.FileResult
	if err := json.Unmarshal([]byte(out), &results); err != nil || len(results) != 2 || results[0].Outcome != pipeline.Deleted {
		t.Fatalf("--json should list the deleted documents: %v\n%s", err, out)
	}
	_, _, err = runCmd(t, "delete", "--store", "sqlite://"+filepath.Join(t.TempDir(), "none.db"), "x")
	if err == nil || !strings.Contains(err.Error(), "no store at") {
		t.Fatalf("a missing store should be reported, not created: %v", err)
	}
}
