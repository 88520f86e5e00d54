package loader

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docgraph/docgraph/loader/internal/afm"
)

// Layout thresholds, in ems of the glyphs' font size.
const (
	wordGap     = 0.15 // a horizontal gap at least this wide between glyphs is a word space
	kernSlack   = 0.25 // glyphs may overlap this much and still be one run (negative kerning)
	baselineTol = 0.1  // glyphs of one run share a baseline within this
	lineTol     = 0.5  // runs this close vertically (in the larger size) are one line: sub/superscripts
	dupTol      = 0.1  // the same glyph drawn again within this distance is a fake-bold duplicate
	paraFactor  = 1.3  // a baseline step this much above the page's usual leading is a paragraph break
	gutterMin   = 0.6  // the narrowest white gap between two columns
)

// glyph is one shown character (or ligature) in an upright frame: x grows
// along the line, y up the page, (x, y) is the origin on the baseline.
type glyph struct {
	s    string
	x, y float64
	w    float64 // advance width
	size float64
}

// textRun is a stretch of glyphs drawn one after another without a word gap.
type textRun struct {
	parts  []string // glyph texts in drawing order
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

// layoutPage rebuilds a page's text from positioned glyphs, given by
// reading direction (upright, 90°, 180°, 270°): lines by baseline, words
// by gaps, paragraphs by vertical distance, columns by white gutters.
// Upright text comes first; text set otherwise (rotated margin notes,
// upside-down labels) follows as its own blocks.
func layoutPage(groups [4][]glyph) string {
	var blocks []string
	for _, o := range []int{0, 2, 1, 3} {
		if b := layoutBlock(groups[o]); b != "" {
			blocks = append(blocks, b)
		}
	}
	return strings.Join(blocks, "\n\n")
}

// glyphText cleans one glyph's string: control characters and invisible
// format characters go, tabs and no-break spaces become spaces, Latin
// ligatures are spelled out so words match. unmapped reports a U+FFFD,
// which is dropped too.
func glyphText(s string) (out string, unmapped bool) {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s, false
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			unmapped = true
		case r == '\t' || r == '\u00A0' || r == '\u2007' || r == '\u202F':
			b.WriteByte(' ')
		case r == softHyphen:
			b.WriteRune(r) // kept until lines are joined; see paragraphs
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

// estimateWidth guesses a string's advance in ems from Helvetica or Times
// metrics, for fonts that give no width for a code.
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

// layoutBlock turns glyphs of one orientation into lines and paragraphs,
// reading columns one after the other where the page has them.
func layoutBlock(gs []glyph) string {
	gs = dropDuplicates(composeAccents(gs))
	if len(gs) == 0 {
		return ""
	}
	var sections []string
	for _, lines := range columnOrder(groupLines(buildRuns(gs)), 0) {
		if s := paragraphs(lines); s != "" {
			sections = append(sections, s)
		}
	}
	return strings.Join(sections, "\n\n")
}

// softHyphen marks where a word was broken at the end of a line by a
// hyphenation program: the two halves are one word.
const softHyphen = '\u00AD'

// paragraphs joins lines top to bottom, with a blank line where the
// baseline step or the font size says a new paragraph begins. A word
// hyphenated across two lines of a paragraph is joined again: a line
// ending in a soft hyphen, or in letter and hyphen before a line that
// starts in lower case.
func paragraphs(lines []*textLine) string {
	var b strings.Builder
	var prev *textLine
	step := usualLeading(lines)
	soft := false // the previous line ended in a soft hyphen
	for _, ln := range lines {
		if ln.text == "" {
			continue
		}
		if prev != nil {
			d := (prev.y - ln.y) / max(prev.size, ln.size)
			resized := max(prev.size, ln.size) > 1.2*min(prev.size, ln.size)
			newPara := (d > paraFactor*step && d > 1.2) || resized || d < -lineTol
			switch {
			case soft:
			case !newPara && hyphenated(b.String(), ln.text):
				s := strings.TrimSuffix(strings.TrimSuffix(b.String(), "-"), "‐")
				b.Reset()
				b.WriteString(s)
			case newPara:
				b.WriteString("\n\n")
			default:
				b.WriteByte('\n')
			}
		}
		text, ends := strings.CutSuffix(ln.text, string(softHyphen))
		b.WriteString(strings.ReplaceAll(text, string(softHyphen), ""))
		soft = ends
		prev = ln
	}
	return b.String()
}

// hyphenated reports whether text so far ends in a word broken by a
// hyphen that next continues: a lower-case letter and a hyphen, then a
// line starting with a lower-case letter.
func hyphenated(text, next string) bool {
	h, n := utf8.DecodeLastRuneInString(text)
	if h != '-' && h != '\u2010' {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(text[:len(text)-n])
	first, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLower(before) && unicode.IsLower(first)
}

// dropDuplicates removes glyphs drawn again on (nearly) the same spot, as
// producers do for fake bold or shadows. Distinct glyphs of the same letter
// ("ll") are a glyph width apart, far more than the tolerance.
//
// Glyphs are hashed into a grid of cells twice the tolerance wide, so a
// glyph's possible duplicates lie in at most four cells: its own and the
// neighbours on the sides it is nearest to.
func dropDuplicates(gs []glyph) []glyph {
	cells := make(map[uint64]int32, len(gs))
	next := make([]int32, 0, len(gs)) // chains of kept glyphs per cell, -1 ends
	kept := gs[:0:0]
	key := func(xb, yb int64) uint64 { return uint64(xb)<<32 ^ uint64(uint32(yb)) }
	for _, g := range gs {
		tol := dupTol * g.size
		fx, fy := g.x/(2*tol), g.y/(2*tol)
		xb, yb := int64(math.Floor(fx)), int64(math.Floor(fy))
		dx, dy := int64(1), int64(1)
		if fx-float64(xb) < 0.5 {
			dx = -1
		}
		if fy-float64(yb) < 0.5 {
			dy = -1
		}
		dup := false
	search:
		for _, c := range [4][2]int64{{xb, yb}, {xb + dx, yb}, {xb, yb + dy}, {xb + dx, yb + dy}} {
			i, ok := cells[key(c[0], c[1])]
			for ok && i >= 0 {
				k := kept[i]
				if k.s == g.s && math.Abs(k.x-g.x) < tol && math.Abs(k.y-g.y) < tol {
					dup = true
					break search
				}
				i = next[i]
			}
		}
		if dup {
			continue
		}
		k := key(xb, yb)
		head, ok := cells[k]
		if !ok {
			head = -1
		}
		cells[k] = int32(len(kept))
		next = append(next, head)
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
				cur.parts = append(cur.parts, g.s)
				cur.x1 = max(cur.x1, g.x+g.w)
				cur.chars += utf8.RuneCountInString(g.s)
				continue
			}
		}
		cur = &textRun{parts: []string{g.s}, x0: g.x, x1: g.x + g.w, y: g.y, size: g.size, chars: utf8.RuneCountInString(g.s)}
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
			if ln.y-r.y <= lineTol*max(ln.size, r.size) && !stacked(ln, r) {
				ln.runs = append(ln.runs, r)
				ln.size = max(ln.size, r.size)
				if r.chars > ln.chars && !blankRun(r) {
					ln.y, ln.chars = r.y, r.chars
				}
				continue
			}
		}
		lines = append(lines, &textLine{runs: []*textRun{r}, y: r.y, size: r.size, chars: r.chars})
	}
	for _, ln := range lines {
		sort.SliceStable(ln.runs, func(i, j int) bool { return ln.runs[i].x0 < ln.runs[j].x0 })
		ln.text = joinRuns(ln.runs)
	}
	// A line's baseline may have moved to its longest run; keep the order true.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].y > lines[j].y })
	return lines
}

