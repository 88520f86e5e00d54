package loader

import (
	"math"
	"slices"
	"strings"
)

// Column detection. Lines are found across the whole page width, so on a
// two-column page each "line" holds a line of each column. Where a white
// gutter runs down the page between two stretches of text, the lines
// between full-width lines (titles, figures spanning both columns) are cut
// at the gutter and the left column is read before the right one.

const (
	minColumnLines = 3 // a column has at least this many lines
	minColumnChars = 4 // and this many characters per line on average: not a column of page numbers
	maxGutterCover = 0.5 // share of the lines beside a gutter that may cross it (full-width lines)
)

// columnOrder returns lines as sections to read one after another.
func columnOrder(lines []*textLine, depth int) [][]*textLine {
	if depth >= 2 || len(lines) < 2*minColumnLines {
		return [][]*textLine{lines}
	}
	x, ok := findGutter(lines)
	if !ok {
		return [][]*textLine{lines}
	}
	var out [][]*textLine
	var plain, band []*textLine
	flush := func() {
		if len(band) == 0 {
			return
		}
		left, right := splitBand(band, x)
		if left == nil {
			plain = append(plain, band...)
		} else {
			if len(plain) > 0 {
				out = append(out, plain)
				plain = nil
			}
			out = append(out, columnOrder(left, depth+1)...)
			out = append(out, columnOrder(right, depth+1)...)
		}
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
	if len(plain) > 0 {
		out = append(out, plain)
	}
	return out
}

// crosses reports whether a line has text over x.
func crosses(ln *textLine, x float64) bool {
	for _, r := range ln.runs {
		if r.x0 < x && r.x1 > x && !blankRun(r) {
			return true
		}
	}
	return false
}

// splitBand cuts a band of lines at x. It returns nil unless both sides
// look like columns of text.
func splitBand(band []*textLine, x float64) (left, right []*textLine) {
	var lc, rc, lchars, rchars int
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
			lc++
			lchars += len([]rune(nl.text))
		}
		if nr := newLine(r); nr != nil {
			right = append(right, nr)
			rc++
			rchars += len([]rune(nr.text))
		}
	}
	if lc < minColumnLines || rc < minColumnLines || lchars < minColumnChars*lc || rchars < minColumnChars*rc {
		return nil, nil
	}
	return left, right
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
