package loader

import (
	"bytes"
	"io"
	"math"
	"strings"
	"sync"
	"unicode"

	"github.com/ledongthuc/pdf"

	"github.com/docgraph/docgraph/loader/internal/glyphs"
)

// pdfFont is what text extraction needs of a font: how its strings split
// into codes, the Unicode text of each code and each code's advance.
type pdfFont struct {
	name string // BaseFont without the subset prefix
	cid  bool   // Type 0: multi-byte codes through an encoding CMap

	// Simple fonts: one byte per code.
	text   [256]string
	mapped [256]bool
	width  [256]float64 // advance in ems (text space units at size 1)
	hasW   [256]bool

	// Type 0 fonts.
	enc      *cmap // encoding CMap; nil means Identity (two-byte codes, CID = code)
	uniCodes bool  // codes are UTF-16 themselves (a predefined Uni… CMap)
	toUni    *cmap
	cidW     map[uint32]float64
	dw       float64
	vertical bool

	// builtin, when set, reads the encoding of the embedded font program,
	// which answers for codes nothing else maps; it runs once, on first need.
	builtin     func() ([256]string, [256]bool)
	builtinOnce sync.Once
	builtinText [256]string
	builtinOK   [256]bool

	missing float64 // advance of codes without a width, in ems; 0 means estimate
	size    float64 // multiplies Tf's size into the glyph height: 1 except for odd Type 3 matrices
}

// label names the font in warnings.
func (f *pdfFont) label() string {
	if f.name == "" {
		return "an unnamed font"
	}
	return f.name
}

// maxFontProgram bounds how much of an embedded Type 1 font is inflated to
// find its built-in encoding, which sits in the clear-text part at the start.
const maxFontProgram = 256 << 10

// loadFont reads a font dictionary. It never fails: what cannot be read
// leaves codes unmapped or widths estimated.
func loadFont(v pdf.Value) *pdfFont {
	f := &pdfFont{size: 1}
	f.name = v.Key("BaseFont").Name()
	if i := strings.IndexByte(f.name, '+'); i == 6 {
		f.name = f.name[i+1:]
	}
	switch v.Key("Subtype").Name() {
	case "Type0":
		f.loadType0(v)
	default:
		f.loadSimple(v)
	}
	return f
}

func (f *pdfFont) loadSimple(v pdf.Value) {
	subtype := v.Key("Subtype").Name()
	desc := v.Key("FontDescriptor")
	scale := 0.001
	if subtype == "Type3" {
		// Type 3 glyph space maps to text space by the font's own matrix.
		if m := numbers(v.Key("FontMatrix"), 6); len(m) == 6 && m[0] != 0 && finite(m...) {
			scale = math.Abs(m[0])
		}
		if f.name == "" {
			f.name = v.Key("Name").Name()
		}
	}
	first := int(v.Key("FirstChar").Int64())
	ws := numbers(v.Key("Widths"), 256)
	for i, w := range ws {
		if c := first + i; c >= 0 && c < 256 && finite(w) {
			f.width[c], f.hasW[c] = w*scale, true
		}
	}
	if subtype == "Type3" {
		f.size = type3Size(ws, scale)
	}
	if mw := desc.Key("MissingWidth"); mw.Kind() == pdf.Integer || mw.Kind() == pdf.Real {
		f.missing = mw.Float64() * scale
	}

	// Unicode: ToUnicode first, then the encoding's glyph names, then the
	// font program's built-in encoding.
	var base *[256]rune
	var names [256]string
	enc := v.Key("Encoding")
	switch enc.Kind() {
	case pdf.Name:
		base = namedEncoding(enc.Name())
	case pdf.Dict:
		base = namedEncoding(enc.Key("BaseEncoding").Name())
		diffs := enc.Key("Differences")
		code := -1
		for i := 0; i < diffs.Len() && i < 1024; i++ {
			d := diffs.Index(i)
			switch d.Kind() {
			case pdf.Integer:
				code = int(d.Int64())
			case pdf.Name:
				if code >= 0 && code < 256 {
					names[code] = d.Name()
				}
				code++
			}
		}
	}
	if base == nil {
		// The font program's own encoding, under the Differences. Reading
		// it means inflating the font, so it waits until a code needs it.
		diffs := names
		f.builtin = func() (out [256]string, ok [256]bool) {
			defer func() {
				if recover() != nil { // an unreadable font program: nothing more is known
					out, ok = [256]string{}, [256]bool{}
				}
			}()
			names, base := diffs, (*[256]rune)(nil)
			found := false
			if subtype == "Type1" || subtype == "MMType1" {
				var b [256]string
				if b, found = type1Encoding(desc.Key("FontFile")); found {
					names = mergeNames(b, diffs)
				}
			}
			if !found {
				base = f.defaultEncoding(subtype, desc)
			}
			fillNames(&out, &ok, names, base)
			return out, ok
		}
	}
	fillNames(&f.text, &f.mapped, names, base)
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		if data, _, err := readStream(tu, maxContentBytes); err == nil {
			m := parseCMap(data)
			for c := range 256 {
				s, ok := m.lookupText(1, uint32(c))
				if !ok {
					s, ok = m.lookupText(2, uint32(c))
				}
				if ok && usableText(s) {
					f.text[c], f.mapped[c] = s, true
				}
			}
		}
	}
}

