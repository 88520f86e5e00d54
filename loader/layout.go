package loader

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"docgraph/loader/internal/afm"
)

// Layout thresholds, in ems of the glyphs' font size.
const (
	wordGap     = 0.15 // a horizontal gap at least this wide between glyphs is a word space
	kernSlack   = 0.25 // glyphs may overlap this much and still be one run (negative kerning)
	baselineTol = 0.1  // glyphs of one run share a baseline within this
	lineTol     = 0.4  // runs this close vertically (in the larger size) are one line: sub/superscripts
	dupTol      = 0.1  // the same glyph drawn again within this distance is a fake-bold duplicate
	chainTol    = 0.5  // kerning inside a zero-width string stays below this; see fixZeroWidths
	paraFactor  = 1.3  // a baseline step this much above the page's usual leading is a paragraph break
)

// glyph is one shown character in an upright frame: x grows along the
// line, y up the page, (x, y) is the origin on the baseline.
type glyph struct {
	s    string
	font string
	x, y float64
	w    float64 // advance width
	size float64
	// zero: the library reported no width, so it did not advance past this
	// glyph either; w is then the font's width if known, else 0 until
	// fixZeroWidths estimates it. moved: the text position was set right
	// before this glyph.
	zero, moved bool
}

// textRun is a stretch of glyphs drawn one after another without a word gap.
type textRun struct {
	text   strings.Builder
	x0, x1 float64
	y      float64
	size   float64
	chars  int
}

type textLine struct {
	runs  []*textRun
	y     float64 // baseline of the line's longest run
	size  float64 // largest font size on the line
	chars int     // characters in the run that set y
	text  string
}

// pageStats counts what layout dropped, for warnings.
type pageStats struct {
	glyphs   int
	unmapped int // glyphs with no Unicode mapping (U+FFFD)
}

// layoutPage rebuilds a page's text from positioned glyphs: lines by
// baseline, words by gaps, paragraphs by vertical distance. Text not set
// upright (rotated margin notes, upside-down labels) follows as its own blocks.
//
// origins, when known (nil otherwise), says for each glyph whether the
// content stream set the text position just before it and what its width
// is if the library did not say; fixZeroWidths needs both.
func layoutPage(texts []pdf.Text, origins []glyphOrigin) (string, pageStats) {
	var st pageStats
	var upright, flipped []glyph
	var sideways []pdf.Text
	for i, t := range texts {
		s, unmapped := glyphText(t.S)
		st.glyphs++
		if unmapped {
			st.unmapped++
		}
		if s == "" || !finite(t.X, t.Y, t.W, t.FontSize) {
			continue
		}
		t.S = s
		g := glyph{s: s, font: t.Font, x: t.X, y: t.Y, w: t.W, size: t.FontSize, zero: t.W == 0}
		if origins != nil {
			g.moved = origins[i].moved
			if g.zero {
				g.w = origins[i].width / 1000 * t.FontSize
			}
		}
		switch {
		case t.FontSize >= 0.5:
			upright = append(upright, g)
		case t.FontSize <= -0.5: // rotated 180°: the same text seen from the other side
			g.x, g.y, g.w, g.size = -g.x, -g.y, -g.w, -g.size
			flipped = append(flipped, g)
		default: // rotated ±90°: the library reports neither size nor width
			sideways = append(sideways, t)
		}
	}
	var blocks []string
	fixZeroWidths(upright, origins == nil)
	fixZeroWidths(flipped, origins == nil)
	for _, gs := range [][]glyph{upright, flipped, turn(sideways, 90), turn(sideways, 270)} {
		if b := layoutBlock(gs); b != "" {
			blocks = append(blocks, b)
		}
	}
	return strings.Join(blocks, "\n\n"), st
}

// glyphText cleans one glyph's string: control characters (the library adds
// a "\n" glyph after every TJ) and invisible format characters go, tabs and
// no-break spaces become spaces, Latin ligatures are spelled out so words
// match. unmapped reports a U+FFFD, which is dropped too.
func glyphText(s string) (out string, unmapped bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			unmapped = true
		case r == '\t' || r == '\u00A0' || r == '\u2007' || r == '\u202F':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
		case r >= 0xFB00 && r <= 0xFB06:
			b.WriteString([]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}[r-0xFB00])
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), unmapped
}

func finite(fs ...float64) bool {
	for _, f := range fs {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e7 {
			return false
		}
	}
	return true
}

