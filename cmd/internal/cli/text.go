package cli

import (
	"unicode"

	"github.com/docgraph/docgraph/internal/termtext"
)

// Escape makes s safe to print as part of one line on a terminal or in a
// log (see termtext.Escape, which the query server shares).
func Escape(s string) string { return termtext.Escape(s) }

// OneLine turns s into one escaped line of at most limit bytes (see
// termtext.OneLine).
func OneLine(s string, limit int) string { return termtext.OneLine(s, limit) }

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