// type3Size is how tall a Type 3 font's glyphs are per unit of font size.
// Its matrix may scale glyph space by anything, so the em is taken from
// the widths, whose average in text fonts is about half an em.
func type3Size(widths []float64, scale float64) float64 {
	sum, n := 0.0, 0
	for _, w := range widths {
		if w > 0 && finite(w) {
			sum += w
			n++
		}
	}
	if n == 0 {
		return 1
	}
	return math.Min(math.Max(sum/float64(n)*scale/0.5, 0.25), 4)
}

// fillNames maps codes by glyph name, else by the base encoding.
func fillNames(text *[256]string, mapped *[256]bool, names [256]string, base *[256]rune) {
	numeric := codeNamed(names)
	for c := range 256 {
		if n := names[c]; n != "" {
			if s, ok := glyphs.Name(n); ok {
				text[c], mapped[c] = s, true
			} else if r, ok := glyphs.CodeName(n); ok && numeric {
				text[c], mapped[c] = string(r), true
			}
			continue
		}
		if base != nil && base[c] != 0 {
			text[c], mapped[c] = string(base[c]), true
		}
	}
}

// lookup is a simple font's text for code c.
func (f *pdfFont) lookup(c byte) (string, bool) {
	if f.mapped[c] || f.builtin == nil {
		return f.text[c], f.mapped[c]
	}
	f.builtinOnce.Do(func() { f.builtinText, f.builtinOK = f.builtin() })
	return f.builtinText[c], f.builtinOK[c]
}

// usableText rejects ToUnicode values that map a glyph to nothing useful
// (NUL, other control characters), so the encoding's answer stands.
func usableText(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r == 0 || (unicode.IsControl(r) && r != '\t' && r != '\n') {
			return false
		}
	}
	return true
}

// defaultEncoding is the encoding of a simple font that names none and
// has no readable built-in one.
func (f *pdfFont) defaultEncoding(subtype string, desc pdf.Value) *[256]rune {
	lower := strings.ToLower(f.name)
	switch {
	case strings.HasPrefix(lower, "symbol"):
		return &glyphs.SymbolEncoding
	case subtype == "TrueType":
		// Symbolic TrueType fonts without an encoding draw by their own
		// cmap; in practice their codes are Latin-1-like.
		return &glyphs.WinAnsiEncoding
	case desc.Key("Flags").Int64()&4 != 0 && desc.Key("FontFile").IsNull() && desc.Key("FontFile3").IsNull() && symbolName(lower):
		return nil // a symbol font we cannot look into
	}
	// Producers mark text fonts symbolic often enough that the standard
	// encoding is the better guess for anything not named for symbols.
	return &glyphs.StandardEncoding
}

