package loader

import (
	"testing"

	"github.com/ledongthuc/pdf"

	"github.com/docgraph/docgraph/loader/internal/afm"
	"github.com/docgraph/docgraph/loader/internal/glyphs"
)

// helvetica is a WinAnsi Helvetica as loadFont would make it.
func helvetica() *pdfFont {
	f := &pdfFont{name: "Helvetica", size: 1}
	for c := 32; c < 127; c++ {
		f.text[c], f.mapped[c] = string(glyphs.WinAnsiEncoding[c]), true
		if w, ok := afm.Helvetica.Width(rune(c)); ok {
			f.width[c], f.hasW[c] = float64(w)/1000, true
		}
	}
	return f
}

// runContent interprets content with /F1 as Helvetica and lays it out.
func runContent(content string) (string, pageStats) {
	in := newInterp(newPDFDoc())
	sc := newScope(in.doc, pdf.Value{})
	sc.init = true
	sc.fonts["F1"] = helvetica()
	in.run([]byte(content), sc, gstate{ctm: identity, th: 1})
	in.closeSpans()
	return layoutPage(in.glyphs), in.st
}

func TestInterpret(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"TJ displacement makes the word space",
			"BT /F1 10 Tf 72 700 Td [(Hello) -300 (world)] TJ ET", "Hello world"},
		{"kerning inside a word",
			"BT /F1 10 Tf 72 700 Td [(W) 80 (orld)] TJ ET", "World"},
		{"character spacing does not split words",
			"BT /F1 10 Tf 0.5 Tc 72 700 Td (spaced) Tj ET", "spaced"},
		{"word spacing widens real spaces only",
			"BT /F1 10 Tf 5 Tw 72 700 Td (two words) Tj ET", "two words"},
		{"horizontal scaling and text matrix",
			"BT /F1 1 Tf 50 Tz 10 0 0 10 72 700 Tm (half) Tj ET", "half"},
		{"q/Q restore the font size",
			"BT /F1 10 Tf q /F1 30 Tf Q 72 700 Td (ten) Tj ET", "ten"},
		{"T* and TL move down a line",
			"BT /F1 10 Tf 12 TL 72 700 Td (one) Tj T* (two) Tj ET", "one\ntwo"},
		{"' and \" show on the next line",
			"BT /F1 10 Tf 12 TL 72 700 Td (one) Tj (two) ' 0 0 (three) \" ET", "one\ntwo\nthree"},
		{"rotated text matrix",
			"BT /F1 10 Tf 0 1 -1 0 300 300 Tm (up) Tj ET", "up"},
		{"an ActualText span without its EMC still counts",
			"BT /F1 10 Tf 72 700 Td /Span <</ActualText (TeX)>> BDC (T) Tj 5 -2 Td (E) Tj ET", "TeX"},
		{"empty ActualText hides what it spans",
			"BT /F1 10 Tf 12 TL 72 700 Td (co) Tj /Span <</ActualText ()>> BDC (-) Tj EMC T* (op) Tj ET", "co\nop"},
		{"inline image data is skipped",
			"BI /W 2 /H 2 /BPC 8 ID \x00(\xff)EI\x01 EI BT /F1 10 Tf 72 700 Td (after) Tj ET", "after"},
		{"operands of the wrong kind are ignored",
			"BT /F1 10 Tf 72 700 Td /X Tc (safe) Tj /Y Tj [/Z] TJ ET", "safe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := runContent(tc.content); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInterpretCountsUnmapped(t *testing.T) {
	_, st := runContent("BT /F1 10 Tf 72 700 Td (ok\x01\x02) Tj /F9 10 Tf (lost) Tj ET")
	if st.glyphs != 8 || st.unmapped != 6 || st.byFont["Helvetica"] != 2 || st.byFont["missing font /F9"] != 4 {
		t.Errorf("stats = %+v", st)
	}
}
