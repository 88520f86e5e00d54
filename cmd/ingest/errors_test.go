package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/internal/clitest"
	"github.com/docgraph/docgraph/pipeline"
)

// TestIngestUserErrors: every mistake a user can make at the command line
// or in the configuration gets a message naming it (with the usage hint
// when it was typed) and a non-zero exit status, and writes nothing.
func TestIngestUserErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // no docgraph.yaml unless a case writes one
	doc := filepath.Join(dir, "a.md")
	if err := os.WriteFile(doc, []byte("# A\n\nAda Lovelace met Charles Babbage in London."), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "no", "such", "dir", "g.db")
	const hint = "Run 'ingest --help' for usage."
	tests := []clitest.UserError{
		{Name: "no arguments", Want: []string{"ingest: no PATH given", hint}},
		{Name: "unknown flag", Args: []string{"--bogus", doc}, Want: []string{"ingest: unknown flag: --bogus", hint}},
		{Name: "bad value", Args: []string{"--chunk-tokens", "abc", doc}, Want: []string{`--chunk-tokens "abc": want a whole number`, hint}},
		{Name: "zero chunk size", Args: []string{"--chunk-tokens", "0", doc}, Want: []string{"--chunk-tokens 0: must be between 16 and 65536", hint}},
		{Name: "negative concurrency", Args: []string{"--concurrency", "-1", doc}, Want: []string{"--concurrency -1: must be between 1 and 256", hint}},
		{Name: "huge concurrency", Args: []string{"--concurrency", "100000", doc}, Want: []string{"--concurrency 100000: must be between 1 and 256"}},
		{Name: "overlap past the chunk", Args: []string{"--chunk-tokens", "64", "--chunk-overlap", "64", doc}, Want: []string{"--chunk-overlap 64: must be less than --chunk-tokens (64)"}},
		{Name: "negative timeout", Args: []string{"--llm-timeout", "-1s", doc}, Want: []string{"--llm-timeout -1s: must be between 0s and 24h"}},
		{Name: "unknown embedder", Args: []string{"--embedder", "word2vec:300", doc}, Want: []string{`unknown provider "word2vec"`}, NoHint: true},
		{Name: "range from the environment", Args: []string{doc}, Env: map[string]string{"DOCGRAPH_CHUNK_TOKENS": "1"},
			Want: []string{"--chunk-tokens 1 (from DOCGRAPH_CHUNK_TOKENS): must be between 16 and 65536"}, NoHint: true},
		{Name: "unknown config key", Args: []string{doc}, Config: "chunk-tokns: 60\n",
			Want: []string{`config docgraph.yaml: unknown key "chunk-tokns" (did you mean "chunk-tokens"?)`}, NoHint: true},
		{Name: "config value out of range", Args: []string{doc}, Config: "concurrency: 0\n",
			Want: []string{"--concurrency 0 (from docgraph.yaml): must be between 1 and 256"}, NoHint: true},
		{Name: "status: unknown flag", Args: []string{"status", "--bogus"}, Want: []string{"ingest status: unknown flag: --bogus", "Run 'ingest status --help' for usage."}},
		{Name: "status: argument", Args: []string{"status", "x"}, Want: []string{"ingest status: status takes no arguments", "Run 'ingest status --help' for usage."}},
		{Name: "status: no store", Args: []string{"status", "--store", "sqlite://" + missing},
			Want: []string{"ingest status: no store at " + missing, "ingest --store sqlite://" + missing + " PATH"}, NoHint: true},
		{Name: "delete: no argument", Args: []string{"delete"}, Want: []string{"ingest delete: no PATH or DOC_ID given", "Run 'ingest delete --help' for usage."}},
		{Name: "delete: unknown flag", Args: []string{"delete", "--bogus", "x"}, Want: []string{"ingest delete: unknown flag: --bogus"}},
		{Name: "delete: no store", Args: []string{"delete", "--store", "sqlite://" + missing, "x"}, Want: []string{"ingest delete: no store at " + missing}, NoHint: true},
	}
	clitest.CheckUserErrors(t, dir, tests, []string{filepath.Join(dir, "no"), filepath.Join(dir, ".docgraph")},
		func(t *testing.T, args ...string) (string, string, int) {
			out, errs, err := runCmd(t, args...)
			return out, errs, exitCode(err)
		})
}

// TestEveryFlagIsAConfigKey: docgraph.yaml accepts every flag of ingest
// and its subcommands.
func TestEveryFlagIsAConfigKey(t *testing.T) {
	clitest.CheckConfigKeys(t, newRootCmd(streams{}))
}

