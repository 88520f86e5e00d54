package loader

import (
	"strings"
	"testing"

	"github.com/docgraph/docgraph/loader/internal/afm"
)

// show lays s out one glyph per rune, each advanced by its Helvetica
// width, starting at (x, y).
func show(s string, x, y, size float64) []glyph {
	var out []glyph
	for _, r := range s {
		w, _ := afm.Helvetica.Width(r)
		adv := float64(w) / 1000 * size
		out = append(out, glyph{s: string(r), x: x, y: y, w: adv, size: size})
		x += adv
	}
	return out
}

// width is s's advance in Helvetica at size.
func width(s string, size float64) float64 {
	total := 0.0
	for _, g := range show(s, 0, 0, size) {
		total += g.w
	}
	return total
}

func join(parts ...[]glyph) []glyph {
	var out []glyph
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// spaced sets s with extra space between letters (and that plus a
// TeX word space, 0.33 em, between words), one glyph per run as the
// letter spacing makes them.
func spaced(s string, x, y, size, extra float64) []glyph {
	var out []glyph
	for _, r := range s {
		if r == ' ' {
			x += 0.333 * size
			continue
		}
		g := show(string(r), x, y, size)[0]
		out = append(out, g)
		x += g.w + extra
	}
	return out
}

func upright(gs []glyph) [4][]glyph { return [4][]glyph{gs} }

func TestLayoutPage(t *testing.T) {
	const size = 10
	em := float64(size)
	tests := []struct {
		name   string
		glyphs [4][]glyph
		want   string
	}{
		{"gap between strings is a space",
			upright(join(show("Hello", 72, 700, size), show("world", 72+width("Hello", size)+0.25*em, 700, size))),
			"Hello world"},
		{"kerning is not a space",
			upright(join(show("Wo", 72, 700, size), show("rld", 72+width("Wo", size)-0.08*em, 700, size), show("wide", 72+width("World", size)+0.05*em, 700, size))),
			"Worldwide"},
		{"existing space is not doubled",
			upright(join(show("Hello ", 72, 700, size), show("world", 72+width("Hello ", size)+0.3*em, 700, size))),
			"Hello world"},
		{"fake bold duplicates dropped",
			upright(join(show("Bold", 72, 700, size), show("Bold", 72.2, 700, size), show(" text", 72+width("Bold", size), 700, size))),
			"Bold text"},
		{"double letters kept",
			upright(show("balloon", 72, 700, size)),
			"balloon"},
		{"lines ordered by baseline, not drawing order",
			upright(join(show("second line", 72, 686, size), show("first line", 72, 700, size))),
			"first line\nsecond line"},
		{"words ordered by x, not drawing order",
			upright(join(show("world", 72+width("Hello ", size), 700, size), show("Hello", 72, 700, size))),
			"Hello world"},
		{"superscript stays on its line",
			upright(join(show("E = mc", 72, 700, size), show("2", 72+width("E = mc", size), 704, 7), show("next", 72, 686, size))),
			"E = mc2\nnext"},
		{"stacked small lines beside big text stay apart",
			upright(join(show("Big body text here", 72, 700, 18), show("Syntax versus", 300, 702, 5), show("Semantik", 302, 696.5, 5))),
			"Big body text here Syntax versus\n\nSemantik"},
		{"a footnote mark before its text is apart",
			upright(join(show("10", 72, 703, 6.5), show("Alternatively", 72+width("10", 6.5)+0.5, 700, 8))),
			"10 Alternatively"},
		{"the LaTeX logo stays one word",
			upright(join(show("L", 72, 700, size), show("A", 75.6, 702.2, 7), show("TEX", 80, 700, size))),
			"LATEX"},
		{"wide vertical gap is a paragraph break",
			upright(join(show("one", 72, 700, size), show("two", 72, 688, size), show("three", 72, 676, size), show("four", 72, 664, size), show("five", 72, 640, size))),
			"one\ntwo\nthree\nfour\n\nfive"},
		{"heading size change is a paragraph break",
			upright(join(show("Title", 72, 720, 18), show("body one", 72, 700, size), show("body two", 72, 688, size))),
			"Title\n\nbody one\nbody two"},
		{"ligature glyph keeps the word gap after it",
			upright(join([]glyph{{s: "fi", x: 72, y: 700, w: 5.56, size: size}}, show("tted models", 77.56, 700, size))),
			"fitted models"},
		{"rotated text follows as its own block",
			[4][]glyph{show("body", 72, 700, size), join(show("Draft", 200, -40, 9), show("copy", 200+width("Draft", 9)+0.3*9, -40, 9))},
			"body\n\nDraft copy"},
		{"upside-down text follows upright text",
			[4][]glyph{0: show("body", 72, 700, size), 2: show("upside down", -500, -100, size)},
			"body\n\nupside down"},
		{"dot leaders dropped",
			upright(join(show("Introduction", 72, 700, size), show(". . . . . . . . .", 72+width("Introduction ", size), 700, size), show("5", 300, 700, size))),
			"Introduction 5"},
		{"letter-spaced words rejoined, word gaps kept",
			upright(spaced("Demonstration of spacing", 72, 700, size, 0.2*em)),
			"Demonstration of spacing"},
		{"single letters at word spacing stay apart",
			upright(spaced("a b c d e f", 72, 700, size, 0)),
			"a b c d e f"},
		{"TeX accents over letters composed",
			upright(join(show("L", 72, 700, size), []glyph{{s: "¨", x: 72 + width("L", size) + 0.5, y: 700, w: 3.33, size: size}}, show("uck", 72+width("L", size), 700, size))),
			"Lück"},
		{"a lone accent stays",
			upright(show("a ¨ b", 72, 700, size)),
			"a ¨ b"},
		{"soft hyphen at a line end joins the word",
			upright(join(show("implementa\u00AD", 72, 700, size), show("tion works", 72, 688, size))),
			"implementation works"},
		{"hyphenated word joined",
			upright(join(show("micro-typographic exten-", 72, 700, size), show("sions work", 72, 688, size))),
			"micro-typographic extensions work"},
		{"hyphen before a capital stays",
			upright(join(show("the so-called non-", 72, 700, size), show("Newtonian fluid", 72, 688, size))),
			"the so-called non-\nNewtonian fluid"},
		{"ellipsis kept",
			upright(show("x1, . . . , xn", 72, 700, size)),
			"x1, . . . , xn"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := layoutPage(tc.glyphs); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMarkdownTitle(t *testing.T) {
	for text, want := range map[string]string{
		"# A\n":                       "A",
		"   ## Indented ok\n":         "Indented ok",
		"    # code block\n":          "",
		"#\n## Second\n":              "Second",
		"# Closing # hashes ##\n":     "Closing # hashes",
		"C# is a language\n":          "",
		"two line\nsetext\n---\n":     "two line setext",
		"~~~\n# in fence\n~~~\n# B\n": "B",
		"---\nno: end\n# Heading\n":   "Heading",
		"":                            "",
		// READMEs: a banner in HTML, and sections that name no document.
		"<p align=\"center\">\n  <img src=\"logo.png\">\n</p>\n<h1 align=\"center\"> Yargs </h1>\n\n## Description\n": "Yargs",
		"<h1 align=\"center\">\n\t<br>\n\t<img width=\"320\" src=\"logo.svg\" alt=\"Chalk\">\n</h1>\n## Info\n":       "Chalk",
		"<h3>Platinum sponsors</h3>\n## Table of contents\n## Features\n## Browser support\n":                         "",
		"## Table of contents\n## Installation\n# express\n":                                                          "express",
		"## Meeting notes\n## Second topic\n":                                                                         "Meeting notes",
		"Tom &amp; Jerry\n====\n":                                                                                     "Tom &amp; Jerry",
		"<h1>Tom &amp; Jerry</h1>\n":                                                                                  "Tom & Jerry",
	} {
		if got := markdownTitle(text); got != want {
			t.Errorf("markdownTitle(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestCheckFrame(t *testing.T) {
	body := "\n1 0 obj\n<<>>\nendobj\nstartxref\n9\n%%EOF"
	tests := []struct {
		in, wantPrefix string
		wantErr        bool
	}{
		{"%PDF-1.4" + body, "%PDF-1.4\n", false},
		{"%PDF-2.0" + body, "%PDF-1.7\n", false},
		{"%PDF-1.7 " + body, "%PDF-1.7\n", false},
		{"%PDF-1.4" + body + "\n\x00\x00junk after", "%PDF-1.4\n", false},
		{"%PDF-1.4" + body[:len(body)-3], "", true},
		{"GIF89a" + body, "", true},
	}
	for _, tc := range tests {
		got, err := checkFrame([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("checkFrame(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && (!strings.HasPrefix(string(got), tc.wantPrefix) || !strings.HasSuffix(string(got), "%%EOF") || len(got) != len(strings.SplitAfter(tc.in, "%%EOF")[0])) {
			t.Errorf("checkFrame(%q) = %q", tc.in, got)
		}
	}
}
