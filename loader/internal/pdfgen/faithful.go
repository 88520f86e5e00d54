package pdfgen

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"

	"github.com/docgraph/docgraph/loader/internal/afm"
)

// Fixtures for faithful text: each reproduces, in a page or two, a way
// real producers encode text that naive extraction gets wrong. Their
// expected texts live in the loader's tests.

// objects numbers PDF object bodies as they are added; object 1 is the
// catalog and 2 the page tree, filled in by pdf.
type objects struct {
	bodies []string
	pages  []int
}

func newObjects() *objects {
	return &objects{bodies: []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}}
}

func (o *objects) add(body string) int {
	o.bodies = append(o.bodies, body)
	return len(o.bodies)
}

// page adds a US Letter page with content and resources (a dictionary body).
func (o *objects) page(content, resources string) {
	c := o.add(Stream(content))
	o.pages = append(o.pages, o.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents %d 0 R >>", resources, c)))
}

func (o *objects) pdf() []byte {
	var kids []string
	for _, p := range o.pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", p))
	}
	o.bodies[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(o.pages))
	return Raw(o.bodies...)
}

// widthsFor lists Helvetica widths for codes 0-255, with the given codes
// overridden (ligature and other private codes).
func widthsFor(extra map[byte]int) string {
	ws := make([]string, 256)
	for c := range 256 {
		w := 0
		if c >= 32 && c < 127 {
			w, _ = afm.Helvetica.Width(rune(c))
		}
		if e, ok := extra[byte(c)]; ok {
			w = e
		}
		ws[c] = fmt.Sprint(w)
	}
	return "/FirstChar 0 /LastChar 255 /Widths [" + strings.Join(ws, " ") + "]"
}

// tj is a TJ array of words separated by a displacement only, as TeX sets
// them: no space characters.
func tj(words ...string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = "(" + w + ")"
	}
	return "[" + strings.Join(parts, " -333 ") + "] TJ"
}

func deflate(s string) string {
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
}

// ligatures sets ligature glyphs three ways: mapped by a ToUnicode CMap
// to two letters, named in the built-in encoding of an embedded Type 1
// font (no /Encoding), and named "f_f_i", "ffl", "uni00660066" in
// /Differences. Words are separated by displacement only, so a ligature
// counted as one glyph but decoded as two must not shift what follows.
func ligatures() []byte {
	o := newObjects()
	cmap := `/CIDInit /ProcSet findresource begin 12 dict begin begincmap
/CMapName /Lig def 1 begincodespacerange <00> <FF> endcodespacerange
2 beginbfchar <01> <00660069> <02> <FB03> endbfchar
1 beginbfrange <20> <7E> <0020> endbfrange
endcmap CMapName currentdict /CMap defineresource pop end end`
	tu := o.add(Stream(cmap))
	f1 := o.add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /LigaturesToUnicode %s /ToUnicode %d 0 R >>", widthsFor(map[byte]int{1: 500, 2: 778}), tu))

	program := "%!PS-AdobeFont-1.0: CMR10 003.002\n/FontName /CMR10 def\n/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\n" +
		"dup 12 /fi put\ndup 14 /ffi put\n"
	for c := 'a'; c <= 'z'; c++ {
		program += fmt.Sprintf("dup %d /%c put\n", c, c)
	}
	program += "readonly def\ncurrentfile eexec\n"
	file := o.add(fmt.Sprintf("<< /Length %d /Length1 %d /Length2 0 /Length3 0 >>\nstream\n%s\nendstream", len(program), len(program), program))
	desc := o.add(fmt.Sprintf("<< /Type /FontDescriptor /FontName /CMR10 /Flags 4 /FontBBox [0 -250 1000 750] /ItalicAngle 0 /Ascent 750 /Descent -250 /CapHeight 700 /StemV 80 /FontFile %d 0 R >>", file))
	f2 := o.add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /CMR10 %s /FontDescriptor %d 0 R >>", widthsFor(map[byte]int{12: 556, 14: 833}), desc))

	f3 := o.add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /LigatureNames %s /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [1 /f_f_i /ffl /uni00660066] >> >>",
		widthsFor(map[byte]int{1: 778, 2: 778, 3: 556})))

	content := strings.Join([]string{
		"BT /F1 12 Tf 72 700 Td " + tj(`the`, `\001rst`, `\001tted`, `models`, `su\002x`, `here`) + " ET",
		"BT /F2 12 Tf 72 680 Td " + tj(`in`, `the`, `\014rst`, `instance`, `an`, `o\016ce`, `job`) + " ET",
		"BT /F3 12 Tf 72 660 Td " + tj(`an`, `o\001ce`, `memo`, `ba\002ed`, `us`, `e\003ort`, `wasted`) + " ET",
	}, "\n")
	o.page(content, fmt.Sprintf("<< /Font << /F1 %d 0 R /F2 %d 0 R /F3 %d 0 R >> >>", f1, f2, f3))
	return o.pdf()
}

