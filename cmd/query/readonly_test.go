package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/internal/clitest"
)

// TestQueryReadOnlyStore: a store the user cannot write (a folder and file
// without write permission, as a user other than the owner) is queried
// without creating anything beside it: no journal, no shared memory, no
// cache.
func TestQueryReadOnlyStore(t *testing.T) {
	cmd := clitest.Command(t, "TestQueryChild")
	base := clitest.AsNobody(t, cmd)
	dir := filepath.Join(base, "store")
	db := filepath.Join(dir, "g.db")
	ingestCorpus(t, "sqlite://"+db)
	// Read-only for the child: as nobody, a root-owned 0755 folder already
	// is; as the owner, take the write bits away.
	if os.Geteuid() != 0 {
		os.Chmod(db, 0o444)
		os.Chmod(dir, 0o555)
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
	}
	before := listDir(t, dir)
	clitest.SetArgs(t, cmd, "--store", "sqlite://"+db, "--config", "", "--top-k", "2", "Who broke Enigma messages at Bletchley Park?")
	cmd.Dir = base
	r := clitest.Run(t, cmd)
	if r.Code != 0 || !strings.Contains(r.Stdout, "alan-turing.txt") {
		t.Fatalf("query of a read-only store: exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if after := listDir(t, dir); !slices.Equal(before, after) {
		t.Errorf("the query changed the store's folder:\nbefore %v\nafter  %v", before, after)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