// stacked reports whether run r sits under a run of the line a full line
// lower (in the size of the two runs): two short lines of a heading beside
// larger text, not a superscript or the raised A of the LaTeX logo.
func stacked(ln *textLine, r *textRun) bool {
	for _, o := range ln.runs {
		if math.Abs(o.y-r.y) < 0.8*max(o.size, r.size) {
			continue
		}
		overlap := min(o.x1, r.x1) - max(o.x0, r.x0)
		if overlap > 0.2*min(o.x1-o.x0, r.x1-r.x0) {
			return true
		}
	}
	return false
}

func blankRun(r *textRun) bool {
	for _, p := range r.parts {
		if strings.TrimSpace(p) != "" {
			return false
		}
	}
	return true
}

// joinRuns concatenates a line's runs (sorted left to right), with one
// space where the gap between them is word-sized, puts right-to-left
// scripts in logical order and drops dot leaders.
func joinRuns(runs []*textRun) string {
	glue := letterSpaced(runs)
	var items []string // glyph texts and spaces, left to right
	end := math.Inf(-1)
	var prev *textRun // the run that ends furthest right so far
	for i, r := range runs {
		// The gap is judged in the larger size of the two sides, so a
		// superscript set close after its base ("mc²") stays attached;
		// but a raised mark before text (a footnote's number) is apart.
		gap := r.x0 - end
		space := prev != nil && gap >= wordGap*max(r.size, prev.size) ||
			prev != nil && gap > 0.02*r.size && prev.size < 0.85*r.size && prev.y-r.y > 0.2*r.size
		if len(items) > 0 && space && !glue[i] && items[len(items)-1] != " " && !strings.HasPrefix(r.parts[0], " ") {
			items = append(items, " ")
		}
		items = append(items, r.parts...)
		if r.x1 >= end {
			end, prev = r.x1, r
		}
	}
	items = logicalOrder(items)
	return dropLeaders(strings.Join(strings.Fields(strings.Join(items, "")), " "))
}

