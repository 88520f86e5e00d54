package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docgraph/docgraph/cmd/internal/cli"
	"github.com/docgraph/docgraph/pipeline"
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

// TestProgressLines feeds the progress display directly: a 2 KB warning
// full of newlines is one short line everywhere, and the bar on a
// terminal never outgrows the terminal's width.
func TestProgressLines(t *testing.T) {
	raw := strings.Repeat("BT /F1 12 Tf 72 712 Td (stream) Tj ET\n", 60) // ~2 KB of content stream
	r := pipeline.FileResult{Path: "/docs/manual.pdf", Outcome: pipeline.Added, Chunks: 3,
		Warnings: []string{"page 2 skipped: " + raw}, Duration: time.Millisecond}

	var log bytes.Buffer
	p := newProgress(streams{Err: &log}, false)
	p.Start(1)
	p.File(r)
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "warning: /docs/manual.pdf: page 2 skipped: BT /F1") || len(lines[1]) > maxWarningBytes+len("warning: ") {
		t.Errorf("want the file line and one bounded warning line, got %d lines:\n%s", len(lines), log.String())
	}

	for _, width := range []int{30, 50, 120} {
		var term bytes.Buffer
		p := newProgress(streams{Err: &term, Width: func() int { return width }}, true)
		p.Start(300)
		for i := range 300 {
			name := "/docs/" + strings.Repeat("日本語のファイル名", 1+i%4) + ".md"
			res := pipeline.FileResult{Path: name, Outcome: pipeline.Added}
			if i%50 == 0 {
				res.Warnings = []string{raw}
			}
			p.File(res)
		}
		p.finish()
		bars, warnings := 0, 0
		for _, seg := range strings.FieldsFunc(term.String(), func(r rune) bool { return r == '\r' || r == '\n' }) {
			seg = strings.TrimPrefix(seg, "\x1b[K")
			switch {
			case strings.HasPrefix(seg, "["):
				bars++
				if cli.Columns(seg) >= width {
					t.Fatalf("width %d: a bar of %d columns: %q", width, cli.Columns(seg), seg)
				}
			case strings.HasPrefix(seg, "warning: "):
				warnings++
				if len(seg) > maxWarningBytes+len("warning: ") {
					t.Fatalf("a warning of %d bytes: %q", len(seg), seg)
				}
			default:
				t.Fatalf("unexpected output %q", seg)
			}
		}
		if bars != 300 || warnings != 6 {
			t.Errorf("width %d: %d bars, %d warnings; want 300 and 6", width, bars, warnings)
		}
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
