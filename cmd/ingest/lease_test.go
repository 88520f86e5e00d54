package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/pipeline"
)

// TestTwoProcessesShareTheWork runs two ingest processes over one folder
// into one store at once: no file is added (extracted and written) by both,
// the one that finds a document in progress says so per file, in the
// summary line and in --json, and the store equals one clean ingest.
func TestTwoProcessesShareTheWork(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns ingest processes")
	}
	work := t.TempDir()
	docs := filepath.Join(work, "docs")
	const n = 48
	corpus(t, docs, n, 3)
	db := filepath.Join(work, "shared.db")
	text := startChild(t, work, append(storeArgs(db), docs)...)
	js := startChild(t, work, append(storeArgs(db), "--json", docs)...)
	for _, c := range []*child{text, js} {
		if code := c.wait(t); code != 0 {
			t.Fatalf("exit %d:\n%s", code, c.stderr.String())
		}
	}

	added := func(c *child) (map[string]bool, int) {
		paths, claimed := map[string]bool{}, 0
		sc := bufio.NewScanner(strings.NewReader(c.stderr.String()))
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "added "):
				paths[strings.Fields(line)[1]] = true
			case strings.HasPrefix(line, "claimed "):
				claimed++
				if !strings.Contains(line, "(in progress elsewhere, by pid ") {
					t.Errorf("a claimed file should name the run holding it: %q", line)
				}
			}
		}
		return paths, claimed
	}
	a, aClaimed := added(text)
	b, bClaimed := added(js)
	for p := range a {
		if b[p] {
			t.Errorf("%s added by both processes", p)
		}
	}
	if len(a)+len(b) != n {
		t.Errorf("%d + %d files added; want %d in all", len(a), len(b), n)
	}
	t.Logf("text process: %d added, %d claimed; json process: %d added, %d claimed", len(a), aClaimed, len(b), bClaimed)

	m := regexp.MustCompile(`documents: (\d+) added, 0 updated, (\d+) unchanged, 0 renamed, 0 duplicate, 0 deleted, 0 failed, (\d+) in progress elsewhere`).FindStringSubmatch(text.stdout.String())
	if m == nil || m[1] != strconv.Itoa(len(a)) || m[3] != strconv.Itoa(aClaimed) {
		t.Errorf("text summary does not match its files (%d added, %d claimed):\n%s", len(a), aClaimed, text.stdout.String())
	}
	var sum pipeline.Summary
	if err := json.Unmarshal([]byte(js.stdout.String()), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, js.stdout.String())
	}
	if sum.Added != len(b) || sum.Claimed != bClaimed || len(sum.ClaimedFiles) != bClaimed || sum.Added+sum.Claimed+sum.Unchanged != n {
		t.Errorf("--json summary %d added, %d claimed (%d listed), %d unchanged; its files: %d added, %d claimed",
			sum.Added, sum.Claimed, len(sum.ClaimedFiles), sum.Unchanged, len(b), bClaimed)
	}
	for _, r := range sum.ClaimedFiles {
		if r.Outcome != pipeline.Claimed || !strings.HasPrefix(r.ClaimedBy, "pid ") {
			t.Errorf("--json claimed file: %+v", r)
		}
	}
	sameGraph(t, dump(t, db), dump(t, ingestClean(t, docs)))
}