// Letter-spaced text ("D e m o n s t r a t i o n"): a stretch of at
// least minSpacedRuns runs of one or two letters whose gaps are all about
// the same and narrow, narrower than any word space, is one word; a
// clearly wider gap inside it is still a word break.
const (
	minSpacedRuns = 4
	maxLetterGap  = 0.22 // ems; a word space is wider
)

// letterSpaced reports, for each run, whether the gap before it is
// letter spacing rather than a word space.
func letterSpaced(runs []*textRun) []bool {
	glue := make([]bool, len(runs))
	short := func(r *textRun) bool {
		if r.chars > 2 {
			return false
		}
		for _, p := range r.parts {
			for _, c := range p {
				if !unicode.IsLetter(c) {
					return false
				}
			}
		}
		return true
	}
	for i := 0; i < len(runs); {
		if !short(runs[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(runs) && short(runs[j]) && math.Abs(runs[j].size-runs[i].size) < 0.1*runs[i].size {
			j++
		}
		if j-i >= minSpacedRuns {
			size := runs[i].size
			gmin := math.Inf(1)
			for k := i + 1; k < j; k++ {
				gmin = min(gmin, runs[k].x0-runs[k-1].x1)
			}
			limit := min(max(1.3*gmin, gmin+0.05*size), maxLetterGap*size)
			for k := i + 1; k < j; k++ {
				glue[k] = runs[k].x0-runs[k-1].x1 <= limit
			}
		}
		i = j
	}
	return glue
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
			if d := (prev.y - ln.y) / max(prev.size, ln.size); d > 0 {
				steps = append(steps, d)
			}
		}
		prev = ln
	}
	if len(steps) < 3 {
		return 1.2
	}
	slices.Sort(steps)
	return steps[len(steps)/4]
}

