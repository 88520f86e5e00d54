// Package cjk recognises Chinese, Japanese and Korean text and cuts it into
// overlapping character bigrams, the dictionary-free stand-in for words.
package cjk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Version names the segmentation below. Stores that index its output record
// it and rebuild their indexes when it changes.
const Version = "bigram-1"

// Is reports whether r belongs to a script written without spaces between
// words, or whose words carry attached particles: Han ideographs, hiragana,
// katakana (with the prolonged sound and iteration marks) and hangul.
func Is(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case 0x4E00 <= r && r <= 0x9FFF, 0x3040 <= r && r <= 0x30FF, 0xAC00 <= r && r <= 0xD7A3:
		return true // the common blocks: unified ideographs, kana, hangul syllables
	case 0x3005 <= r && r <= 0x3007, r == 0xFF70, r == 0xFF9E, r == 0xFF9F:
		return true // 々 〆 〇 and half-width ｰ ﾞ ﾟ
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// Contains reports whether s has a CJK character.
func Contains(s string) bool {
	for _, r := range s {
		if r >= 0x1100 && Is(r) {
			return true
		}
	}
	return false
}

// Fold maps full-width ASCII (common in CJK text: "２０１４", "ＣＰＵ") to
// ASCII and the ideographic space to a space; other runes are unchanged.
func Fold(r rune) rune {
	switch {
	case 0xFF01 <= r && r <= 0xFF5E:
		return r - 0xFEE0
	case r == 0x3000:
		return ' '
	}
	return r
}

// ignorable are runes search drops inside a CJK run: variation selectors
// pick a glyph, not a character.
func ignorable(r rune) bool {
	return 0xFE00 <= r && r <= 0xFE0F || 0xE0100 <= r && r <= 0xE01EF
}

// Bigrams calls fn with the overlapping character bigrams of a run of CJK
// characters, or with the run itself when it is one character long.
func Bigrams(run string, fn func(string)) {
	_, w := utf8.DecodeRuneInString(run)
	if w >= len(run) {
		if run != "" {
			fn(run)
		}
		return
	}
	prev := 0
	for i := w; i < len(run); {
		_, size := utf8.DecodeRuneInString(run[i:])
		fn(run[prev : i+size])
		prev, i = i, i+size
	}
}

// Terms calls fn with the search terms of text, in order: every run of
// letters, digits and marks of other scripts, lower-cased, and the bigrams
// of every CJK run. Everything else separates terms.
func Terms(text string, fn func(term string)) {
	var word, run strings.Builder
	flushWord := func() {
		if word.Len() > 0 {
			fn(word.String())
			word.Reset()
		}
	}
	flushRun := func() {
		if run.Len() > 0 {
			Bigrams(run.String(), fn)
			run.Reset()
		}
	}
	for _, r := range text {
		r = Fold(r)
		switch {
		case Is(r):
			flushWord()
			run.WriteRune(r)
		case run.Len() > 0 && ignorable(r):
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			flushRun()
			word.WriteRune(unicode.ToLower(r))
		default:
			flushWord()
			flushRun()
		}
	}
	flushWord()
	flushRun()
}

// TermList returns the distinct terms of text in order of first appearance.
func TermList(text string) []string {
	var out []string
	seen := map[string]bool{}
	Terms(text, func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}

// IndexText rewrites text for a word tokenizer: each CJK run becomes its
// bigrams separated by spaces, full-width ASCII becomes ASCII, and all
// other text is left as it is, so Latin words still meet their stemmer.
func IndexText(text string) string {
	clean := true
	for _, r := range text {
		if r >= 0x1100 && (Is(r) || Fold(r) != r) {
			clean = false
			break
		}
	}
	if clean {
		return text
	}
	var out, run strings.Builder
	out.Grow(len(text) * 2)
	flush := func() {
		if run.Len() == 0 {
			return
		}
		out.WriteByte(' ')
		n := 0
		Bigrams(run.String(), func(b string) {
			if n > 0 {
				out.WriteByte(' ')
			}
			n++
			out.WriteString(b)
		})
		out.WriteByte(' ')
		run.Reset()
	}
	for _, r := range text {
		r = Fold(r)
		switch {
		case Is(r):
			run.WriteRune(r)
		case run.Len() > 0 && ignorable(r):
		default:
			flush()
			out.WriteRune(r)
		}
	}
	flush()
	return out.String()
}
