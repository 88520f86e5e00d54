package loader

import (
	"math"
	"unicode/utf8"
)

// composeAccents joins accents drawn over letters as separate glyphs (TeX
// builds á from ´ and a this way) into the accented letter: an accent
// glyph whose centre lies over the glyph drawn just before or after it
// becomes part of that letter. Accents over nothing stay as they are.
func composeAccents(gs []glyph) []glyph {
	out := gs[:0:0]
	skip := -1
	for i := range gs {
		if i == skip {
			continue
		}
		g := gs[i]
		mark, ok := accentMark(g.s)
		if !ok {
			out = append(out, g)
			continue
		}
		center := g.x + g.w/2
		over := func(b glyph) bool {
			return b.x <= center && center <= b.x+b.w && b.size > 0 && math.Abs(b.size-g.size) <= 0.3*b.size &&
				g.y-b.y > -0.3*b.size && g.y-b.y < 1.2*b.size
		}
		if i+1 < len(gs) && over(gs[i+1]) {
			if c, ok := compose(gs[i+1].s, mark); ok {
				b := gs[i+1]
				b.s = c
				out = append(out, b)
				skip = i + 1
				continue
			}
		}
		if n := len(out); n > 0 && over(out[n-1]) {
			if c, ok := compose(out[n-1].s, mark); ok {
				out[n-1].s = c
				continue
			}
		}
		out = append(out, g)
	}
	return out
}

// accentMark is the combining mark for a glyph that is a lone spacing accent.
func accentMark(s string) (rune, bool) {
	r, n := utf8.DecodeRuneInString(s)
	if n != len(s) {
		return 0, false
	}
	m, ok := combining[r]
	return m, ok
}

// compose puts a combining mark on a one-letter glyph text.
func compose(base string, mark rune) (string, bool) {
	r, n := utf8.DecodeRuneInString(base)
	if n != len(base) {
		return "", false
	}
	if r == 'ı' {
		r = 'i' // TeX puts accents on a dotless i
	}
	if c, ok := composed[[2]rune{r, mark}]; ok {
		return string(c), true
	}
	return "", false
}
