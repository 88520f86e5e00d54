package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Limits on walking a PDF's object graph. The pdf library follows page-tree
// and /Parent links without cycle checks, so a crafted file could loop it
// forever; we walk those links ourselves first, within these bounds.
const (
	maxTreeDepth = 64
	maxTreeNodes = 200_000
	// maxContentBytes caps a page's decompressed content stream. Real pages
	// of text are far smaller; a flate bomb is not, and the library would
	// keep every glyph of it in memory.
	maxContentBytes = 32 << 20
	// maxColumns bounds PNG predictor rows; see checkStreamParams.
	maxColumns = 1 << 16
	// maxPageWarnings is how many skipped pages are reported one by one.
	maxPageWarnings = 10
)

// extractPDF returns a PDF's text, its metadata title and warnings. The pdf
// library reports much of what it dislikes by panicking, so all of it runs
// under recover; one bad page is skipped with a warning, not the whole file.
func extractPDF(ctx context.Context, data []byte) (text, title string, warnings []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, title, warnings = "", "", nil
			err = fmt.Errorf("%w: %s", ErrMalformedPDF, libMessage(r))
		}
	}()
	data, err = checkFrame(data)
	if err != nil {
		return "", "", nil, err
	}
	if err := checkXref(data); err != nil {
		return "", "", nil, fmt.Errorf("%w: %v", ErrMalformedPDF, err)
	}
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(err.Error(), "encrypt") || bytes.Contains(data, []byte("/Encrypt")) {
			return "", "", nil, fmt.Errorf("%w: %s", ErrEncryptedPDF, libMessage(err))
		}
		return "", "", nil, fmt.Errorf("%w: %s", ErrMalformedPDF, libMessage(err))
	}
	if !r.Trailer().Key("Encrypt").IsNull() {
		warnings = append(warnings, "PDF is encrypted with an empty user password; decrypted")
	}
	title = cleanTitle(r.Trailer().Key("Info").Key("Title").Text())

	pages, err := pageList(r)
	if err != nil {
		return "", "", nil, fmt.Errorf("%w: %v", ErrMalformedPDF, err)
	}
	var b strings.Builder
	var glyphs, unmapped, failed int
	var firstFailure error
	for i, p := range pages {
		if err := ctx.Err(); err != nil {
			return "", "", nil, err
		}
		pageText, st, err := extractPage(p)
		if err != nil {
			failed++
			if firstFailure == nil {
				firstFailure = fmt.Errorf("page %d: %v", i+1, err)
			}
			if failed <= maxPageWarnings {
				warnings = append(warnings, fmt.Sprintf("page %d skipped: %v", i+1, err))
			}
			continue
		}
		glyphs += st.glyphs
		unmapped += st.unmapped
		if pageText == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(pageText)
	}
	if failed > maxPageWarnings {
		warnings = append(warnings, fmt.Sprintf("%d more pages skipped", failed-maxPageWarnings))
	}
	if unmapped > 0 && unmapped*4 > glyphs {
		warnings = append(warnings, fmt.Sprintf("%d of %d glyphs have no Unicode mapping and were dropped", unmapped, glyphs))
	}
	text = strings.ToValidUTF8(b.String(), "\uFFFD")
	if strings.TrimSpace(text) == "" {
		switch {
		case failed > 0 && failed == len(pages):
			return "", "", nil, fmt.Errorf("%w: no readable page: %v", ErrMalformedPDF, firstFailure)
		case unmapped > 0:
			return "", "", nil, fmt.Errorf("%w: no extractable text in %s: %d glyphs have no Unicode mapping", ErrEmpty, pageCount(len(pages)), unmapped)
		default:
			return "", "", nil, fmt.Errorf("%w: no extractable text in %s (it may be scanned images)", ErrEmpty, pageCount(len(pages)))
		}
	}
	return text, title, warnings, nil
}

// extractPage lays out one page, turning a library panic into an error.
func extractPage(p pdf.Page) (text string, st pageStats, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New(libMessage(r))
		}
	}()
	if !parentChainEnds(p.V) {
		return "", st, errors.New("/Parent chain too deep or cyclic")
	}
	if err := checkPageStreams(p); err != nil {
		return "", st, err
	}
	if err := checkContentSize(p.V.Key("Contents")); err != nil {
		return "", st, err
	}
	texts := p.Content().Text
	var kept []glyphOrigin
	if origins := replay(p, len(texts)); origins != nil {
		n := 0
		for i, t := range texts {
			if !origins[i].marker {
				texts[n] = t
				kept = append(kept, origins[i])
				n++
			}
		}
		texts = texts[:n]
	}
	text, st = layoutPage(texts, kept)
	return text, st, nil
}

