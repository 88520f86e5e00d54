package cli

import "github.com/docgraph/docgraph/internal/termtext"

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
