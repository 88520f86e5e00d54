package loader

import (
	"math"
	"sync"

	"github.com/ledongthuc/pdf"
)

// This file interprets page content streams for their text: the text and
// graphics state operators, Form XObjects (run in place, with cycles and
// depth bounded), and marked content carrying /ActualText. Everything else
// is skipped. Glyph positions come out in device space, split by reading
// direction, for layout.go.

// matrix is a PDF transformation [a b c d e f].
type matrix [6]float64

var identity = matrix{1, 0, 0, 1, 0, 0}

// mul returns m × n: apply m, then n.
func (m matrix) mul(n matrix) matrix {
	return matrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

func matrixOf(v []float64) (matrix, bool) {
	if len(v) != 6 || !finite(v...) {
		return identity, false
	}
	return matrix(v), true
}

// Per-page bounds on interpretation work: a page may draw a form many
// times, and forms may draw forms.
const (
	maxFormDepth     = 12
	maxPageOps       = 8 << 20 // operators, across forms
	maxPageGlyphs    = 2 << 20
	maxFormCacheSize = 64 << 20 // decoded form content kept per document
)

// gstate is the part of the graphics state text extraction follows.
type gstate struct {
	ctm      matrix
	font     *pdfFont
	fontSize float64
	tc, tw   float64
	th       float64 // horizontal scaling, 1 = 100%
	tl       float64
	rise     float64
}

// set applies one of the text state operators that take a number.
func (g *gstate) set(op string, v float64) {
	switch op {
	case "Tc":
		g.tc = v
	case "Tw":
		g.tw = v
	case "Tz":
		g.th = v / 100
	case "TL":
		g.tl = v
	case "Ts":
		g.rise = v
	}
}

// pdfDoc is one document being extracted: the fonts and forms its pages
// share, each loaded once.
type pdfDoc struct {
	mu        sync.Mutex
	fonts     map[string]*fontEntry
	forms     map[string]*formEntry
	formBytes int64
}

type fontEntry struct {
	once sync.Once
	f    *pdfFont
}

type formEntry struct {
	once    sync.Once
	content []byte
	err     error
	damaged bool
}

func newPDFDoc() *pdfDoc {
	return &pdfDoc{fonts: map[string]*fontEntry{}, forms: map[string]*formEntry{}}
}

// font returns the font object ref, loading it with get the first time.
func (d *pdfDoc) font(ref string, get func() pdf.Value) *pdfFont {
	e := entry(&d.mu, d.fonts, ref)
	e.once.Do(func() { e.f = safeLoadFont(get()) })
	return e.f
}

// entry returns the cache entry for key, adding an empty one if there is none.
func entry[T any](mu *sync.Mutex, cache map[string]*T, key string) *T {
	mu.Lock()
	defer mu.Unlock()
	e := cache[key]
	if e == nil {
		e = new(T)
		cache[key] = e
	}
	return e
}

// safeLoadFont loads a font; a font the library cannot read draws
// unmapped glyphs of estimated width.
func safeLoadFont(v pdf.Value) (f *pdfFont) {
	defer func() {
		if recover() != nil {
			f = &pdfFont{name: "(unreadable font)", size: 1}
		}
	}()
	return loadFont(v)
}

// formContent returns a form's decoded content, decoding it once per
// document while the cache has room.
func (d *pdfDoc) formContent(ref string, v pdf.Value) ([]byte, bool, error) {
	if ref == "" {
		return readStream(v, maxContentBytes)
	}
	e := entry(&d.mu, d.forms, ref)
	e.once.Do(func() {
		e.content, e.damaged, e.err = readStream(v, maxContentBytes)
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.formBytes+int64(len(e.content)) > maxFormCacheSize {
			delete(d.forms, ref) // too much to keep: later uses decode again
			return
		}
		d.formBytes += int64(len(e.content))
	})
	return e.content, e.damaged, e.err
}

// scope is a resource dictionary in use: a page's or a form's.
type scope struct {
	doc      *pdfDoc
	res      pdf.Value
	fontDict pdf.Value
	fontRefs map[string]string
	fonts    map[string]*pdfFont
	xobjDict pdf.Value
	xobjRefs map[string]string
	init     bool
}

func newScope(doc *pdfDoc, res pdf.Value) *scope {
	return &scope{doc: doc, res: res, fonts: map[string]*pdfFont{}}
}

func (s *scope) load() {
	if s.init {
		return
	}
	s.init = true
	s.fontDict = s.res.Key("Font")
	s.fontRefs = refNames(s.fontDict)
	s.xobjDict = s.res.Key("XObject")
	s.xobjRefs = refNames(s.xobjDict)
}

// font returns the font a Tf names.
func (s *scope) font(name string) *pdfFont {
	if f, ok := s.fonts[name]; ok {
		return f
	}
	s.load()
	var f *pdfFont
	if ref := s.fontRefs[name]; ref != "" {
		f = s.doc.font(ref, func() pdf.Value { return s.fontDict.Key(name) })
	} else if v := s.fontDict.Key(name); v.Kind() == pdf.Dict {
		f = safeLoadFont(v)
	}
	if f == nil {
		// Text in a font the page does not have is lost; say which.
		f = &pdfFont{name: "missing font /" + name, size: 1}
	}
	s.fonts[name] = f
	return f
}

// pageStats counts what a page's extraction dropped or repaired, for warnings.
type pageStats struct {
	glyphs    int
	unmapped  int
	byFont    map[string]int // unmapped glyphs by font name
	damaged   int            // content streams cut short or with unusable bytes
	formLoops int            // forms not drawn: cyclic or nested too deep
	truncated bool           // work limit reached; the rest of the page was not read
	formErrs  int            // forms whose content could not be decoded
}

// actualSpan is an open marked-content sequence; text is set when it
// carries /ActualText, which then replaces the glyphs drawn inside it.
type actualSpan struct {
	hasText bool
	text    string
	first   *glyph // copy of the first glyph drawn inside, for position
	orient  int
	end     float64 // furthest glyph end in first's frame
}

// interp runs the content of one page.
type interp struct {
	doc    *pdfDoc
	glyphs [4][]glyph // by reading direction: 0°, 90°, 180°, 270°
	st     pageStats
	ops    int
	active []string // forms being drawn, for cycle detection
	spans  []actualSpan
	actual int // open spans with ActualText
}

func newInterp(doc *pdfDoc) *interp {
	return &interp{doc: doc, st: pageStats{byFont: map[string]int{}}}
}

// run interprets content with the resources of sc, starting from g.
func (in *interp) run(content []byte, sc *scope, g gstate) {
	lx := psLexer{b: content}
	var stack []gstate
	var stk []psObj
	tm, tlm := identity, identity
	num := func(i int) float64 { return stk[i].num }
	// nums reports whether the operator got exactly n numeric operands,
	// the last n on the stack; stray extra operands are ignored.
	nums := func(n int) bool {
		if len(stk) < n {
			return false
		}
		stk = stk[len(stk)-n:]
		for _, o := range stk {
			if o.kind != psNum {
				return false
			}
		}
		return true
	}
	for {
		o, ok := lx.next()
		if !ok {
			break
		}
		if o.kind != psOp {
			if len(stk) < 64 {
				stk = append(stk, o)
			} else {
				lx.bad++
			}
			continue
		}
		in.ops++
		if in.ops > maxPageOps || in.total() > maxPageGlyphs {
			in.st.truncated = true
			break
		}
		switch o.str {
		case "q":
			if len(stack) < 256 {
				stack = append(stack, g)
			}
		case "Q":
			if n := len(stack); n > 0 {
				g = stack[n-1]
				stack = stack[:n-1]
			}
		case "cm":
			if nums(6) {
				if m, ok := matrixOf([]float64{num(0), num(1), num(2), num(3), num(4), num(5)}); ok {
					g.ctm = m.mul(g.ctm)
				}
			}
		case "BT":
			tm, tlm = identity, identity
		case "Tf":
			if len(stk) >= 2 && stk[len(stk)-2].kind == psName && stk[len(stk)-1].kind == psNum {
				g.font = sc.font(stk[len(stk)-2].str)
				g.fontSize = stk[len(stk)-1].num
			}
		case "Tc", "Tw", "Tz", "TL", "Ts":
			if nums(1) {
				g.set(o.str, num(0))
			}
		case "Td", "TD":
			if nums(2) {
				if o.str == "TD" {
					g.tl = -num(1)
				}
				tlm = matrix{1, 0, 0, 1, num(0), num(1)}.mul(tlm)
				tm = tlm
			}
		case "Tm":
			if nums(6) {
				if m, ok := matrixOf([]float64{num(0), num(1), num(2), num(3), num(4), num(5)}); ok {
					tm, tlm = m, m
				}
			}
		case "T*":
			tlm = matrix{1, 0, 0, 1, 0, -g.tl}.mul(tlm)
			tm = tlm
		case "Tj", "'", "\"":
			if len(stk) == 0 || stk[len(stk)-1].kind != psStr {
				break
			}
			s := stk[len(stk)-1].str
			if o.str == "\"" && len(stk) >= 3 {
				g.tw, g.tc = stk[len(stk)-3].num, stk[len(stk)-2].num
			}
			if o.str != "Tj" {
				tlm = matrix{1, 0, 0, 1, 0, -g.tl}.mul(tlm)
				tm = tlm
			}
			in.show(s, &g, &tm)
		case "TJ":
			if len(stk) == 0 || stk[len(stk)-1].kind != psArray {
				break
			}
			for _, e := range stk[len(stk)-1].arr {
				switch e.kind {
				case psStr:
					in.show(e.str, &g, &tm)
				case psNum:
					in.adjust(e.num, &g, &tm)
				}
			}
		case "Do":
			if len(stk) > 0 && stk[len(stk)-1].kind == psName {
				in.form(stk[len(stk)-1].str, sc, g)
			}
		case "BMC":
			in.spans = append(in.spans, actualSpan{})
		case "BDC":
			in.beginSpan(stk, sc)
		case "EMC":
			in.endSpan()
		case "BI":
			// Inline image: skip its dictionary and data.
			for {
				p, ok := lx.next()
				if !ok || p.kind == psOp && p.str == "ID" {
					break
				}
			}
			lx.skipInlineImage()
		}
		stk = stk[:0]
	}
	if lx.bad > 0 {
		in.st.damaged++
	}
}

func (in *interp) total() int {
	return len(in.glyphs[0]) + len(in.glyphs[1]) + len(in.glyphs[2]) + len(in.glyphs[3])
}

// adjust applies a TJ displacement (thousandths of an em, positive moves back).
func (in *interp) adjust(n float64, g *gstate, tm *matrix) {
	if g.font != nil && g.font.vertical {
		*tm = matrix{1, 0, 0, 1, 0, -n / 1000 * g.fontSize}.mul(*tm)
		return
	}
	*tm = matrix{1, 0, 0, 1, -n / 1000 * g.fontSize * g.th, 0}.mul(*tm)
}

// show draws a string: one glyph per code, each placed at the current
// text position, which then advances by the code's width.
func (in *interp) show(s string, g *gstate, tm *matrix) {
	f := g.font
	if f == nil || !finite(g.fontSize, g.th, g.tc, g.tw, g.rise) {
		return
	}
	m := tm.mul(g.ctm)
	// Glyph space to device: the baseline runs along (bx, by) per unit of
	// text-space advance; (ux, uy) is one em up.
	fs := g.fontSize
	ux, uy := fs*m[2]*f.size, fs*m[3]*f.size
	size := math.Hypot(ux, uy)
	// Reading direction: along the baseline, or down for vertical fonts.
	bx, by := fs*g.th*m[0], fs*g.th*m[1]
	if f.vertical {
		bx, by = -m[2]*fs, -m[3]*fs
	}
	along := math.Hypot(m[0], m[1]) // device length of one unit of text-space advance
	var tx, ty float64              // advance so far, in text space
	f.decode(s, func(text string, w float64, space, mapped bool) {
		in.st.glyphs++
		if !mapped {
			in.st.unmapped++
			in.st.byFont[f.label()]++
		}
		var adv, dx, dy float64
		if f.vertical {
			dy = -w * fs
		} else {
			adv = w * fs
			dx = (adv + g.tc) * g.th
			if space {
				dx += g.tw * g.th
			}
		}
		if text != "" && size > 0.01 {
			// Origin: the text-space point (tx, ty + rise).
			ox := tx*m[0] + (ty+g.rise)*m[2] + m[4]
			oy := tx*m[1] + (ty+g.rise)*m[3] + m[5]
			// The glyph's own width: character spacing shows as a gap (or,
			// negative, as overlap), since a glyph may be placed on its own
			// with a large Tc still set.
			extent := (adv + min(g.tc, 0)) * g.th * along
			if space {
				extent += g.tw * g.th * along
			}
			if f.vertical {
				extent = w * size
			}
			in.emit(text, ox, oy, bx, by, extent, size)
		}
		tx += dx
		ty += dy
	})
	*tm = matrix{1, 0, 0, 1, tx, ty}.mul(*tm)
}

// emit records one glyph, turned into the upright frame of its reading
// direction.
func (in *interp) emit(text string, x, y, bx, by, w, size float64) {
	s, _ := glyphText(text)
	if s == "" || !finite(x, y, w, size) {
		return
	}
	orient := 0
	if bx != 0 || by != 0 {
		a := math.Atan2(by, bx) / (math.Pi / 2) // quarter turns
		orient = (int(math.Round(a)) + 4) % 4
	}
	switch orient {
	case 1:
		x, y = y, -x
	case 2:
		x, y = -x, -y
	case 3:
		x, y = -y, x
	}
	gl := glyph{s: s, x: x, y: y, w: w, size: size}
	if in.actual > 0 {
		// Inside /ActualText: note where the span's glyphs are, and drop them.
		sp := &in.spans[in.outerActual()]
		if sp.first == nil {
			sp.first, sp.orient = &gl, orient
			sp.end = x + w
		} else if orient == sp.orient {
			sp.end = max(sp.end, x+w)
		}
		return
	}
	in.glyphs[orient] = append(in.glyphs[orient], gl)
}

// outerActual is the index of the outermost span with ActualText.
func (in *interp) outerActual() int {
	for i, sp := range in.spans {
		if sp.hasText {
			return i
		}
	}
	return len(in.spans) - 1
}

// beginSpan opens a marked-content sequence (BDC tag properties).
func (in *interp) beginSpan(stk []psObj, sc *scope) {
	sp := actualSpan{}
	if len(stk) >= 2 {
		props := stk[len(stk)-1]
		switch props.kind {
		case psDict:
			if at, ok := props.key("ActualText"); ok && at.kind == psStr {
				sp.hasText, sp.text = true, textString(at.str)
			}
		case psName:
			// Properties named in the resources.
			if v := sc.res.Key("Properties").Key(props.str).Key("ActualText"); v.Kind() == pdf.String {
				sp.hasText, sp.text = true, textString(v.RawString())
			}
		}
	}
	if len(in.spans) >= 256 {
		sp.hasText = false // nesting this deep is noise; keep the glyphs
	}
	if sp.hasText {
		in.actual++
	}
	in.spans = append(in.spans, sp)
}

// endSpan closes a marked-content sequence; the outermost span with
// ActualText puts its text where its first glyph was, spanning them all.
func (in *interp) endSpan() {
	n := len(in.spans)
	if n == 0 {
		return
	}
	sp := in.spans[n-1]
	in.spans = in.spans[:n-1]
	if !sp.hasText {
		return
	}
	in.actual--
	if in.actual > 0 || sp.first == nil {
		return // an inner span's glyphs belong to the outer span's text
	}
	s, _ := glyphText(sp.text)
	if s == "" {
		return
	}
	g := *sp.first
	g.s, g.w = s, max(sp.end-g.x, 0)
	in.glyphs[sp.orient] = append(in.glyphs[sp.orient], g)
}

// closeSpans ends the spans a page left open, so text inside an
// /ActualText span without its EMC is not lost.
func (in *interp) closeSpans() {
	for len(in.spans) > 0 {
		in.endSpan()
	}
}

// form draws the XObject name if it is a form: in place, in its own
// resources (or the caller's), under its matrix.
func (in *interp) form(name string, sc *scope, g gstate) {
	sc.load()
	ref := sc.xobjRefs[name]
	v := sc.xobjDict.Key(name)
	if v.Kind() != pdf.Stream || v.Key("Subtype").Name() != "Form" {
		return
	}
	if len(in.active) >= maxFormDepth {
		in.st.formLoops++
		return
	}
	for _, a := range in.active {
		if a == ref && ref != "" {
			in.st.formLoops++
			return
		}
	}
	content, damaged, err := in.doc.formContent(ref, v)
	if err != nil {
		in.st.formErrs++
		return
	}
	if damaged {
		in.st.damaged++
	}
	if m, ok := matrixOf(numbers(v.Key("Matrix"), 6)); ok {
		g.ctm = m.mul(g.ctm)
	}
	inner := sc
	if res := v.Key("Resources"); res.Kind() == pdf.Dict {
		inner = newScope(in.doc, res)
	}
	in.active = append(in.active, ref)
	in.run(content, inner, g)
	in.active = in.active[:len(in.active)-1]
}
