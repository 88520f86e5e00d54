package loader

import (
	"math"
	"slices"
	"sort"
	"strings"
)

// Column detection. Lines are found across the whole page width, so on a
// two-column page each "line" holds a line of each column. Where a white
// gutter runs down the page between two stretches of text, the lines
// between full-width lines (titles, figures spanning both columns) are cut
// at the gutter and the left column is read before the right one.

const (
	minColumnLines   = 3    // a column has at least this many lines
	minColumnChars   = 4    // and this many characters per line on average: not a column of page numbers
	minColumnBalance = 0.35 // the narrower column is at least this share of the wider one's width
	maxGutterCover   = 0.5  // share of the lines beside a gutter that may cross it (full-width lines)
)

// columnOrder returns lines as sections to read one after another.
func columnOrder(lines []*textLine, depth int) [][]*textLine {
	if depth >= 3 || len(lines) < 2*minColumnLines {
		return [][]*textLine{lines}
	}
	x, ok := bestGutter(lines)
	if !ok {
		return [][]*textLine{lines}
	}
	var out [][]*textLine
	var plain, band []*textLine
	flushPlain := func() {
		if len(plain) == 0 {
			return
		}
		// Another part of the page may have its gutter elsewhere.
		out = append(out, columnOrder(plain, depth+1)...)
		plain = nil
	}
	flush := func() {
		if len(band) == 0 {
			return
		}
		head, body, tail := trimBand(band, x)
		plain = append(plain, head...)
		left, right := splitBand(body, x)
		if left == nil {
			plain = append(plain, body...)
		} else {
			flushPlain()
			out = append(out, columnOrder(left, depth+1)...)
			out = append(out, columnOrder(right, depth+1)...)
		}
		plain = append(plain, tail...)
		band = nil
	}
	for _, ln := range lines {
		if crosses(ln, x) {
			flush()
			plain = append(plain, ln)
			continue
		}
		band = append(band, ln)
	}
	flush()
	if len(out) == 0 {
		return [][]*textLine{lines}
	}
	flushPlain()
	return out
}

// bestGutter picks the x at which cutting the page's lines yields the most
// column lines. Candidates are the x ranges that the white gaps (an em or
// wider) inside several lines have in common, and the white stretch
// findGutter sees in the page's outline.
func bestGutter(lines []*textLine) (float64, bool) {
	type event struct {
		x     float64
		delta int
	}
	var events []event
	for _, ln := range lines {
		end := math.Inf(-1)
		for _, r := range ln.runs {
			if blankRun(r) {
				continue
			}
			if r.x0-end >= ln.size && !math.IsInf(end, -1) {
				events = append(events, event{end, 1}, event{r.x0, -1})
			}
			end = max(end, r.x1)
		}
	}
	sort.Slice(events, func(i, j int) bool {
		return events[i].x < events[j].x || events[i].x == events[j].x && events[i].delta < events[j].delta
	})
	type cand struct {
		x float64
		n int
	}
	var cands []cand
	n := 0
	for i, e := range events {
		n += e.delta
		if n >= minColumnLines && i+1 < len(events) && events[i+1].x > e.x {
			cands = append(cands, cand{(e.x + events[i+1].x) / 2, n})
		}
	}
	if x, ok := findGutter(lines); ok {
		cands = append(cands, cand{x, 1 << 30})
	}
	sort.Slice(cands, func(i, j int) bool {
		return cands[i].n > cands[j].n || cands[i].n == cands[j].n && cands[i].x < cands[j].x
	})
	// The best few, but not two within half an em of each other.
	bestX, best := 0.0, 0.0
	if len(cands) == 0 {
		return bestX, false
	}
	halfEm := 0.5 * medianSize(lines)
	var tried []float64
	for _, c := range cands {
		if len(tried) == 16 {
			break
		}
		if slices.ContainsFunc(tried, func(t float64) bool { return math.Abs(t-c.x) < halfEm }) {
			continue
		}
		tried = append(tried, c.x)
		if s := gutterScore(lines, c.x); s > best {
			bestX, best = c.x, s
		}
	}
	return bestX, best > 0
}

