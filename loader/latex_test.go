package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/loader"
)

// TestLaTeXInput reads a thesis split over files the way LaTeX does, and
// leaves out, with a warning each, what it must not read.
func TestLaTeXInput(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "thesis")
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.tex", `\documentclass{report}
\input{macros}
\newcommand{\tool}{docgraph}
\newcommand\org{Harbour Institute}
\newcommand{\twice}[1]{#1 #1}
\title{A Study of \tool}
\begin{document}
\maketitle
We thank the \org{} for \tool.
\include{chapters/intro}
\input chapters/plain.tex
\input{chapters/loop}
\input{../secret}
\input{/etc/passwd}
\input{missing}
\input{escape}
\input{d1}
\end{document}
`)
	write("macros.tex", `\newcommand{\boat}{sloop}
\def\crew{three sailors}
`)
	write("chapters/intro.tex", `\chapter{Tides at \org}
A \boat{} with \crew. Files are found from the main file's folder: \input{chapters/nested}`)
	write("chapters/nested.tex", `nested text here.`)
	write("chapters/plain.tex", `Plain TeX style input.`)
	write("chapters/loop.tex", `Loop start. \input{chapters/loop} \input{main}`)
	for i := 1; i <= 12; i++ {
		write("d"+strconv.Itoa(i)+".tex", "depth"+strconv.Itoa(i)+" \\input{d"+strconv.Itoa(i+1)+"}")
	}
	if err := os.WriteFile(filepath.Join(root, "secret.tex"), []byte("SECRET OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "secret.tex"), filepath.Join(dir, "escape.tex")); err != nil {
		t.Fatal(err)
	}
	doc, err := loader.New().Load(context.Background(), filepath.Join(dir, "main.tex"))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "A Study of docgraph" {
		t.Errorf("title = %q", doc.Title)
	}
	for _, want := range []string{
		"We thank the Harbour Institute for docgraph.",
		"Tides at Harbour Institute",
		"A sloop with three sailors. Files are found from the main file's folder: nested text here.",
		"Plain TeX style input.",
		"Loop start.",
		"depth1 depth2 depth3 depth4 depth5 depth6 depth7 depth8",
	} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, doc.Text)
		}
	}
	for _, not := range []string{"SECRET", "root:", "depth9", "#1", `\tool`, `\org`} {
		if strings.Contains(doc.Text, not) {
			t.Errorf("text has %q:\n%s", not, doc.Text)
		}
	}
	if strings.Count(doc.Text, "Loop start.") != 1 {
		t.Errorf("the cycle was read more than once:\n%s", doc.Text)
	}
	warnings := strings.Join(doc.Warnings, "\n")
	for _, want := range []string{
		`\input{chapters/loop} left out: a cycle: it is being read already`,
		`\input{main} left out: a cycle: it is being read already`,
		`\input{../secret} left out: outside the document's folder`,
		`\input{/etc/passwd} left out: outside the document's folder`,
		`\input{missing} left out: no such file`,
		`\input{escape} left out: path escapes from parent`,
		`\input{d9} left out: nested more than 8 deep`,
	} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	for _, w := range doc.Issues {
		if w.Kind != loader.WarnInputSkipped {
			t.Errorf("warning kind %q for %q", w.Kind, w.Message)
		}
	}
}

// TestLaTeXMacroBomb: a macro defined through two copies of another, 30
// deep, would write 2^30 copies; expansion stops at its budget instead.
func TestLaTeXMacroBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString(`\newcommand{\a}{ha}` + "\n")
	prev := "a"
	for i := 0; i < 30; i++ {
		name := "a" + strings.Repeat("b", i+1)
		b.WriteString(`\newcommand{\` + name + `}{\` + prev + `\` + prev + "}\n")
		prev = name
	}
	b.WriteString(`\newcommand{\self}{x\self}` + "\nStart \\" + prev + " \\self end.\n")
	p := filepath.Join(t.TempDir(), "bomb.tex")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := loader.New().Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Text) > 8<<20 {
		t.Errorf("text is %d bytes", len(doc.Text))
	}
	if !strings.Contains(doc.Text, "Start") || !strings.Contains(doc.Text, "end.") {
		t.Errorf("text around the macros lost: %.200q", doc.Text)
	}
	if !strings.Contains(strings.Join(doc.Warnings, "\n"), "not expanded") {
		t.Errorf("no warning: %q", doc.Warnings)
	}
}