// fixZeroWidths repairs glyphs whose font has no width table the library
// understands (standard fonts without /Widths, and all CID fonts): for those
// it reports width 0 and does not advance between glyphs, so a whole string
// sits on one x and only kerning and character spacing move it. Such a glyph
// is placed after its predecessor's estimated width, plus that small raw
// movement, unless the content stream set the position right before it
// (Chrome, for one, places every glyph with its own Td), in which case the
// library's x is already right. guess says that is unknown (no replay, so
// moved is not set) and must be inferred from the positions.
func fixZeroWidths(gs []glyph, guess bool) {
	var prevRawX float64
	piled := false // the previous glyph sat on the same raw x as its own predecessor
	for i := range gs {
		g := &gs[i]
		if !g.zero {
			continue
		}
		rawX := g.x
		if i > 0 && gs[i-1].zero {
			p := gs[i-1]
			dx := rawX - prevRawX
			chained := !g.moved
			if guess {
				// Without a replay: glyphs piled on one x show the library's
				// zero-advance strings, where small jumps are kerning; a
				// lone glyph followed by a jump of half its width or more
				// was placed on its own.
				chained = dx < 0.5*p.w || (piled && dx < chainTol*g.size)
			}
			if chained && math.Abs(g.y-p.y) <= baselineTol*g.size && math.Abs(g.size-p.size) < 0.01*g.size {
				g.x = p.x + p.w + dx
			}
		}
		if g.w <= 0 {
			g.w = estimateWidth(g.font, g.s) * g.size
		}
		piled = i > 0 && gs[i-1].zero && rawX == prevRawX
		prevRawX = rawX
	}
}

// turn maps glyphs set at ±90° into an upright frame. Their reading
// direction is taken from their neighbours; their size, which the library
// does not report, from how far apart neighbours are.
func turn(texts []pdf.Text, angle int) []glyph {
	if len(texts) == 0 {
		return nil
	}
	dir := func(a, b pdf.Text) int {
		dx, dy := b.X-a.X, b.Y-a.Y
		if math.Abs(dy) > 3*math.Abs(dx) && math.Abs(dy) < 200 && dy != 0 {
			if dy > 0 {
				return 90
			}
			return 270
		}
		return 0
	}
	var gs []glyph
	var ratios []float64
	for i, t := range texts {
		o := 0
		if i+1 < len(texts) {
			o = dir(t, texts[i+1])
		}
		if o == 0 && i > 0 {
			o = dir(texts[i-1], t)
		}
		if o == 0 {
			o = 90
		}
		if o != angle {
			continue
		}
		g := glyph{s: t.S, font: t.Font, x: t.Y, y: -t.X}
		if angle == 270 {
			g.x, g.y = -t.Y, t.X
		}
		if n := len(gs); n > 0 {
			p := gs[n-1]
			if adv := g.x - p.x; adv > 0 && math.Abs(g.y-p.y) < 1 && p.s != " " {
				if em := estimateWidth(p.font, p.s); em > 0 {
					ratios = append(ratios, adv/em)
				}
			}
		}
		gs = append(gs, g)
	}
	size := 10.0
	if len(ratios) > 0 {
		slices.Sort(ratios)
		size = min(max(ratios[len(ratios)/2], 2), 200)
	}
	for i := range gs {
		gs[i].size = size
		gs[i].w = estimateWidth(gs[i].font, gs[i].s) * size
	}
	return gs
}

// estimateWidth guesses a string's advance in ems from Helvetica or Times
// metrics, for glyphs whose real width the library does not report.
func estimateWidth(font, s string) float64 {
	lower := strings.ToLower(font)
	mono := strings.Contains(lower, "courier") || strings.Contains(lower, "mono")
	table := afm.Helvetica
	if strings.Contains(lower, "times") || strings.Contains(lower, "roman") || strings.Contains(lower, "serif") && !strings.Contains(lower, "sans") {
		table = afm.TimesRoman
	}
	total := 0.0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r):
		case mono:
			total += 0.6
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			total += 1
		default:
			if w, ok := table.Width(r); ok {
				total += float64(w) / 1000
			} else if unicode.IsUpper(r) {
				total += 0.67
			} else {
				total += 0.5
			}
		}
	}
	return total
}

// layoutBlock turns glyphs of one orientation into lines and paragraphs.
func layoutBlock(gs []glyph) string {
	gs = dropDuplicates(gs)
	if len(gs) == 0 {
		return ""
	}
	lines := groupLines(buildRuns(gs))
	var b strings.Builder
	var prev *textLine
	step := usualLeading(lines)
	for _, ln := range lines {
		if ln.text == "" {
			continue
		}
		if prev != nil {
			b.WriteByte('\n')
			// A wide baseline step, or a change of font size (heading to
			// body), starts a new paragraph.
			d := (prev.y - ln.y) / max(prev.size, ln.size)
			resized := max(prev.size, ln.size) > 1.2*min(prev.size, ln.size)
			if (d > paraFactor*step && d > 1.2) || resized {
				b.WriteByte('\n')
			}
		}
		b.WriteString(ln.text)
		prev = ln
	}
	return b.String()
}