// medianSize is the median font size of lines (len(lines) > 0).
func medianSize(lines []*textLine) float64 {
	sizes := make([]float64, len(lines))
	for i, ln := range lines {
		sizes[i] = ln.size
	}
	slices.Sort(sizes)
	return sizes[len(sizes)/2]
}

// gutterScore rates a cut at x: the sum of columnsAt's scores over the
// bands of lines that do not cross x.
func gutterScore(lines []*textLine, x float64) float64 {
	score := 0.0
	start := 0
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) && !crosses(lines[i], x) {
			continue
		}
		if band := lines[start:i]; len(band) >= minColumnLines {
			if s, ok := columnsAt(band, x); ok {
				score += s
			}
		}
		start = i + 1
	}
	return score
}

// crosses reports whether a line has text over x, or words on both
// sides of x closer than a gutter is wide.
func crosses(ln *textLine, x float64) bool {
	leftEnd, rightStart := math.Inf(-1), math.Inf(1)
	for _, r := range ln.runs {
		if blankRun(r) {
			continue
		}
		if r.x0 < x && r.x1 > x {
			return true
		}
		if r.x1 <= x {
			leftEnd = max(leftEnd, r.x1)
		} else {
			rightStart = min(rightStart, r.x0)
		}
	}
	return rightStart-leftEnd < gutterMin*ln.size
}

// trimBand moves lines with text on one side only off the ends of a band
// when a wide vertical gap or another font size parts them from the rest:
// a heading after a two-column table of contents is not the end of its
// left column.
func trimBand(band []*textLine, x float64) (head, body, tail []*textLine) {
	if len(band) < 3 {
		return nil, band, nil
	}
	oneSided := func(ln *textLine) bool {
		l, r := false, false
		for _, run := range ln.runs {
			if blankRun(run) {
				continue
			}
			if (run.x0+run.x1)/2 < x {
				l = true
			} else {
				r = true
			}
		}
		return !(l && r)
	}
	var steps, sizes []float64
	for i, ln := range band {
		if i > 0 {
			steps = append(steps, (band[i-1].y-ln.y)/max(ln.size, 1e-3))
		}
		if !oneSided(ln) {
			sizes = append(sizes, ln.size)
		}
	}
	if len(sizes) == 0 {
		return nil, band, nil
	}
	slices.Sort(steps)
	slices.Sort(sizes)
	usual, size := steps[len(steps)/2], sizes[len(sizes)/2]
	apart := func(a, b *textLine) bool { return (a.y-b.y)/max(b.size, 1e-3) > 1.8*usual }
	odd := func(ln *textLine) bool { return math.Abs(ln.size-size) > 0.15*size }
	i, j := 0, len(band)
	for i < j-1 && oneSided(band[i]) && (apart(band[i], band[i+1]) || odd(band[i])) {
		i++
	}
	for j > i+1 && oneSided(band[j-1]) && (apart(band[j-2], band[j-1]) || odd(band[j-1])) {
		j--
	}
	return band[:i], band[i:j], band[j:]
}

// splitBand cuts a band of lines at x. It returns nil unless both sides
// look like columns of text (see columnsAt).
func splitBand(band []*textLine, x float64) (left, right []*textLine) {
	if _, ok := columnsAt(band, x); !ok {
		return nil, nil
	}
	for _, ln := range band {
		var l, r []*textRun
		for _, run := range ln.runs {
			if (run.x0+run.x1)/2 < x {
				l = append(l, run)
			} else {
				r = append(r, run)
			}
		}
		if nl := newLine(l); nl != nil {
			left = append(left, nl)
		}
		if nr := newLine(r); nr != nil {
			right = append(right, nr)
		}
	}
	return left, right
}