// checkFrame checks the header and trailer marker the library insists on,
// forgiving what readers forgive: a PDF 2.0 or odd header line (the library
// only knows 1.0-1.7) and a little junk after %%EOF. A file whose end has
// no %%EOF was cut short.
func checkFrame(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		return nil, fmt.Errorf("%w: no %%PDF- header", ErrMalformedPDF)
	}
	tail := bytes.TrimRight(data, "\x00\r\n\t\f ")
	if !bytes.HasSuffix(tail, []byte("%%EOF")) {
		i := bytes.LastIndex(data, []byte("%%EOF"))
		if i < 0 || len(data)-i > 1024 {
			return nil, fmt.Errorf("%w: truncated (no %%%%EOF at the end)", ErrMalformedPDF)
		}
		tail = data[:i+len("%%EOF")]
	}
	data = tail
	if len(data) >= 9 && !(data[5] == '1' && data[6] == '.' && data[7] >= '0' && data[7] <= '7' && (data[8] == '\r' || data[8] == '\n')) {
		// Rewrite the header in a copy: "%PDF-2.0 " and friends become "%PDF-1.7\n".
		// Byte offsets stay the same, and the rest of the line is a comment.
		digit := func(c byte) bool { return c >= '0' && c <= '9' }
		if len(data) < 16 || !digit(data[5]) || data[6] != '.' || !digit(data[7]) {
			return nil, fmt.Errorf("%w: bad header %q", ErrMalformedPDF, firstLine(data))
		}
		fixed := bytes.Clone(data)
		copy(fixed[5:9], "1.7\n")
		data = fixed
	}
	return data, nil
}