// forms draws text from Form XObjects: one drawn in place between page
// text, one nested inside it, one drawn twice (a stamp), and forms that
// draw themselves and each other in a loop.
func forms() []byte {
	o := newObjects()
	font := o.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	// Objects are numbered in order: fm1 is font+1, fm2 font+2, loop font+3, stamp font+4.
	fm1, fm2, loop, stamp := font+1, font+2, font+3, font+4
	res := func(xobjects string) string {
		return fmt.Sprintf("/Resources << /Font << /F1 %d 0 R >> /XObject << %s >> >>", font, xobjects)
	}
	form := func(resources, content string) string {
		return fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 500 100] %s /Length %d >>\nstream\n%s\nendstream", resources, len(content), content)
	}
	o.add(form(res(fmt.Sprintf("/Fm2 %d 0 R", fm2)), "BT /F1 12 Tf 0 0 Td (Text inside the form.) Tj ET\nq 1 0 0 1 0 -20 cm /Fm2 Do Q"))
	o.add(form(res(fmt.Sprintf("/Fm1 %d 0 R /Loop %d 0 R", fm1, loop)), "BT /F1 12 Tf 0 0 Td (Nested form text.) Tj ET\n/Fm1 Do /Loop Do"))
	o.add(form(res(fmt.Sprintf("/Loop %d 0 R", loop)), "/Loop Do"))
	o.add(form(fmt.Sprintf("/Matrix [1 0 0 1 0 0] /Resources << /Font << /F1 %d 0 R >> >>", font), "BT /F1 12 Tf 0 0 Td (Repeated stamp) Tj ET"))
	content := strings.Join([]string{
		"BT /F1 12 Tf 72 700 Td (Page text before the form.) Tj ET",
		"q 1 0 0 1 72 680 cm /Fm1 Do Q",
		"q 1 0 0 1 72 640 cm /Stamp Do Q q 1 0 0 1 300 640 cm /Stamp Do Q",
		"BT /F1 12 Tf 72 620 Td (Page text after the form.) Tj ET",
	}, "\n")
	o.page(content, fmt.Sprintf("<< /Font << /F1 %d 0 R >> /XObject << /Fm1 %d 0 R /Stamp %d 0 R >> >>", font, fm1, stamp))
	return o.pdf()
}

// markedContent has marked-content property lists that trip simple
// lexers: escapes in literal strings, nested dictionaries and arrays, and
// /ActualText that replaces what its span draws (TeX's lowered E).
func markedContent() []byte {
	o := newObjects()
	font := o.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	content := strings.Join([]string{
		"BT /F1 12 Tf 72 700 Td (Typeset with ) Tj",
		"/Span <</ActualText (TeX)>> BDC (T) Tj 1 -2 Td (E) Tj 1 2 Td (X) Tj EMC",
		"(, then the rest.) Tj ET",
		`BT /F1 12 Tf 72 680 Td (Angle ) Tj /Span <</ActualText (\protect >) /Lang (en) /Attr <</O /Layout /Note (a\)b\(c \\) /K [1 (\050) <</C 2>>]>> >> BDC (i) Tj EMC ( brackets.) Tj ET`,
		"/Artifact <</Type /Pagination /Subtype /Footer>> BDC BT /F1 12 Tf 72 660 Td (The rest of the page is read.) Tj ET EMC",
	}, "\n")
	o.page(content, fmt.Sprintf("<< /Font << /F1 %d 0 R >> >>", font))
	return o.pdf()
}