// TestEmbedderAdviceWorksWhenPasted: the embedder-mismatch error names an
// --embedder value the flag accepts, and running with it works.
func TestEmbedderAdviceWorksWhenPasted(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	doc := filepath.Join(dir, "a.md")
	if err := os.WriteFile(doc, []byte("Grace Hopper wrote the A-0 System."), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite://" + filepath.Join(dir, "g.db")
	if _, errs, err := runCmd(t, "--store", db, "--embedder", "hash:64", doc); err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	// Without --embedder, ingest keeps to what the store holds and says so.
	_, errs, err := runCmd(t, "--store", db, doc)
	if err != nil || !strings.Contains(errs, "using --embedder hash:64") {
		t.Fatalf("ingest without --embedder into a hash:64 store: %v\n%s", err, errs)
	}
	// Another --embedder, given, is refused with advice that works when pasted.
	_, errs, err = runCmd(t, "--store", db, "--embedder", "hash:32", doc)
	advice := regexp.MustCompile(`run with --embedder (\S+),`).FindStringSubmatch(errs)
	if err == nil || advice == nil {
		t.Fatalf("want a mismatch error with advice, got %v:\n%s", err, errs)
	}
	if advice[1] != "hash:64" {
		t.Errorf("advice %q, want hash:64", advice[1])
	}
	if _, errs, err := runCmd(t, "--store", db, "--embedder", advice[1], doc); err != nil {
		t.Fatalf("the advised --embedder %s fails: %v\n%s", advice[1], err, errs)
	}
	// What the store records is accepted as written, too.
	if _, errs, err := runCmd(t, "--store", db, "--embedder", "hash-v2:64", doc); err != nil {
		t.Fatalf("--embedder hash-v2:64: %v\n%s", err, errs)
	}

	// A store made with the earlier offline embedder keeps working: ingest
	// adopts it, and a mismatch advises its own name.
	old := "sqlite://" + filepath.Join(dir, "old.db")
	if _, errs, err := runCmd(t, "--store", old, "--embedder", "hash-v1:64", doc); err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	if _, errs, err := runCmd(t, "--store", old, doc); err != nil || !strings.Contains(errs, "using --embedder hash-v1:64") {
		t.Fatalf("ingest into a hash-v1 store: %v\n%s", err, errs)
	}
	_, errs, _ = runCmd(t, "--store", old, "--embedder", "hash:64", doc)
	if !strings.Contains(errs, "run with --embedder hash-v1:64,") {
		t.Errorf("advice for a hash-v1 store:\n%s", errs)
	}
}

// TestIngestExitStatus runs the real command: a mistake exits 1 with the
// message and the usage hint, a run where some files failed exits 2.
func TestIngestExitStatus(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(docs, "a.md"), []byte("Alan Turing worked at Bletchley Park."), 0o644)
	os.WriteFile(filepath.Join(docs, "bad.pdf"), []byte("%PDF-1.4 not really"), 0o644)
	db := "sqlite://" + filepath.Join(dir, "g.db")
	tests := []struct {
		args []string
		code int
		want string
	}{
		{args: nil, code: 1, want: "ingest: no PATH given: name the files and folders to ingest (or a --kg-triples FILE to import)\nRun 'ingest --help' for usage.\n"},
		{args: []string{"--bogus"}, code: 1, want: "ingest: unknown flag: --bogus\nRun 'ingest --help' for usage.\n"},
		{args: []string{"status", "--bogus"}, code: 1, want: "ingest status: unknown flag: --bogus\nRun 'ingest status --help' for usage.\n"},
		{args: []string{"delete"}, code: 1, want: "ingest delete: no PATH or DOC_ID given: name the files, folders or document ids to delete\nRun 'ingest delete --help' for usage.\n"},
		{args: []string{"--store", db, docs}, code: 2, want: "failed bad.pdf"},
	}
	for _, tt := range tests {
		cmd := clitest.Command(t, "TestIngestChild", tt.args...)
		cmd.Dir = dir
		r := clitest.Run(t, cmd)
		if r.Code != tt.code {
			t.Errorf("ingest %v: exit %d, want %d\n%s", tt.args, r.Code, tt.code, r.Stderr)
		}
		if tt.code == 1 && r.Stderr != tt.want {
			t.Errorf("ingest %v: stderr %q, want %q", tt.args, r.Stderr, tt.want)
		}
		if tt.code == 2 && !strings.Contains(r.Stdout, "1 added") {
			t.Errorf("ingest %v: the good file was not ingested:\n%s", tt.args, r.Stdout)
		}
	}
}

