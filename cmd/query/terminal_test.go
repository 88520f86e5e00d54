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
	"github.com/docgraph/docgraph/llm/llmtest"
)

// rawControls are what must never reach a terminal from a model's answer
// or stored text: ESC (a CSI or OSC sequence), BEL (ends an OSC title),
// the C1 CSI, a right-to-left override.
var rawControls = []string{"\x1b", "\a", "\u009b", "\u202e"}

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

// TestQueryEscapesAnswersOnATerminal: a streamed answer that tries to
// clear the screen or retitle the window reaches a terminal escaped, in
// pieces of 3 bytes so that its escape sequences arrive split, with its
// lines, tabs and every character of other scripts intact. --raw, or an
// output that is no terminal, gets it as the model sent it.
func TestQueryEscapesAnswersOnATerminal(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestCorpus(t, db)
	const answer = "Alan Turing\x1b[2J broke Enigma\x1b]0;pwned\x07 at Bletchley Park [1].\n\tNaïve 日本語 \u202eevil\u009b31m done."
	srv := answerServer(t, llmtest.Reply{Content: answer})
	srv.SetChunkSize(3)
	args := []string{"--store", db, "--config", "", "--llm", "openai:test-model", "--llm-cache", "off", "Who broke Enigma?"}

	r := clitest.OnTerminal(t, clitest.Command(t, "TestQueryChild", args...))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if bad := terminalTrouble(r.Stdout, []string{`Alan Turing\x1b[2J broke Enigma\x1b]0;pwned\x07 at Bletchley Park [1].` + "\n\tNaïve 日本語 " +
		`\u202eevil\x9b31m done.`, "\nSources:\n[1] "}); bad != "" {
		t.Errorf("answer on a terminal: %s; it got\n%q", bad, r.Stdout)
	}

	// The same decision in process, where no terminal can be opened.
	var out, errb bytes.Buffer
	if err := execute(context.Background(), streams{Out: &out, Err: &errb, OutTTY: true}, args); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if bad := terminalTrouble(out.String(), []string{`Alan Turing\x1b[2J broke`, "\n\tNaïve 日本語 "}); bad != "" {
		t.Errorf("answer to a terminal stream: %s; it got\n%q", bad, out.String())
	}

	raw := clitest.OnTerminal(t, clitest.Command(t, "TestQueryChild", append([]string{"--raw"}, args...)...))
	piped := clitest.Run(t, clitest.Command(t, "TestQueryChild", args...))
	for name, r := range map[string]clitest.Result{"--raw on a terminal": raw, "a pipe": piped} {
		if r.Code != 0 || !strings.Contains(r.Stdout, answer) {
			t.Errorf("%s: exit %d, want the answer as sent: %q\n%q", name, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// TestQueryEscapesStoredTextOnATerminal: passages and the context built
// from stored text reach a terminal escaped too.
func TestQueryEscapesStoredTextOnATerminal(t *testing.T) {
	docs := t.TempDir()
	text := "# Zorblax\n\nZorblax is the second moon\x1b[2J of Quintessa.\x1b]0;pwned\x07 Mirela Vantongeren found Zorblax\u202e in 2031.\n"
	if err := os.WriteFile(filepath.Join(docs, "zorblax.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	db := "sqlite://" + filepath.Join(t.TempDir(), "g.db")
	ingestDir(t, db, docs)
	for _, extra := range [][]string{nil, {"--context-only"}} {
		args := append([]string{"--store", db, "--config", "", "Which moon did Mirela Vantongeren find?"}, extra...)
		r := clitest.OnTerminal(t, clitest.Command(t, "TestQueryChild", args...))
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, r.Code, r.Stderr)
		}
		if bad := terminalTrouble(r.Stdout, []string{`second moon\x1b[2J of Quintessa.\x1b]0;pwned\x07`}); bad != "" {
			t.Errorf("%v on a terminal: %s; it got\n%q", extra, bad, r.Stdout)
		}
	}
}