// columnsAt judges a cut of a band at x without building anything: both
// sides need minColumnLines lines of minColumnChars characters on
// average, and widths within minColumnBalance of each other (a column of
// section numbers beside titles is not a column). score is the shorter
// side's line count weighted by that balance.
func columnsAt(band []*textLine, x float64) (score float64, ok bool) {
	var lc, rc, lchars, rchars int
	llo, lhi, rlo, rhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, ln := range band {
		var nl, nr int
		for _, run := range ln.runs {
			if blankRun(run) {
				continue
			}
			if (run.x0+run.x1)/2 < x {
				nl += run.chars
				llo, lhi = min(llo, run.x0), max(lhi, run.x1)
			} else {
				nr += run.chars
				rlo, rhi = min(rlo, run.x0), max(rhi, run.x1)
			}
		}
		if nl > 0 {
			lc++
			lchars += nl
		}
		if nr > 0 {
			rc++
			rchars += nr
		}
	}
	if lc < minColumnLines || rc < minColumnLines || lchars < minColumnChars*lc || rchars < minColumnChars*rc {
		return 0, false
	}
	wl, wr := lhi-llo, rhi-rlo
	balance := min(wl, wr) / max(wl, wr, 1e-9)
	if balance < minColumnBalance {
		return 0, false
	}
	return float64(min(lc, rc)) * balance, true
}

// newLine makes a line of some of another line's runs (sorted left to right).
func newLine(runs []*textRun) *textLine {
	ln := &textLine{runs: runs}
	for _, r := range runs {
		ln.size = max(ln.size, r.size)
		if !blankRun(r) && r.chars > ln.chars {
			ln.y, ln.chars = r.y, r.chars
		}
	}
	if ln.chars == 0 {
		return nil
	}
	ln.text = joinRuns(runs)
	if strings.TrimSpace(ln.text) == "" {
		return nil
	}
	return ln
}

// findGutter looks for a vertical stretch of white between two columns: an
// x range that few lines cover while many lines have text on both sides of
// it (not necessarily the same lines: columns need not share baselines).
func findGutter(lines []*textLine) (float64, bool) {
	minX, maxX := math.Inf(1), math.Inf(-1)
	var sizes []float64
	for _, ln := range lines {
		for _, r := range ln.runs {
			if blankRun(r) {
				continue
			}
			minX, maxX = min(minX, r.x0), max(maxX, r.x1)
			sizes = append(sizes, r.size)
		}
	}
	if len(sizes) == 0 || !finite(minX, maxX) {
		return 0, false
	}
	slices.Sort(sizes)
	size := sizes[len(sizes)/2]
	bin := max(size/4, (maxX-minX)/4000, 1e-3)
	nb := int((maxX-minX)/bin) + 1
	if nb < 8 {
		return 0, false
	}
	cover := make([]int, nb)
	mark := make([]int, nb) // last line that marked a bin, so a line counts once
	for i, ln := range lines {
		for _, r := range ln.runs {
			if blankRun(r) {
				continue
			}
			a, b := int((r.x0-minX)/bin), min(int((r.x1-minX)/bin), nb-1)
			for k := max(a, 0); k <= b; k++ {
				if mark[k] != i+1 {
					mark[k] = i + 1
					cover[k]++
				}
			}
		}
	}
	leftPeak := make([]int, nb)
	rightPeak := make([]int, nb)
	for k := range nb {
		leftPeak[k] = cover[k]
		if k > 0 {
			leftPeak[k] = max(leftPeak[k], leftPeak[k-1])
		}
	}
	for k := nb - 1; k >= 0; k-- {
		rightPeak[k] = cover[k]
		if k < nb-1 {
			rightPeak[k] = max(rightPeak[k], rightPeak[k+1])
		}
	}
	bestX, bestScore, bestWidth := 0.0, 0, 0
	for k := 1; k < nb-1; {
		// A stretch of low cover, judged against the text on its sides.
		if leftPeak[k-1] < minColumnLines {
			k++
			continue
		}
		limit := int(maxGutterCover * float64(leftPeak[k-1]))
		if cover[k] > limit {
			k++
			continue
		}
		j, peak := k, 0
		for j < nb-1 && cover[j] <= limit {
			peak = max(peak, cover[j])
			j++
		}
		score := min(leftPeak[k-1], rightPeak[j])
		width := j - k
		if float64(width)*bin >= gutterMin*size && score >= minColumnLines && peak <= int(maxGutterCover*float64(score)) &&
			(score > bestScore || score == bestScore && width > bestWidth) {
			bestX, bestScore, bestWidth = minX+(float64(k+j)/2)*bin, score, width
		}
		k = j + 1
	}
	return bestX, bestScore > 0
}