// dropDuplicates removes glyphs drawn again on (nearly) the same spot, as
// producers do for fake bold or shadows. Distinct glyphs of the same letter
// ("ll") are a glyph width apart, far more than the tolerance.
func dropDuplicates(gs []glyph) []glyph {
	type cell struct {
		s      string
		xb, yb int
	}
	seen := make(map[cell][]int)
	kept := gs[:0:0]
	for _, g := range gs {
		tol := dupTol * g.size
		xb, yb := int(math.Floor(g.x/tol)), int(math.Floor(g.y/tol))
		dup := false
	search:
		for dx := -1; dx <= 1; dx++ {
			for dy := -1; dy <= 1; dy++ {
				for _, i := range seen[cell{g.s, xb + dx, yb + dy}] {
					k := kept[i]
					if math.Abs(k.x-g.x) < tol && math.Abs(k.y-g.y) < tol {
						dup = true
						break search
					}
				}
			}
		}
		if dup {
			continue
		}
		c := cell{g.s, xb, yb}
		seen[c] = append(seen[c], len(kept))
		kept = append(kept, g)
	}
	return kept
}

// buildRuns joins glyphs, in drawing order, while each starts where the
// previous one ended on the same baseline (allowing for kerning).
func buildRuns(gs []glyph) []*textRun {
	var runs []*textRun
	var cur *textRun
	for _, g := range gs {
		if cur != nil {
			gap := g.x - cur.x1
			sameSize := math.Abs(g.size-cur.size) <= 0.2*cur.size
			if sameSize && math.Abs(g.y-cur.y) <= baselineTol*cur.size && gap >= -kernSlack*cur.size && gap < wordGap*cur.size {
				cur.text.WriteString(g.s)
				cur.x1 = max(cur.x1, g.x+g.w)
				cur.chars += utf8.RuneCountInString(g.s)
				continue
			}
		}
		cur = &textRun{x0: g.x, x1: g.x + g.w, y: g.y, size: g.size, chars: utf8.RuneCountInString(g.s)}
		cur.text.WriteString(g.s)
		runs = append(runs, cur)
	}
	return runs
}

// groupLines clusters runs by baseline, top of the page first, and sets
// each line's text from its runs in left-to-right order.
func groupLines(runs []*textRun) []*textLine {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].y > runs[j].y })
	var lines []*textLine
	for _, r := range runs {
		if n := len(lines); n > 0 {
			ln := lines[n-1]
			if ln.y-r.y <= lineTol*max(ln.size, r.size) {
				ln.runs = append(ln.runs, r)
				ln.size = max(ln.size, r.size)
				if strings.TrimSpace(r.text.String()) != "" && r.chars > ln.chars {
					ln.y, ln.chars = r.y, r.chars
				}
				continue
			}
		}
		lines = append(lines, &textLine{runs: []*textRun{r}, y: r.y, size: r.size, chars: r.chars})
	}
	for _, ln := range lines {
		ln.text = joinRuns(ln.runs)
	}
	// A line's baseline may have moved to its longest run; keep the order true.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].y > lines[j].y })
	return lines
}

// joinRuns concatenates a line's runs left to right, with one space where
// the gap between them is word-sized and neither side already has one.
func joinRuns(runs []*textRun) string {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].x0 < runs[j].x0 })
	var b strings.Builder
	end := math.Inf(-1)
	for _, r := range runs {
		t := r.text.String()
		if b.Len() > 0 && r.x0-end >= wordGap*r.size && !strings.HasSuffix(b.String(), " ") && !strings.HasPrefix(t, " ") {
			b.WriteByte(' ')
		}
		b.WriteString(t)
		end = max(end, r.x1)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// usualLeading is the page's ordinary baseline step in ems: the lower
// quartile of the steps between consecutive lines, each divided by the
// larger font size of the pair, so headings and paragraph gaps (the larger
// steps) do not count. With too few lines to tell it is a typical 1.2.
func usualLeading(lines []*textLine) float64 {
	var steps []float64
	var prev *textLine
	for _, ln := range lines {
		if ln.text == "" {
			continue
		}
		if prev != nil {
			steps = append(steps, (prev.y-ln.y)/max(prev.size, ln.size))
		}
		prev = ln
	}
	if len(steps) < 3 {
		return 1.2
	}
	slices.Sort(steps)
	return steps[len(steps)/4]
}