// symbolName reports whether a font's name says it draws symbols, not letters.
func symbolName(lower string) bool {
	for _, s := range []string{"dingbat", "wingding", "webding", "ornament", "symbol"} {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

func namedEncoding(name string) *[256]rune {
	switch name {
	case "WinAnsiEncoding":
		return &glyphs.WinAnsiEncoding
	case "MacRomanEncoding", "MacExpertEncoding":
		return &glyphs.MacRomanEncoding
	case "StandardEncoding":
		return &glyphs.StandardEncoding
	}
	return nil
}

// mergeNames lays Differences over a built-in encoding.
func mergeNames(base, diffs [256]string) [256]string {
	for c, n := range diffs {
		if n != "" {
			base[c] = n
		}
	}
	return base
}

// codeNamed reports whether a font's glyph names are codes in disguise
// ("a65", "g41"): at least a few names, all of that form and none known.
func codeNamed(names [256]string) bool {
	n := 0
	for _, name := range names {
		if name == "" || name == ".notdef" {
			continue
		}
		if _, known := glyphs.Name(name); known {
			return false
		}
		if _, ok := glyphs.CodeName(name); !ok {
			return false
		}
		n++
	}
	return n >= 3
}

// type1Encoding reads the built-in encoding of an embedded Type 1 font
// program from its clear-text part ("dup 12 /fi put" lines). ok is false
// when the program uses StandardEncoding or cannot be read.
func type1Encoding(file pdf.Value) (names [256]string, ok bool) {
	if file.Kind() != pdf.Stream {
		return names, false
	}
	limit := int64(maxFontProgram)
	if n := file.Key("Length1").Int64(); n > 0 && n < limit {
		limit = n
	}
	data := readPrefix(file, limit)
	if i := bytes.Index(data, []byte("eexec")); i >= 0 {
		data = data[:i]
	}
	at := bytes.Index(data, []byte("/Encoding"))
	if at < 0 || bytes.Contains(data, []byte("/Encoding StandardEncoding")) {
		return names, false
	}
	lx := psLexer{b: data[at:]}
	var prev [3]psObj // the three objects before the current one
	for range 1 << 16 {
		o, more := lx.next()
		if !more {
			break
		}
		if o.kind == psOp && o.str == "put" && prev[0].kind == psOp && prev[0].str == "dup" && prev[1].kind == psNum && prev[2].kind == psName {
			if c := int(prev[1].num); c >= 0 && c < 256 {
				names[c] = prev[2].str
				ok = true
			}
		}
		if o.kind == psOp && (o.str == "def" || o.str == "readonly") && ok {
			break
		}
		prev[0], prev[1], prev[2] = prev[1], prev[2], o
	}
	return names, ok
}

// readPrefix decodes at most the first limit bytes of a stream; a stream
// the library cannot decode reads as empty.
func readPrefix(s pdf.Value, limit int64) (data []byte) {
	defer func() {
		if recover() != nil {
			data = nil
		}
	}()
	rc := s.Reader()
	defer rc.Close()
	data, _ = io.ReadAll(io.LimitReader(rc, limit))
	return data
}

func (f *pdfFont) loadType0(v pdf.Value) {
	desc := v.Key("DescendantFonts").Index(0)
	enc := v.Key("Encoding")
	switch enc.Kind() {
	case pdf.Name:
		name := enc.Name()
		f.vertical = strings.HasSuffix(name, "-V")
		f.uniCodes = predefinedUnicode(name)
	case pdf.Stream:
		if data, _, err := readStream(enc, maxContentBytes); err == nil {
			f.enc = parseCMap(data)
			f.vertical = f.enc.vertical
			if !f.enc.hasSpace() {
				f.uniCodes = predefinedUnicode(f.enc.base)
				if len(f.enc.cids) == 0 && len(f.enc.cidRange) == 0 {
					f.enc = nil // a wrapper around Identity
				}
			}
		}
	}
	f.cid = true
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		if data, _, err := readStream(tu, maxContentBytes); err == nil {
			f.toUni = parseCMap(data)
		}
	}
	f.dw = 1
	if dw := desc.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
		f.dw = dw.Float64() / 1000
	}
	f.cidW = make(map[uint32]float64)
	// CIDs are at most two bytes in practice; budget bounds the work a
	// hostile /W of many overlapping ranges can cause.
	w := desc.Key("W")
	budget := 1 << 18
	for i := 0; i+1 < w.Len() && budget > 0; {
		first := w.Index(i).Int64()
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && first+int64(j) < 1<<16 && budget > 0; j++ {
				if first+int64(j) >= 0 {
					f.cidW[uint32(first)+uint32(j)] = next.Index(j).Float64() / 1000
				}
				budget--
			}
			i += 2
			continue
		}
		last := min(w.Index(i+1).Int64(), 1<<16-1)
		val := w.Index(i+2).Float64() / 1000
		for c := max(first, 0); c <= last && budget > 0; c++ {
			f.cidW[uint32(c)] = val
			budget--
		}
		i += 3
	}
}

// glyphFunc receives each code of a shown string: its text ("" when the
// font has no Unicode for it), its advance in ems, whether it is the
// single-byte code 32 that word spacing applies to, and whether it was
// mapped at all.
type glyphFunc func(text string, width float64, space, mapped bool)

// decode splits s into codes and reports each to fn.
func (f *pdfFont) decode(s string, fn glyphFunc) {
	if !f.cid {
		for i := 0; i < len(s); i++ {
			c := s[i]
			text, mapped := f.lookup(c)
			w := f.width[c]
			if !f.hasW[c] {
				w = f.missing
				if w == 0 {
					w = estimateWidth(f.name, text)
				}
			}
			fn(text, w, c == ' ', mapped)
		}
		return
	}
	for len(s) > 0 {
		var code uint32
		n := 2
		if f.enc != nil {
			code, n = f.enc.nextCode(s, 2)
		} else {
			n = min(2, len(s))
			code = beUint(s[:n])
		}
		raw := s[:n]
		s = s[n:]
		cid := code
		if f.enc != nil {
			if c, ok := f.enc.lookupCID(n, code); ok {
				cid = c
			}
		}
		text, mapped := "", false
		if f.toUni != nil {
			text, mapped = f.toUni.lookupText(n, code)
			if mapped && !usableText(text) {
				text, mapped = "", false
			}
		}
		if !mapped && f.uniCodes && n == 2 {
			text, mapped = utf16BE(raw), true
		}
		w, ok := f.cidW[cid]
		if !ok {
			w = f.dw
		}
		if f.vertical {
			w = 1 // vertical fonts advance by DW2's default of one em down
		}
		fn(text, w, n == 1 && code == ' ', mapped)
	}
}