// TestIngestOddPaths: an unreadable folder (as a user without permission),
// a named pipe in a folder and one named on the command line fail on
// their own; the run ingests the rest, names them in the summary, counts
// files that are no documents, and exits 2.
func TestIngestOddPaths(t *testing.T) {
	cmd := clitest.Command(t, "TestIngestChild")
	base := clitest.AsNobody(t, cmd)
	docs := filepath.Join(base, "docs")
	for _, d := range []string{docs, filepath.Join(docs, "locked"), filepath.Join(docs, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(docs, "a.md"), "# A\n\nAda Lovelace met Charles Babbage in London.")
	write(filepath.Join(docs, "sub", "b.txt"), "Alan Turing worked at Bletchley Park.")
	write(filepath.Join(docs, "locked", "secret.md"), "Nobody should read this.")
	write(filepath.Join(docs, "README"), "no extension")
	if err := os.Chmod(filepath.Join(docs, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(docs, "pipe.txt")
	named := filepath.Join(base, "named.md")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no named pipes here:", err)
	}
	if err := mkfifo(named); err != nil {
		t.Fatal(err)
	}
	db := "sqlite://" + filepath.Join(base, "store", "g.db")
	if err := os.MkdirAll(filepath.Join(base, "store"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(base, "store"), 0o777)
	clitest.SetArgs(t, cmd, "--store", db, docs, named)
	cmd.Dir = base
	r := clitest.Run(t, cmd)
	if r.Code != 2 {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{
		"documents: 2 added",
		"3 failed",
		"failed: " + filepath.Join(docs, "locked") + ": cannot read folder: permission denied",
		"failed: " + fifo + ": not a regular file (a named pipe)",
		"not a regular file (a named pipe)",
		"not ingested, as of no supported type: 1 no file extension (--json lists them)",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, r.Stdout)
		}
	}
}

// TestSummaryJSONKeys: --json uses snake_case throughout and has every key
// whether or not the run had failures, warnings or unsupported files.
func TestSummaryJSONKeys(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("Grace Hopper wrote the A-0 System."), 0o644)
	out, errs, err := runCmd(t, "--store", "sqlite://"+filepath.Join(t.TempDir(), "g.db"), "--json", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	var sum map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"added", "failed", "skipped", "unsupported", "warnings", "unusable_answers", "totals", "llm", "failures", "warned", "unsupported_files"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("key %q missing:\n%s", k, out)
		}
	}
	for _, k := range []string{"failures", "warned", "unsupported_files"} {
		if string(sum[k]) != "[]" {
			t.Errorf("%s = %s, want []", k, sum[k])
		}
	}
	var totals map[string]json.RawMessage
	json.Unmarshal(sum["totals"], &totals)
	for _, k := range []string{"documents", "by_status", "chunks", "entities", "relations", "mentions", "embedder"} {
		if _, ok := totals[k]; !ok {
			t.Errorf("totals key %q missing: %s", k, sum["totals"])
		}
	}
	if regexp.MustCompile(`"[A-Z]\w*":`).MatchString(out) {
		t.Errorf("a key is not snake_case:\n%s", out)
	}
	var check pipeline.Summary
	if err := json.Unmarshal([]byte(out), &check); err != nil || check.Added != 1 {
		t.Errorf("summary does not read back: %v %+v", err, check)
	}
}

// TestStatusOfReadOnlyStore: ingest status reads a store its user cannot
// write, and creates nothing beside it.
func TestStatusOfReadOnlyStore(t *testing.T) {
	cmd := clitest.Command(t, "TestIngestChild")
	base := clitest.AsNobody(t, cmd)
	docs, dir := filepath.Join(base, "docs"), filepath.Join(base, "store")
	corpus(t, docs, 3, 11)
	db := "sqlite://" + filepath.Join(dir, "g.db")
	if _, errs, err := runCmd(t, append([]string{"--store", db}, docs)...); err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	if os.Geteuid() != 0 { // as nobody, a root-owned 0755 folder is read-only already
		os.Chmod(filepath.Join(dir, "g.db"), 0o444)
		os.Chmod(dir, 0o555)
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
	}
	before, _ := os.ReadDir(dir)
	clitest.SetArgs(t, cmd, "status", "--store", db)
	cmd.Dir = base
	r := clitest.Run(t, cmd)
	if r.Code != 0 || !strings.Contains(r.Stdout, "documents: 3 (3 done") {
		t.Fatalf("status of a read-only store: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("status created files beside the store: %d entries before, %d after", len(before), len(after))
	}
}