// dropLeaders removes dot leaders (". . . . ." or "......", as tables of
// contents draw between an entry and its page number) from a line,
// leaving one space. Three dots are an ellipsis and stay.
func dropLeaders(s string) string {
	if !strings.ContainsAny(s, ".·⋅∙…:") {
		return s
	}
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); {
		if !isLeader(rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		// A stretch of leader characters and single spaces.
		j, dots, colons, spaced := i, 0, 0, 0
		for j < len(rs) && (isLeader(rs[j]) || rs[j] == ' ' && j+1 < len(rs) && isLeader(rs[j+1])) {
			switch rs[j] {
			case ' ':
				spaced++
			case ':':
				colons++
			case '…':
				dots += 3
			default:
				dots++
			}
			j++
		}
		// Colons lead only when spaced out (": : : :"), never "::" in code.
		if dots >= 4 && colons == 0 || colons >= 4 && dots == 0 && spaced >= colons-1 {
			if b.Len() > 0 && j < len(rs) {
				b.WriteByte(' ')
			}
			for j < len(rs) && rs[j] == ' ' {
				j++
			}
			i = j
			continue
		}
		b.WriteString(string(rs[i:j]))
		i = j
	}
	return strings.TrimSpace(strings.Join(strings.Fields(b.String()), " "))
}

func isLeader(r rune) bool {
	switch r {
	case '.', '·', '⋅', '∙', '…', ':':
		return true
	}
	return false
}

// logicalOrder turns a line's glyph texts from visual (left to right)
// order into reading order when it holds right-to-left script (Hebrew,
// Arabic): a line whose letters are mostly right-to-left is read from the
// right, with left-to-right runs (Latin words, numbers) kept as they are;
// in a left-to-right line only the right-to-left runs are reversed. A
// simplification of the Unicode bidirectional algorithm that is enough
// for lines of text.
func logicalOrder(items []string) []string {
	rtl, ltr := 0, 0
	dirs := make([]int8, len(items)) // 1 right-to-left, -1 left-to-right, 0 neutral
	for i, s := range items {
		d, letter := direction(s)
		dirs[i] = d
		switch {
		case d == 1:
			rtl++
		case d == -1 && letter:
			ltr++
		}
	}
	if rtl == 0 {
		return items
	}
	out := slices.Clone(items)
	if rtl > ltr {
		// Read from the right; then put left-to-right stretches (Latin
		// words, numbers, with the neutrals between their strong ends)
		// back in their own order.
		slices.Reverse(out)
		slices.Reverse(dirs)
		reverseRuns(out, dirs, -1)
		for i, s := range out {
			if dirs[i] != -1 {
				out[i] = mirror(s)
			}
		}
		return out
	}
	reverseRuns(out, dirs, 1)
	return out
}

// reverseRuns reverses, in place, each maximal stretch from one item of
// direction d to the last following item of direction d with only
// neutral items between them.
func reverseRuns(items []string, dirs []int8, d int8) {
	for i := 0; i < len(items); {
		if dirs[i] != d {
			i++
			continue
		}
		last := i
		for j := i + 1; j < len(items) && dirs[j] != -d; j++ {
			if dirs[j] == d {
				last = j
			}
		}
		if d == 1 {
			for k := i; k <= last; k++ {
				items[k] = mirror(items[k])
			}
		}
		slices.Reverse(items[i : last+1])
		slices.Reverse(dirs[i : last+1])
		i = last + 1
	}
}

// direction classifies a glyph text by its first strong character: 1
// right-to-left, -1 left-to-right (letter reports whether that was a
// letter rather than a digit: numbers keep their order inside
// right-to-left text but do not make a line left-to-right), 0 neutral.
func direction(s string) (dir int8, letter bool) {
	for _, r := range s {
		switch {
		case r >= 0x0590 && r <= 0x08FF, r >= 0xFB1D && r <= 0xFDFF, r >= 0xFE70 && r <= 0xFEFF:
			if unicode.IsLetter(r) {
				return 1, true
			}
		case unicode.IsLetter(r):
			return -1, true
		case unicode.IsDigit(r):
			return -1, false
		}
	}
	return 0, false
}

// mirror swaps paired brackets, which right-to-left text shows mirrored.
func mirror(s string) string {
	switch s {
	case "(":
		return ")"
	case ")":
		return "("
	case "[":
		return "]"
	case "]":
		return "["
	case "{":
		return "}"
	case "}":
		return "{"
	case "<":
		return ">"
	case ">":
		return "<"
	}
	return s
}
