package cli

import (
	"io"

	"github.com/docgraph/docgraph/internal/termtext"
)

// Escape makes s safe to print as part of one line on a terminal or in a
// log (see termtext.Escape, which the query server shares).
func Escape(s string) string { return termtext.Escape(s) }

// OneLine turns s into one escaped line of at most limit bytes (see
// termtext.OneLine).
func OneLine(s string, limit int) string { return termtext.OneLine(s, limit) }

// Columns is the width of s on a terminal (see termtext.Columns).
func Columns(s string) int { return termtext.Columns(s) }

// Fit cuts s to at most cols terminal columns (see termtext.Fit).
func Fit(s string, cols int, keepEnd bool) string { return termtext.Fit(s, cols, keepEnd) }

// TerminalText is where text from documents and models goes for people to
// read: w itself unless escape is set, as when w is a terminal and --raw
// was not given; then a writer that escapes that text as file names are
// escaped, keeping its lines and tabs (termtext.TextWriter), so that a
// document or an answer cannot clear the screen, retitle the window or
// reorder what is shown. A program reading a pipe or a file gets the text
// as it is. Call flush when the text is written.
func TerminalText(w io.Writer, escape bool) (out io.Writer, flush func() error) {
	if !escape {
		return w, func() error { return nil }
	}
	tw := termtext.NewTextWriter(w)
	return tw, tw.Flush
}
