package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/internal/clitest"
)

// hostileText is a document that tries to drive the terminal it is shown
// on: clear the screen, set the window title, a C1 CSI, a right-to-left
// override that hides a file name's extension, a lone invalid byte.
const hostileText = "# Report\n\nFirst line\tcolumn\nclear\x1b[2Jscreen, title \x1b]0;pwned\x07 set, csi \u009b31m, " +
	"bidi \u202egnp.exe, bad \xff byte, 日本語 kept.\n"

// rawControls are what must never reach a terminal from stored text.
var rawControls = []string{"\x1b", "\a", "\u009b", "\u202e", "\xff"}

// TestShowEscapesStoredTextOnATerminal: `ingest show` on a terminal
// prints a document's text with its control characters escaped as file
// names are, keeping its lines and tabs; --raw, or a standard output that
// is no terminal (a pipe, a file), gets the text as stored.
func TestShowEscapesStoredTextOnATerminal(t *testing.T) {
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(docs, "hostile.md")
	if err := os.WriteFile(note, []byte(hostileText), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite://" + ingestClean(t, docs)

	for _, args := range [][]string{{note}, {"--text", note}} {
		args = append([]string{"show", "--store", db, "--config", ""}, args...)
		r := clitest.OnTerminal(t, clitest.Command(t, "TestIngestChild", args...))
		if r.Code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
		if bad := terminalTrouble(r.Stdout, []string{`clear\x1b[2Jscreen`, `title \x1b]0;pwned\x07 set`, `csi \x9b31m`,
			`bidi \u202egnp.exe`, "First line\tcolumn\n", "日本語 kept."}); bad != "" {
			t.Errorf("%v on a terminal: %s; it got\n%q", args, bad, r.Stdout)
		}
	}

	// The same decision in process, where no terminal can be opened.
	var out, errb bytes.Buffer
	if err := execute(context.Background(), streams{Out: &out, Err: &errb, OutTTY: true}, []string{"show", "--store", db, "--config", "", "--text", note}); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if bad := terminalTrouble(out.String(), []string{`clear\x1b[2Jscreen`, "First line\tcolumn\n"}); bad != "" {
		t.Errorf("show to a terminal stream: %s; it got\n%q", bad, out.String())
	}

	// As stored: asked for, or for a program.
	raw := clitest.OnTerminal(t, clitest.Command(t, "TestIngestChild", "show", "--store", db, "--config", "", "--text", "--raw", note))
	piped := clitest.Run(t, clitest.Command(t, "TestIngestChild", "show", "--store", db, "--config", "", "--text", note))
	for name, r := range map[string]clitest.Result{"--raw on a terminal": raw, "a pipe": piped} {
		if r.Code != 0 || !strings.Contains(r.Stdout, "clear\x1b[2Jscreen, title \x1b]0;pwned\x07 set") {
			t.Errorf("%s: exit %d, want the text as stored: %q\n%q", name, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// terminalTrouble says what is wrong with out, the output a terminal got:
// the controls it got raw, the texts it should have got and did not.
func terminalTrouble(out string, want []string) string {
	var bad []string
	for _, c := range rawControls {
		if strings.Contains(out, c) {
			bad = append(bad, fmt.Sprintf("%q raw", c))
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			bad = append(bad, fmt.Sprintf("no %q", w))
		}
	}
	return strings.Join(bad, ", ")
}
