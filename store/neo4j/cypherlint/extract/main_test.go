package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rules decide what is linted, so each gets a case: a miss hides a
// statement from the lint, a false find fails it on something not Cypher.
const sample = `package p

import "context"

type statement string

const (
	typed       statement = "RETURN 1"
	usedAs                = "ANYTHING the compiler turns into a statement"
	keyword               = "MATCH (n) RETURN n"
	fragment              = "MATCH (n) "
	whole                 = fragment + "RETURN n"
	indexName             = "docgraph_index"
	bareWord              = "MATCH"
	notString             = 42
)

var list = []statement{"CREATE (a)", ` + "`MERGE (b)`" + `}

func exec(ctx context.Context, s statement) {}

func f(ctx context.Context) {
	exec(ctx, usedAs)
	exec(ctx, fragment+"DELETE n")
	var s statement = typed
	_ = s
}
`

const sampleTest = `package p

const testWipe = "MATCH (n) DETACH DELETE n"
`

func TestExtract(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"p.go": sample, "p_test.go": sampleTest} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := extract(dir, "statement")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		if _, dup := got[r.Name]; dup {
			t.Errorf("%s found twice", r.Name)
		}
		got[r.Name] = r.Cypher
	}
	want := map[string]string{
		"typed":     "RETURN 1",
		"usedAs":    "ANYTHING the compiler turns into a statement",
		"keyword":   "MATCH (n) RETURN n",
		"whole":     "MATCH (n) RETURN n",
		"list[0]":   "CREATE (a)",
		"list[1]":   "MERGE (b)",
		"f@literal": "MATCH (n) DELETE n",
		"testWipe":  "MATCH (n) DETACH DELETE n",
	}
	for name, text := range want {
		if got[name] != text {
			t.Errorf("%s = %q, want %q", name, got[name], text)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is not a statement but was found", name)
		}
	}
	if !slices.IsSortedFunc(recs, func(a, b record) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	}) {
		t.Error("statements are not in source order")
	}
}

func TestExtractWithoutStatementType(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte("package p\n\nconst q = \"MATCH (n) RETURN n\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := extract(dir, "statement"); err == nil {
		t.Error("a package without the statement type was accepted")
	}
}

// TestStore runs where the lint may not (no npm): a store whose statements
// the rules stop finding fails here too.
func TestStore(t *testing.T) {
	recs, err := extract(filepath.Join("..", ".."), "statement")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < defaultMinimum {
		t.Errorf("found %d statements in store/neo4j, want at least %d", len(recs), defaultMinimum)
	}
}
