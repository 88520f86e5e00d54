// Package termtext makes text from files, requests and models safe to
// print on one line of a terminal or a log (Escape, OneLine), or as text
// of many lines, whole or streamed (EscapeText, TextWriter). It sits below
// every other package of the module, so that the commands and the query
// server (which logs what clients send) escape alike. It also measures
// text in terminal columns and asks a terminal its width, for output drawn
// in place (a progress bar) that must never wrap.
package termtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes s safe to print as part of one line on a terminal or in a
// log: control characters (a newline in a file name would forge a log line,
// an ESC would drive the terminal), bidirectional overrides and invalid
// UTF-8 are written as Go escapes (\n, \x1b, \u202e, \xff). Printable text
// in any script is kept as it is.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unsafeRune(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == '\n' || r == '\r' || r == '\t' || unsafeRune(r) {
			return true
		}
		i += n
	}
	return false
}

// unsafeRune reports control characters (C0, DEL, C1) and the formatting
// characters that reorder or hide text (bidi overrides and isolates,
// zero-width marks, BOM).
func unsafeRune(r rune) bool {
	if r < 0x20 || (r >= 0x7f && r < 0xa0) {
		return true
	}
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c, r == 0xfeff:
		return true
	}
	return false
}

// OneLine turns s into one line of at most limit bytes (no limit when
// limit <= 0): runs of whitespace, newlines included, become one space,
// what Escape escapes is escaped, and a longer text loses its middle to
// "…", keeping its start and its end (an error's path and its cause). A
// warning that quotes 2 KB of a PDF content stream prints as one short line.
func OneLine(s string, limit int) string {
	s = Escape(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "))
	if limit <= 0 || len(s) <= limit {
		return s
	}
	room := max(limit-len("…"), 0)
	head := room * 2 / 5
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (room - head)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "…" + s[tail:]
}

// Snippet is text on one line (runs of whitespace become one space), cut
// to at most n bytes at a rune boundary and ending in "…" when cut.
func Snippet(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && text[cut]&0xC0 == 0x80 {
		cut--
	}
	return text[:cut] + "…"
}

// Columns is the width of s on a terminal: East Asian wide and fullwidth
// characters take two columns, combining marks none.
func Columns(s string) int {
	n := 0
	for _, r := range s {
		n += runeColumns(r)
	}
	return n
}

// Fit cuts s to at most cols terminal columns, ending in "…" when cut. It
// keeps the end of the text when keepEnd is set (a file name's last part
// says more than its first).
func Fit(s string, cols int, keepEnd bool) string {
	if cols <= 0 {
		return ""
	}
	if Columns(s) <= cols {
		return s
	}
	runes := []rune(s)
	w := 1 // the ellipsis
	if keepEnd {
		i := len(runes)
		for i > 0 && w+runeColumns(runes[i-1]) <= cols {
			i--
			w += runeColumns(runes[i])
		}
		return "…" + string(runes[i:])
	}
	i := 0
	for i < len(runes) && w+runeColumns(runes[i]) <= cols {
		w += runeColumns(runes[i])
		i++
	}
	return string(runes[:i]) + "…"
}

func runeColumns(r rune) int {
	switch {
	case r == 0 || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || r == 0x200b:
		return 0
	case r >= 0x1100 && r <= 0x115f, r == 0x2329, r == 0x232a,
		r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff,
		r >= 0xa000 && r <= 0xa4cf, r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}