// libMessage is a pdf library error or panic value as text, without the
// library's own "malformed PDF: " style prefix that our sentinel repeats.
func libMessage(v any) string {
	s := fmt.Sprint(v)
	for _, p := range []string{"malformed PDF: ", "malformed PDF file: ", "encrypted PDF: ", "not a PDF file: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

func pageCount(n int) string {
	return fmt.Sprintf("%d %s", n, plural(n, "page", "pages"))
}

func firstLine(b []byte) string {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	return string(b[:min(len(b), 32)])
}

// pageList walks the page tree itself, bounded, rather than calling the
// library's Page(i), which loops forever on a cyclic /Kids.
func pageList(r *pdf.Reader) ([]pdf.Page, error) {
	var pages []pdf.Page
	nodes := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		nodes++
		if depth > maxTreeDepth || nodes > maxTreeNodes {
			return errors.New("page tree too deep or cyclic")
		}
		kids := v.Key("Kids")
		switch {
		case v.Key("Type").Name() == "Page" || (kids.Kind() != pdf.Array && v.Kind() == pdf.Dict):
			pages = append(pages, pdf.Page{V: v})
		case kids.Kind() == pdf.Array:
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	root := r.Trailer().Key("Root").Key("Pages")
	if root.Kind() != pdf.Dict {
		return nil, errors.New("no page tree")
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	return pages, nil
}

// parentChainEnds reports whether following /Parent from v ends, or finds
// /Resources (where the library's own walk stops), within maxTreeDepth steps.
func parentChainEnds(v pdf.Value) bool {
	for range maxTreeDepth {
		if v.IsNull() || !v.Key("Resources").IsNull() {
			return true
		}
		v = v.Key("Parent")
	}
	return false
}

// cleanTitle makes a metadata title safe to show: valid UTF-8, no control
// characters, single spaces, at most 200 runes.
func cleanTitle(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\uFFFD' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200])
	}
	return s
}

// checkPageStreams vets the streams the library will decode for this page
// (its content and its fonts' ToUnicode maps) with checkStreamParams.
func checkPageStreams(p pdf.Page) error {
	streams := items(p.V.Key("Contents"))
	fonts := p.Resources().Key("Font")
	for _, name := range fonts.Keys() {
		streams = append(streams, fonts.Key(name).Key("ToUnicode"))
	}
	for _, s := range streams {
		if err := checkStreamParams(s); err != nil {
			return err
		}
	}
	return nil
}

// checkStreamParams rejects a stream whose predictor /Columns would make
// the library allocate a row buffer of any size the file asks for; a huge
// one kills the process instead of panicking.
func checkStreamParams(v pdf.Value) error {
	if v.Kind() != pdf.Stream {
		return nil
	}
	for _, p := range items(v.Key("DecodeParms")) {
		if c := p.Key("Columns"); c.Kind() == pdf.Integer && (c.Int64() < 0 || c.Int64() > maxColumns) {
			return fmt.Errorf("stream predictor /Columns %d is out of range", c.Int64())
		}
	}
	return nil
}

// checkContentSize decompresses a page's content (a stream or an array of
// streams) without parsing it, and fails if it exceeds maxContentBytes.
func checkContentSize(contents pdf.Value) error {
	var total int64
	for _, s := range items(contents) {
		if s.Kind() != pdf.Stream {
			continue
		}
		rc := s.Reader()
		n, _ := io.Copy(io.Discard, io.LimitReader(rc, maxContentBytes-total+1))
		rc.Close()
		total += n
		if total > maxContentBytes {
			return fmt.Errorf("content stream over %d MiB", maxContentBytes>>20)
		}
	}
	return nil
}

// items is v's elements if v is an array, else v alone: the forms /Contents
// and /DecodeParms may take.
func items(v pdf.Value) []pdf.Value {
	if v.Kind() != pdf.Array {
		return []pdf.Value{v}
	}
	out := make([]pdf.Value, v.Len())
	for i := range out {
		out[i] = v.Index(i)
	}
	return out
}

// glyphOrigin is what replay learns about one glyph of Content().Text.
type glyphOrigin struct {
	// marker: not in the PDF at all. After every TJ the library shows an
	// extra "\n" through the current font, which decodes to a real letter
	// in subset fonts that use code 10 (LibreOffice puts a 'p' there).
	marker bool
	// moved: the text position was set (BT, Td, Tm, T*, ', ", Q, cm) since
	// the previous glyph, so the library's x for it is trustworthy even
	// when it reports no widths.
	moved bool
	// width is the glyph's advance in thousandths of an em when the font
	// is a CID font, whose widths the library does not read; else 0.
	width float64
}

// fontInfo is what replay needs to know about a font.
type fontInfo struct {
	enc    pdf.TextEncoding
	cid    bool // Type0 with Identity-H: two-byte codes, widths in /W
	widths map[int]float64
	dw     float64
}

// loadFont reads a font's encoding and, for Identity-H CID fonts, its
// /W widths (a map from glyph code to width, capped at 65536 codes).
func loadFont(p pdf.Page, name string) *fontInfo {
	f := p.Font(name)
	fi := &fontInfo{enc: f.Encoder()}
	if fi.enc == nil {
		fi.enc = rawEncoding{}
	}
	if f.V.Key("Subtype").Name() != "Type0" || f.V.Key("Encoding").Name() != "Identity-H" {
		return fi
	}
	desc := f.V.Key("DescendantFonts").Index(0)
	fi.cid, fi.dw, fi.widths = true, 1000, make(map[int]float64)
	if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
		fi.dw = dw.Float64()
	}
	// Codes are two bytes, so at most 65536 widths; budget bounds the work
	// a hostile /W of many overlapping ranges can cause.
	w := desc.Key("W")
	budget := 1 << 18
	for i := 0; i+1 < w.Len() && budget > 0; {
		first := int(w.Index(i).Int64())
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && first+j < 1<<16 && budget > 0; j++ {
				if first+j >= 0 {
					fi.widths[first+j] = next.Index(j).Float64()
				}
				budget--
			}
			i += 2
			continue
		}
		last := min(int(w.Index(i+1).Int64()), 1<<16-1)
		v := w.Index(i + 2).Float64()
		for c := max(first, 0); c <= last && budget > 0; c++ {
			fi.widths[c] = v
			budget--
		}
		i += 3
	}
	return fi
}

// codeWidths splits s into two-byte codes and returns one width per rune
// that the font's encoding makes of them, or nil if the split does not
// reproduce the whole-string decoding the library uses.
func (fi *fontInfo) codeWidths(s string, runes int) []float64 {
	if !fi.cid || len(s)%2 != 0 {
		return nil
	}
	out := make([]float64, 0, runes)
	for i := 0; i < len(s); i += 2 {
		n := utf8.RuneCountInString(fi.enc.Decode(s[i : i+2]))
		w, ok := fi.widths[int(s[i])<<8|int(s[i+1])]
		if !ok {
			w = fi.dw
		}
		for range n {
			out = append(out, w/float64(n))
		}
	}
	if len(out) != runes {
		return nil
	}
	return out
}

// replay interprets the page's content stream exactly as the library's
// Content does, recording where each of its total glyphs came from. It
// returns nil if the replay does not agree with the library's glyph count.
func replay(p pdf.Page, total int) (origins []glyphOrigin) {
	defer func() {
		if recover() != nil {
			origins = nil
		}
	}()
	fonts := make(map[string]*fontInfo)
	font := &fontInfo{enc: rawEncoding{}}
	origins = make([]glyphOrigin, 0, total)
	moved := true
	show := func(s string, marker bool) {
		n := utf8.RuneCountInString(font.enc.Decode(s))
		widths := font.codeWidths(s, n)
		for i := range n {
			o := glyphOrigin{marker: marker, moved: moved}
			if widths != nil {
				o.width = widths[i]
			}
			origins = append(origins, o)
			moved = false
		}
	}
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT", "Td", "TD", "Tm", "T*", "Q", "cm":
			moved = true
		case "Tf":
			if len(args) != 2 {
				panic("bad Tf")
			}
			name := args[0].Name()
			if fonts[name] == nil {
				fonts[name] = loadFont(p, name)
			}
			font = fonts[name]
		case "\"":
			if len(args) != 3 {
				panic("bad \"")
			}
			args = args[2:]
			fallthrough
		case "'":
			moved = true
			fallthrough
		case "Tj":
			if len(args) != 1 {
				panic("bad " + op)
			}
			show(args[0].RawString(), false)
		case "TJ":
			if len(args) < 1 {
				panic("bad TJ")
			}
			v := args[0]
			for i := 0; i < v.Len(); i++ {
				if x := v.Index(i); x.Kind() == pdf.String {
					show(x.RawString(), false)
				}
			}
			show("\n", true)
		}
	})
	if len(origins) != total {
		return nil
	}
	return origins
}

// rawEncoding passes codes through, as the library does before any Tf.
type rawEncoding struct{}

func (rawEncoding) Decode(raw string) string { return raw }