// oddToUnicode is a Type 0 font whose ToUnicode CMap gives one code a
// destination of three bytes, as a LuaTeX file on the Debian shelf does;
// the pdf library indexed past its end and rejected the whole file.
func oddToUnicode() []byte {
	o := newObjects()
	cmap := `/CIDInit /ProcSet findresource begin 12 dict begin begincmap
/CMapName /Odd def 1 begincodespacerange <0000> <FFFF> endcodespacerange
5 beginbfchar <0001> <0048> <0002> <0065> <0003> <006C00> <0004> <006F> <0005> <0021> endbfchar
endcmap CMapName currentdict /CMap defineresource pop end end`
	tu := o.add(Stream(cmap))
	desc := o.add("<< /Type /FontDescriptor /FontName /LMRoman10-Regular /Flags 4 /FontBBox [0 -250 1000 750] /ItalicAngle 0 /Ascent 750 /Descent -250 /CapHeight 700 /StemV 80 >>")
	cid := o.add(fmt.Sprintf("<< /Type /Font /Subtype /CIDFontType2 /BaseFont /LMRoman10-Regular /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /DW 500 /W [1 [722 444 278 500 278]] >>", desc))
	font := o.add(fmt.Sprintf("<< /Type /Font /Subtype /Type0 /BaseFont /LMRoman10-Regular /Encoding /Identity-H /DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>", cid, tu))
	o.page("BT /F1 12 Tf 72 700 Td <00010002000300030004> Tj 40 0 Td <0001000200030003000400050005> Tj ET", fmt.Sprintf("<< /Font << /F1 %d 0 R >> >>", font))
	return o.pdf()
}

// RTLText is the text of rtl.pdf, line by line, in reading order.
var RTLText = []string{"שלום עולם", "שנת 2024", "مرحبا بالعالم"}

// rtl draws Hebrew and Arabic the way XeTeX and word processors do: glyphs
// left to right in visual order, so the text runs backwards in the file.
func rtl() []byte {
	o := newObjects()
	// Codes 0x80+ are Hebrew letters by glyph name: shin lamed vav
	// finalmem ayin nun tav. Codes 0xC0+ are Arabic letters by ToUnicode
	// only: meem reh hah beh alef lam ain.
	diffs := "/afii57689 /afii57676 /afii57669 /afii57677 /afii57682 /afii57680 /afii57690"
	var bf []string
	for i, u := range strings.Fields("0645 0631 062D 0628 0627 0644 0639") {
		bf = append(bf, fmt.Sprintf("<%02X> <%s>", 0xC0+i, u))
	}
	cmap := fmt.Sprintf(`/CIDInit /ProcSet findresource begin 12 dict begin begincmap
1 begincodespacerange <00> <FF> endcodespacerange
1 beginbfrange <20> <7E> <0020> endbfrange
%d beginbfchar %s endbfchar
endcmap CMapName currentdict /CMap defineresource pop end end`, len(bf), strings.Join(bf, " "))
	tu := o.add(Stream(cmap))
	ws := map[byte]int{}
	for c := 0x80; c <= 0xC6; c++ {
		ws[byte(c)] = 550
	}
	font := o.add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /HebrewArabic %s /Encoding << /Type /Encoding /BaseEncoding /WinAnsiEncoding /Differences [128 %s] >> /ToUnicode %d 0 R >>",
		widthsFor(ws), diffs, tu))
	// RTLText[0], "שלום עולם", drawn left to right: each word reversed,
	// the second word first.
	line1 := `(\203\201\202\204 \203\202\201\200) Tj`
	// RTLText[1], "שנת 2024": the number first, then tav nun shin.
	line2 := `(2024 \206\205\200) Tj`
	// RTLText[2], "مرحبا بالعالم": the second word reversed, then the first.
	line3 := `(\300\305\304\306\305\304\303 \304\303\302\301\300) Tj`
	content := fmt.Sprintf("BT /F1 12 Tf 72 700 Td %s ET\nBT /F1 12 Tf 72 680 Td %s ET\nBT /F1 12 Tf 72 660 Td %s ET", line1, line2, line3)
	o.page(content, fmt.Sprintf("<< /Font << /F1 %d 0 R >> >>", font))
	return o.pdf()
}

