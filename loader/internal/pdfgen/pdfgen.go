// Package pdfgen writes small, valid PDF files with the standard Helvetica and Times fonts,
// so the loader's tests run on real PDFs whose text is known exactly.
package pdfgen

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/docgraph/docgraph/loader/internal/afm"
)

// Doc is a PDF under construction. Output is deterministic: no dates, no IDs.
type Doc struct {
	Title      string // Info /Title; empty means no Info dictionary
	Compress   bool   // FlateDecode the content streams
	OmitWidths bool   // leave /Widths out of the fonts, as some generators do for standard fonts
	pages      []*Page
}

// Page is one page's content stream, written with raw PDF operators.
type Page struct {
	Width, Height float64
	buf           bytes.Buffer
}

// Fonts are available on every page under these resource names.
var fontNames = []struct {
	res  string
	font afm.Font
}{{"F1", afm.Helvetica}, {"F2", afm.HelveticaBold}, {"F3", afm.TimesRoman}}

// Res is the resource name (for Tf) under which f is available.
func Res(f afm.Font) string {
	for _, n := range fontNames {
		if n.font == f {
			return n.res
		}
	}
	return "F1"
}

// AddPage appends a US Letter page.
func (d *Doc) AddPage() *Page {
	p := &Page{Width: 612, Height: 792}
	d.pages = append(d.pages, p)
	return p
}

// Op appends one line of raw content-stream operators.
func (p *Page) Op(format string, args ...any) {
	fmt.Fprintf(&p.buf, format, args...)
	p.buf.WriteByte('\n')
}

// Str encodes s as a PDF literal string in WinAnsiEncoding.
// It panics on runes the standard fonts here cannot show: fixtures are code.
func Str(s string) string {
	var b strings.Builder
	b.WriteByte('(')
	for _, r := range s {
		c, ok := afm.WinAnsi(r)
		if !ok {
			panic(fmt.Sprintf("pdfgen: %q has no WinAnsi code", r))
		}
		switch {
		case c == '(' || c == ')' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7F:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// TextWidth is the advance of s in points at size.
func TextWidth(f afm.Font, size float64, s string) float64 {
	total := 0
	for _, r := range s {
		w, ok := f.Width(r)
		if !ok {
			panic(fmt.Sprintf("pdfgen: no width for %q", r))
		}
		total += w
	}
	return float64(total) * size / 1000
}

// Bytes serialises the document: objects, a classic xref table and trailer.
func (d *Doc) Bytes() []byte {
	var out bytes.Buffer
	var offsets []int
	obj := func(body string) int {
		offsets = append(offsets, out.Len())
		n := len(offsets)
		fmt.Fprintf(&out, "%d 0 obj\n%s\nendobj\n", n, body)
		return n
	}
	out.WriteString("%PDF-1.4\n%\xE2\xE3\xCF\xD3\n")

	// Object numbers are fixed up front: 1 catalog, 2 page tree, then fonts,
	// then a page and its content per page, then Info.
	const catalog, pageTree = 1, 2
	firstFont := 3
	firstPage := firstFont + len(fontNames)
	obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pageTree))
	var kids []string
	for i := range d.pages {
		kids = append(kids, fmt.Sprintf("%d 0 R", firstPage+2*i))
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(d.pages)))
	var fontRes []string
	for i, f := range fontNames {
		obj(d.fontDict(f.font))
		fontRes = append(fontRes, fmt.Sprintf("/%s %d 0 R", f.res, firstFont+i))
	}
	for i, p := range d.pages {
		content := firstPage + 2*i + 1
		obj(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources << /Font << %s >> >> /Contents %d 0 R >>",
			pageTree, num(p.Width), num(p.Height), strings.Join(fontRes, " "), content))
		data, filter := p.buf.Bytes(), ""
		if d.Compress {
			var z bytes.Buffer
			zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
			zw.Write(data)
			zw.Close()
			data, filter = z.Bytes(), " /Filter /FlateDecode"
		}
		obj(fmt.Sprintf("<< /Length %d%s >>\nstream\n%s\nendstream", len(data), filter, data))
	}
	info := 0
	if d.Title != "" {
		info = obj(fmt.Sprintf("<< /Title %s /Producer (docgraph pdfgen) >>", infoString(d.Title)))
	}

	xref := out.Len()
	fmt.Fprintf(&out, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&out, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&out, "trailer\n<< /Size %d /Root %d 0 R", len(offsets)+1, catalog)
	if info != 0 {
		fmt.Fprintf(&out, " /Info %d 0 R", info)
	}
	fmt.Fprintf(&out, " >>\nstartxref\n%d\n%%%%EOF\n", xref)
	return out.Bytes()
}

func (d *Doc) fontDict(f afm.Font) string {
	s := fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding", f.BaseFont())
	if !d.OmitWidths {
		widths := make([]string, 0, 224)
		for c := 32; c <= 255; c++ {
			w := 0
			for r := rune(0); r < 0x2030; r++ { // reverse WinAnsi lookup; tables are small
				if code, ok := afm.WinAnsi(r); ok && int(code) == c {
					w, _ = f.Width(r)
					break
				}
			}
			widths = append(widths, fmt.Sprint(w))
		}
		s += fmt.Sprintf(" /FirstChar 32 /LastChar 255 /Widths [%s]", strings.Join(widths, " "))
	}
	return s + " >>"
}

// infoString encodes an Info string: PDFDocEncoding-safe ASCII as a literal,
// anything else as UTF-16BE with a byte order mark, as the spec requires.
func infoString(s string) string {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7E {
			ascii = false
		}
	}
	if ascii {
		return Str(s)
	}
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}

// num formats a coordinate without float noise.
func num(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// Raw writes a PDF whose objects are exactly bodies (object i+1 is
// bodies[i]) with a correct xref table and object 1 as the catalog: for
// crafting structurally hostile files that are still syntactically valid.
func Raw(bodies ...string) []byte { return rawPDF(bodies, nil, "") }

// Stream is an uncompressed stream object body holding data.
func Stream(data string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data), data)
}
