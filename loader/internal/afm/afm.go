// Package afm holds glyph widths of the PDF standard Helvetica and Times fonts
// and their WinAnsi codes, shared by the PDF fixture writer and the loader's width estimates.
package afm

// Font names a standard font whose widths this package knows.
type Font int

// The standard fonts whose widths this package knows.
const (
	Helvetica Font = iota
	HelveticaBold
	TimesRoman
)

// BaseFont is the PDF /BaseFont name of f.
func (f Font) BaseFont() string {
	switch f {
	case HelveticaBold:
		return "Helvetica-Bold"
	case TimesRoman:
		return "Times-Roman"
	}
	return "Helvetica"
}

func (f Font) table() map[rune]uint16 {
	switch f {
	case HelveticaBold:
		return helveticaBold
	case TimesRoman:
		return timesRoman
	}
	return helvetica
}

// Width is r's advance in 1/1000 em, and whether the font has r.
func (f Font) Width(r rune) (int, bool) {
	w, ok := f.table()[r]
	return int(w), ok
}

// WinAnsi is r's single-byte code in WinAnsiEncoding, for the runes the tables cover.
func WinAnsi(r rune) (byte, bool) {
	if r >= 0x20 && r < 0x7F {
		return byte(r), true
	}
	c, ok := winAnsi[r]
	return c, ok
}
