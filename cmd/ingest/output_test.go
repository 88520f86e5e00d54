package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogOutputOffTerminal: off a terminal every line ends in a newline
// (no bare \r), warnings are shown and counted, and a file name with a
// newline cannot forge a log line.
func TestLogOutputOffTerminal(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	evil := filepath.Join(docs, "evil\nadded \x1b[31mforged.md")
	if err := os.WriteFile(evil, []byte("Ada Lovelace met Charles Babbage."), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(docs, "latin1.txt"), []byte("Caf\xe9 au lait in M\xfcnchen with Alan Turing."), 0o644)
	out, logs, err := runCmd(t, "--store", "sqlite://"+filepath.Join(dir, "g.db"), docs)
	if err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
	if strings.Contains(logs, "\r") || strings.Contains(out, "\r") {
		t.Errorf("a carriage return off a terminal:\n%q", logs)
	}
	for _, line := range strings.Split(logs+out, "\n") {
		if strings.HasPrefix(line, "added \x1b") || strings.Contains(line, "\x1b") || strings.HasPrefix(line, "added \\x1b") {
			t.Errorf("forged or raw line: %q", line)
		}
	}
	if !strings.Contains(logs, `evil\nadded \x1b[31mforged.md`) {
		t.Errorf("the name should be printed escaped:\n%s", logs)
	}
	if !strings.Contains(logs, "warning: "+filepath.Join(docs, "latin1.txt")+": invalid UTF-8 repaired: 2 bytes replaced") {
		t.Errorf("the warning should be logged:\n%s", logs)
	}
	if !strings.Contains(out, "warnings: 1 in 1 files\nwarning: "+filepath.Join(docs, "latin1.txt")) {
		t.Errorf("the summary should count and show the warning:\n%s", out)
	}
}

// TestStatusJSONSnakeCase: ingest status --json keys are snake_case.
func TestStatusJSONSnakeCase(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("Grace Hopper wrote the A-0 System."), 0o644)
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	if _, errs, err := runCmd(t, "--store", db, dir); err != nil {
		t.Fatalf("%v\n%s", err, errs)
	}
	out, _, err := runCmd(t, "status", "--store", db, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if strings.ToLower(k) != k {
			t.Errorf("key %q is not snake_case", k)
		}
	}
}
