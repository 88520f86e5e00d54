package pdfgen

import (
	"fmt"
	"strings"

	"github.com/docgraph/docgraph/loader/internal/afm"
)

// Style is how a line's words and spaces are put into the content stream.
// The styles mirror what real producers do, and most of them defeat an
// extractor that simply concatenates strings.
type Style int

const (
	// Plain shows the line with one Tj and real space characters.
	Plain Style = iota
	// Kerned shows the line with one TJ: each word a string with kerning
	// numbers inside it, the gaps between words made by displacement only.
	Kerned
	// Words places each word with its own Tm and no space characters,
	// last word first, and the line is drawn after the rest of the page.
	Words
	// Justified stretches real spaces with Tw to fill the measure.
	Justified
	// DoubleDrawn draws the line twice, 0.25 pt apart: poor man's bold.
	DoubleDrawn
	// DoubleGlyphs draws every glyph twice, 0.2 pt apart.
	DoubleGlyphs
	// Mixed cycles Plain, Kerned, Words and Justified line by line.
	Mixed
)

var mixed = []Style{Plain, Kerned, Words, Justified}

// Block is a paragraph or heading.
type Block struct {
	Text  string
	Font  afm.Font
	Size  float64
	Style Style
}

// Layout is the page geometry for Typeset. Zero fields take defaults.
type Layout struct {
	Margin  float64 // all four sides, default 72
	Leading float64 // baseline distance as a multiple of the size, default 1.25
	ParaGap float64 // extra space after a block as a multiple of its size, default 0.9
}

// kerns are TJ adjustments (thousandths of an em, positive moves left)
// applied between these letter pairs by the Kerned style.
var kerns = map[string]int{"AV": 70, "Wa": 40, "To": 80, "Yo": 90, "r,": 50, "y.": 60, "ev": 25, "ov": 15, "ow": 15, "we": 15, "Te": 70, "rt": -12}

// Typeset flows blocks onto new pages of d and returns the text an ideal
// extractor would recover: lines joined by "\n", blocks and pages by "\n\n".
func (d *Doc) Typeset(l Layout, blocks []Block) string {
	if l.Margin == 0 {
		l.Margin = 72
	}
	if l.Leading == 0 {
		l.Leading = 1.25
	}
	if l.ParaGap == 0 {
		l.ParaGap = 0.9
	}
	var page *Page
	var deferred []string // Words lines, emitted after the rest of the page
	flush := func() {
		if page != nil {
			for _, op := range deferred {
				page.Op("%s", op)
			}
		}
		deferred = nil
	}
	var y float64
	var out strings.Builder
	lineNo := 0
	for bi, b := range blocks {
		lines := wrap(b, 612-2*l.Margin)
		for li, words := range lines {
			sep := "\n"
			if li == 0 {
				sep = "\n\n"
			}
			if page == nil || y-b.Size*l.Leading < l.Margin {
				flush()
				page = d.AddPage()
				y = page.Height - l.Margin
				sep = "\n\n"
			}
			if bi > 0 || li > 0 {
				out.WriteString(sep)
			}
			y -= b.Size * l.Leading
			style := b.Style
			if style == Mixed {
				style = mixed[lineNo%len(mixed)]
			}
			if style == Justified && li == len(lines)-1 {
				style = Plain // the last line of a paragraph is never stretched
			}
			op := showLine(b, style, l.Margin, y, words, 612-2*l.Margin)
			if style == Words {
				deferred = append(deferred, op)
			} else {
				page.Op("%s", op)
			}
			out.WriteString(strings.Join(words, " "))
			lineNo++
		}
		y -= b.Size * l.ParaGap
	}
	flush()
	return out.String()
}

// wrap breaks b's text into lines of words no wider than measure.
func wrap(b Block, measure float64) [][]string {
	space := TextWidth(b.Font, b.Size, " ")
	var lines [][]string
	var cur []string
	width := 0.0
	for _, w := range strings.Fields(b.Text) {
		ww := TextWidth(b.Font, b.Size, w)
		if len(cur) > 0 && width+space+ww > measure {
			lines = append(lines, cur)
			cur, width = nil, 0
		}
		if len(cur) > 0 {
			width += space
		}
		cur = append(cur, w)
		width += ww
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}

// showLine returns the operators that draw one line in the given style.
func showLine(b Block, style Style, x, y float64, words []string, measure float64) string {
	res, size := Res(b.Font), num(b.Size)
	line := strings.Join(words, " ")
	var o strings.Builder
	switch style {
	case Plain:
		fmt.Fprintf(&o, "BT /%s %s Tf %s %s Td %s Tj ET", res, size, num(x), num(y), Str(line))
	case Justified:
		slack := measure - TextWidth(b.Font, b.Size, line)
		tw := 0.0
		if len(words) > 1 {
			tw = slack / float64(len(words)-1)
		}
		fmt.Fprintf(&o, "BT /%s %s Tf %s Tw %s %s Td %s Tj 0 Tw ET", res, size, num(tw), num(x), num(y), Str(line))
	case Kerned:
		fmt.Fprintf(&o, "BT /%s %s Tf %s %s Td [", res, size, num(x), num(y))
		spaceEm, _ := b.Font.Width(' ')
		for i, w := range words {
			if i > 0 {
				// Vary the gap like justified text does: 0.25 em to 0.33 em.
				fmt.Fprintf(&o, " %d ", -(spaceEm - 28 + (i*17)%80))
			}
			o.WriteString(kernedWord(w))
		}
		o.WriteString("] TJ ET")
	case Words:
		pos := x
		var parts []string
		for _, w := range words {
			parts = append(parts, fmt.Sprintf("BT /%s %s Tf 1 0 0 1 %s %s Tm %s Tj ET", res, size, num(pos), num(y), Str(w)))
			pos += TextWidth(b.Font, b.Size, w+" ")
		}
		for i := len(parts) - 1; i >= 0; i-- {
			o.WriteString(parts[i])
			if i > 0 {
				o.WriteString("\n")
			}
		}
	case DoubleDrawn:
		fmt.Fprintf(&o, "BT /%s %s Tf %s %s Td %s Tj ET\n", res, size, num(x), num(y), Str(line))
		fmt.Fprintf(&o, "BT 2 Tr /%s %s Tf %s %s Td %s Tj 0 Tr ET", res, size, num(x+0.25), num(y), Str(line))
	case DoubleGlyphs:
		fmt.Fprintf(&o, "BT /%s %s Tf", res, size)
		pos := x
		for _, r := range line {
			s := string(r)
			fmt.Fprintf(&o, " 1 0 0 1 %s %s Tm %s Tj 1 0 0 1 %s %s Tm %s Tj", num(pos), num(y), Str(s), num(pos+0.2), num(y), Str(s))
			pos += TextWidth(b.Font, b.Size, s)
		}
		o.WriteString(" ET")
	default:
		panic(fmt.Sprintf("pdfgen: style %d cannot draw a single line", style))
	}
	return o.String()
}

// kernedWord is a TJ fragment for one word: the word split into strings
// at kerning pairs, with a small loosening inside long words as well.
func kernedWord(w string) string {
	runes := []rune(w)
	var o strings.Builder
	start := 0
	for i := 1; i < len(runes); i++ {
		k, ok := kerns[string(runes[i-1:i+1])]
		if !ok && i == 3 && len(runes) > 6 {
			k, ok = -10, true
		}
		if ok {
			fmt.Fprintf(&o, "%s %d ", Str(string(runes[start:i])), k)
			start = i
		}
	}
	o.WriteString(Str(string(runes[start:])))
	return o.String()
}
