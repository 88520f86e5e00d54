package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"docgraph/cmd/internal/clitest"
	"docgraph/pipeline"
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
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		config string // docgraph.yaml
		want   []string
		noHint bool
	}{
		{name: "no arguments", want: []string{"ingest: no PATH given", hint}},
		{name: "unknown flag", args: []string{"--bogus", doc}, want: []string{"ingest: unknown flag: --bogus", hint}},
		{name: "bad value", args: []string{"--chunk-tokens", "abc", doc}, want: []string{`--chunk-tokens "abc": want a whole number`, hint}},
		{name: "zero chunk size", args: []string{"--chunk-tokens", "0", doc}, want: []string{"--chunk-tokens 0: must be between 16 and 65536", hint}},
		{name: "negative concurrency", args: []string{"--concurrency", "-1", doc}, want: []string{"--concurrency -1: must be between 1 and 256", hint}},
		{name: "huge concurrency", args: []string{"--concurrency", "100000", doc}, want: []string{"--concurrency 100000: must be between 1 and 256"}},
		{name: "overlap past the chunk", args: []string{"--chunk-tokens", "64", "--chunk-overlap", "64", doc}, want: []string{"--chunk-overlap 64: must be less than --chunk-tokens (64)"}},
		{name: "negative timeout", args: []string{"--llm-timeout", "-1s", doc}, want: []string{"--llm-timeout -1s: must be between 0s and 24h"}},
		{name: "unknown embedder", args: []string{"--embedder", "word2vec:300", doc}, want: []string{`unknown provider "word2vec"`}, noHint: true},
		{name: "range from the environment", args: []string{doc}, env: map[string]string{"DOCGRAPH_CHUNK_TOKENS": "1"},
			want: []string{"--chunk-tokens 1 (from DOCGRAPH_CHUNK_TOKENS): must be between 16 and 65536"}, noHint: true},
		{name: "unknown config key", args: []string{doc}, config: "chunk-tokns: 60\n",
			want: []string{`config docgraph.yaml: unknown key "chunk-tokns" (did you mean "chunk-tokens"?)`}, noHint: true},
		{name: "config value out of range", args: []string{doc}, config: "concurrency: 0\n",
			want: []string{"--concurrency 0 (from docgraph.yaml): must be between 1 and 256"}, noHint: true},
		{name: "status: unknown flag", args: []string{"status", "--bogus"}, want: []string{"ingest status: unknown flag: --bogus", "Run 'ingest status --help' for usage."}},
		{name: "status: argument", args: []string{"status", "x"}, want: []string{"ingest status: status takes no arguments", "Run 'ingest status --help' for usage."}},
		{name: "status: no store", args: []string{"status", "--store", "sqlite://" + missing},
			want: []string{"ingest status: no store at " + missing, "ingest --store sqlite://" + missing + " PATH"}, noHint: true},
		{name: "delete: no argument", args: []string{"delete"}, want: []string{"ingest delete: no PATH or DOC_ID given", "Run 'ingest delete --help' for usage."}},
		{name: "delete: unknown flag", args: []string{"delete", "--bogus", "x"}, want: []string{"ingest delete: unknown flag: --bogus"}},
		{name: "delete: no store", args: []string{"delete", "--store", "sqlite://" + missing, "x"}, want: []string{"ingest delete: no store at " + missing}, noHint: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if tt.config != "" {
				if err := os.WriteFile(filepath.Join(dir, "docgraph.yaml"), []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Remove(filepath.Join(dir, "docgraph.yaml")) })
			}
			out, errs, err := runCmd(t, tt.args...)
			if err == nil || exitCode(err) != 1 {
				t.Fatalf("want exit status 1, got %v (%d)\nstderr:\n%s", err, exitCode(err), errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if tt.noHint == strings.Contains(errs, "for usage.") {
				t.Errorf("usage hint expected %v:\n%s", !tt.noHint, errs)
			}
			if out != "" {
				t.Errorf("a failed command line printed to stdout:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "no")); err == nil {
				t.Fatal("a command that failed created the missing store's folder")
			}
			if _, err := os.Stat(filepath.Join(dir, ".docgraph")); err == nil {
				t.Fatal("a command that failed created the default store")
			}
		})
	}
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
	_, errs, err := runCmd(t, "--store", db, doc)
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
	if _, errs, err := runCmd(t, "--store", db, "--embedder", "hash-v1:64", doc); err != nil {
		t.Fatalf("--embedder hash-v1:64: %v\n%s", err, errs)
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
		"not ingested, as no txt, md or pdf documents: 1 no file extension (--json lists them)",
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
	for _, k := range []string{"added", "failed", "skipped", "unsupported", "warnings", "totals", "llm", "failures", "warned", "unsupported_files"} {
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