// leadersAndSpacing is a table of contents whose entries run to their page
// numbers over dot leaders (each dot placed on its own, as LaTeX does),
// then a letter-spaced heading.
func leadersAndSpacing() []byte {
	o := newObjects()
	font := o.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var lines []string
	y := 700
	for _, e := range []struct{ title, page string }{{"1 Introduction", "1"}, {"2 Reading the shelf", "5"}, {"3 Results", "12"}} {
		lines = append(lines, fmt.Sprintf("BT /F1 12 Tf 72 %d Td (%s) Tj ET", y, e.title))
		w := TextWidth(afm.Helvetica, 12, e.title)
		for x := 72 + w + 12; x < 500; x += 6 {
			lines = append(lines, fmt.Sprintf("BT /F1 12 Tf %s %d Td (.) Tj ET", num(x), y))
		}
		lines = append(lines, fmt.Sprintf("BT /F1 12 Tf 510 %d Td (%s) Tj ET", y, e.page))
		y -= 18
	}
	// "Demonstration of spacing", each letter followed by 0.2 em.
	var parts []string
	for _, word := range []string{"Demonstration", "of", "spacing"} {
		var letters []string
		for _, c := range word {
			letters = append(letters, "("+string(c)+")")
		}
		parts = append(parts, strings.Join(letters, " -200 "))
	}
	lines = append(lines, "BT /F1 12 Tf 72 600 Td ["+strings.Join(parts, " -533 ")+"] TJ ET")
	o.page(strings.Join(lines, "\n"), fmt.Sprintf("<< /Font << /F1 %d 0 R >> >>", font))
	return o.pdf()
}

// ColumnsText is the reading order of columns.pdf: a title, the left
// column, the right column, a footer.
var ColumnsText = []string{
	"Two Columns of Text",
	"The left column starts here and",
	"runs down the page for several",
	"lines before it ends at the bottom",
	"of the left half of the page, where",
	"a reader who follows the baselines",
	"across would mix the two columns.",
	"The right column continues the",
	"text from the top of the right",
	"half, on the same baselines as",
	"the left column uses, so only the",
	"white gutter between them tells",
	"where one column ends.",
	"A footer spans the whole width of the page, from margin to margin.",
}

// columns sets a title, two columns sharing baselines, and a footer.
func columns() []byte {
	o := newObjects()
	font := o.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	lines := []string{fmt.Sprintf("BT /F1 16 Tf 220 720 Td %s Tj ET", Str(ColumnsText[0]))}
	for i := range 6 {
		y := 690 - 14*i
		lines = append(lines, fmt.Sprintf("BT /F1 11 Tf 72 %d Td %s Tj ET BT /F1 11 Tf 320 %d Td %s Tj ET", y, Str(ColumnsText[1+i]), y, Str(ColumnsText[7+i])))
	}
	lines = append(lines, fmt.Sprintf("BT /F1 11 Tf 72 580 Td %s Tj ET", Str(ColumnsText[13])))
	o.page(strings.Join(lines, "\n"), fmt.Sprintf("<< /Font << /F1 %d 0 R >> >>", font))
	return o.pdf()
}

// losses has what warnings must report: a font that gives its glyphs no
// Unicode, a content stream that breaks off, a page that cannot be read.
func losses() []byte {
	o := newObjects()
	font := o.add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	desc := o.add("<< /Type /FontDescriptor /FontName /MysteryDingbats /Flags 4 /FontBBox [0 0 1000 1000] /ItalicAngle 0 /Ascent 800 /Descent 0 /CapHeight 700 /StemV 80 >>")
	pi := o.add(fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /MysteryDingbats %s /FontDescriptor %d 0 R >>", widthsFor(nil), desc))
	res := fmt.Sprintf("<< /Font << /F1 %d 0 R /F2 %d 0 R >> >>", font, pi)
	o.page("BT /F1 12 Tf 72 700 Td (Readable words.) Tj ET BT /F2 12 Tf 72 680 Td (abcdefghijklmnopqrstuvwxyz) Tj ET", res)
	// Page 2: two content streams, the second a deflate stream cut off
	// half way: the first stream's text survives.
	kept := o.add(Stream("BT /F1 12 Tf 72 700 Td (Kept before the break.) Tj ET"))
	full := deflate(strings.Repeat("BT /F1 12 Tf 72 680 Td (Lost after the break, padding to make the stream long.) Tj ET\n", 40))
	cut := full[:len(full)/2]
	c := o.add(fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(cut), cut))
	o.pages = append(o.pages, o.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents [%d 0 R %d 0 R] >>", res, kept, c)))
	// Page 3: an unknown filter.
	c = o.add("<< /Length 8 /Filter /NoSuchDecode >>\nstream\nxxxxxxxx\nendstream")
	o.pages = append(o.pages, o.add(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources %s /Contents %d 0 R >>", res, c)))
	return o.pdf()
}
