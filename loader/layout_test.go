package loader

import (
	"strings"
	"testing"

	"github.com/ledongthuc/pdf"

	"docgraph/loader/internal/afm"
)

// show lays s out as the pdf library reports it: one Text per glyph, each
// advanced by its Helvetica width, starting at (x, y).
func show(s string, x, y, size float64) []pdf.Text {
	var out []pdf.Text
	for _, r := range s {
		w, _ := afm.Helvetica.Width(r)
		adv := float64(w) / 1000 * size
		out = append(out, pdf.Text{Font: "Helvetica", FontSize: size, X: x, Y: y, W: adv, S: string(r)})
		x += adv
	}
	return out
}

// width is s's advance in Helvetica at size.
func width(s string, size float64) float64 {
	total := 0.0
	for _, t := range show(s, 0, 0, size) {
		total += t.W
	}
	return total
}

func join(parts ...[]pdf.Text) []pdf.Text {
	var out []pdf.Text
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// rotate90 sets text as if drawn with the text matrix [0 1 -1 0 x y]: it
// runs up the page and the library reports no size or width.
func rotate90(ts []pdf.Text, x, y float64) []pdf.Text {
	out := make([]pdf.Text, len(ts))
	for i, t := range ts {
		out[i] = pdf.Text{Font: t.Font, X: x, Y: y + t.X, S: t.S}
	}
	return out
}

// zeroWidth is what the library reports for a font without a width table:
// every glyph of a string at the string's start, W == 0.
func zeroWidth(s string, x, y, size float64) []pdf.Text {
	var out []pdf.Text
	for _, r := range s {
		out = append(out, pdf.Text{Font: "Helvetica", FontSize: size, X: x, Y: y, S: string(r)})
	}
	return out
}

func TestLayoutPage(t *testing.T) {
	const size = 10
	em := float64(size)
	tests := []struct {
		name  string
		texts []pdf.Text
		want  string
		moved []bool // nil: origins unknown
	}{
		{"gap between strings is a space",
			join(show("Hello", 72, 700, size), show("world", 72+width("Hello", size)+0.25*em, 700, size)),
			"Hello world", nil},
		{"kerning is not a space",
			join(show("Wo", 72, 700, size), show("rld", 72+width("Wo", size)-0.08*em, 700, size), show("wide", 72+width("World", size)+0.05*em, 700, size)),
			"Worldwide", nil},
		{"existing space is not doubled",
			join(show("Hello ", 72, 700, size), show("world", 72+width("Hello ", size)+0.3*em, 700, size)),
			"Hello world", nil},
		{"fake bold duplicates dropped",
			join(show("Bold", 72, 700, size), show("Bold", 72.2, 700, size), show(" text", 72+width("Bold", size), 700, size)),
			"Bold text", nil},
		{"double letters kept",
			show("balloon", 72, 700, size),
			"balloon", nil},
		{"lines ordered by baseline, not drawing order",
			join(show("second line", 72, 686, size), show("first line", 72, 700, size)),
			"first line\nsecond line", nil},
		{"words ordered by x, not drawing order",
			join(show("world", 72+width("Hello ", size), 700, size), show("Hello", 72, 700, size)),
			"Hello world", nil},
		{"superscript stays on its line",
			join(show("E = mc", 72, 700, size), show("2", 72+width("E = mc", size), 704, 7), show("next", 72, 686, size)),
			"E = mc2\nnext", nil},
		{"wide vertical gap is a paragraph break",
			join(show("one", 72, 700, size), show("two", 72, 688, size), show("three", 72, 676, size), show("four", 72, 664, size), show("five", 72, 640, size)),
			"one\ntwo\nthree\nfour\n\nfive", nil},
		{"heading size change is a paragraph break",
			join(show("Title", 72, 720, 18), show("body one", 72, 700, size), show("body two", 72, 688, size)),
			"Title\n\nbody one\nbody two", nil},
		{"control and unmapped glyphs dropped",
			join(show("ok", 72, 700, size), []pdf.Text{{FontSize: size, X: 90, Y: 700, S: "\n"}, {FontSize: size, X: 95, Y: 700, S: "\uFFFD"}}),
			"ok", nil},
		{"ligatures spelled out",
			[]pdf.Text{{FontSize: size, X: 72, Y: 700, W: 5, S: "\uFB01"}, {FontSize: size, X: 77, Y: 700, W: 5, S: "n"}, {FontSize: size, X: 82, Y: 700, W: 5, S: "d"}},
			"find", nil},
		{"rotated 90 degrees, spaces by position",
			join(show("body", 72, 700, size), rotate90(join(show("Draft", 0, 0, 9), show("copy", width("Draft", 9)+0.3*9, 0, 9)), 40, 200)),
			"body\n\nDraft copy", nil},
		{"rotated 180 degrees",
			join(show("body", 72, 700, size), func() []pdf.Text {
				ts := show("upside down", 0, 0, size)
				for i := range ts {
					ts[i].X, ts[i].Y, ts[i].W, ts[i].FontSize = 500-ts[i].X, 100, -ts[i].W, -size
				}
				return ts
			}()),
			"body\n\nupside down", nil},
		{"zero widths: kerning-only advance inside a string",
			join(zeroWidth("Hello", 72, 700, size), zeroWidth("world", 72+0.3*em, 700, size), zeroWidth("again", 72, 686, size)),
			"Hello world\nagain", nil},
		{"zero widths, known origins: TJ continuation",
			join(zeroWidth("Hello", 72, 700, size), zeroWidth("world", 72+0.3*em, 700, size), zeroWidth("again", 72, 686, size)),
			"Hello world\nagain", []bool{true, false, false, false, false, false, false, false, false, false, true, false, false, false, false}},
		{"zero widths, every glyph placed with Td (Chrome)",
			func() []pdf.Text {
				ts := show("Ill wait, Tim", 72, 700, size)
				for i := range ts {
					ts[i].W = 0
				}
				return ts
			}(),
			"Ill wait, Tim", []bool{true, true, true, true, true, true, true, true, true, true, true, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var origins []glyphOrigin
			for _, m := range tc.moved {
				origins = append(origins, glyphOrigin{moved: m})
			}
			got, _ := layoutPage(tc.texts, origins)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLayoutCountsUnmapped(t *testing.T) {
	texts := join(show("abc", 72, 700, 10), []pdf.Text{{FontSize: 10, X: 90, Y: 700, S: "\uFFFD"}})
	_, st := layoutPage(texts, nil)
	if st.glyphs != 4 || st.unmapped != 1 {
		t.Errorf("stats = %+v, want 4 glyphs, 1 unmapped", st)
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
