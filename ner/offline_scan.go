package ner

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/docgraph/docgraph/cjk"
)

// The offline extractor reads text in one linear pass: a hand-written
// scanner turns it into word, number and punctuation tokens with sentence
// numbers, so no pattern ever backtracks over a large input.

type offKind uint8

const (
	offWord  offKind = iota + 1 // starts with a letter
	offNum                      // starts with a digit
	offPunct                    // one punctuation rune (or a `` / '' pair)
	offCJK                      // a run of Chinese, Japanese or Korean characters
)

type offFlags uint16

const (
	offCap     offFlags = 1 << iota // first letter upper case (or an inner capital: "iPhone")
	offLower                        // has letters, none upper case
	offAllCaps                      // two or more letters, all upper case
	offAbbrev                       // ends with a full stop that belongs to it ("St.", "G.")
	offPoss                         // ends with a possessive 's
	offSpace                        // white space before it
	offNL                           // a line break before it
	offFirst                        // opens a sentence or a bracketed clause
	offDigits                       // digits only
)

type offToken struct {
	start, end int32
	sent       int32
	kind       offKind
	flags      offFlags
	r          rune // the rune of a punctuation token; '"' for `` and ''
}

func (t offToken) has(f offFlags) bool { return t.flags&f != 0 }

func (t offToken) text(s string) string { return s[t.start:t.end] }

// offSpaceRune reports runes that separate tokens like white space,
// including the zero-width spaces PDF and e-book conversions leave behind.
func offSpaceRune(r rune) bool {
	switch r {
	case ' ', '\t', '\r', '\v', '\f', 0x85, 0xA0, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0xAD:
		return true
	}
	return r > 0x7f && unicode.IsSpace(r)
}

func offWordRune(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)) && !cjk.Is(r)
}

// offCJKEnd ends a sentence whatever follows: CJK text has no space or
// capital after its full stop.
func offCJKEnd(r rune) bool {
	return r == '。' || r == '！' || r == '？' || r == '；' || r == '．'
}

// offClosing reports punctuation that closes what a sentence end sits in.
func offClosing(r rune) bool {
	switch r {
	case '"', '\'', '’', '”', ')', ']', '」', '』', '）', '》', '】':
		return true
	}
	return false
}

func offLetter(r rune) bool {
	if r < 0x80 {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r)
}

func offDigit(b byte) bool { return '0' <= b && b <= '9' }

func offRuneAt(s string, i int) rune {
	if i >= len(s) {
		return 0
	}
	if s[i] < utf8.RuneSelf {
		return rune(s[i])
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// offTokenize appends the tokens of text to toks and returns them with the
// number of sentences.
func offTokenize(text string, toks []offToken) ([]offToken, int) {
	var (
		sent         int32
		space, first = false, true
		newlines     int
		pendingEnd   bool // a sentence-final mark was seen; the next token decides
		hardEnd      bool // a CJK sentence-final mark was seen
		n            = len(text)
	)
	if n > 1<<31-1 {
		text, n = text[:1<<31-1], 1<<31-1
	}
	for i := 0; i < n; {
		r, w := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(text[i:])
		}
		if r == '\n' {
			newlines++
			space = true
			i += w
			continue
		}
		if offSpaceRune(r) || r == utf8.RuneError || unicode.IsControl(r) {
			space = true
			i += w
			continue
		}
		var flags offFlags
		if space {
			flags |= offSpace
		}
		startsLower := r < 0x80 && 'a' <= r && r <= 'z' || r >= 0x80 && unicode.IsLower(r)
		if len(toks) > 0 {
			closing := !space && offClosing(r)
			switch {
			case hardEnd && !closing:
				if newlines > 0 {
					flags |= offNL
				}
				sent++
				first = true
				hardEnd, pendingEnd = false, false
			case newlines > 0:
				flags |= offNL
				prev := toks[len(toks)-1]
				if newlines > 1 || pendingEnd || !startsLower || prev.kind == offPunct && prev.r == ':' {
					sent++
					first = true
				}
				pendingEnd = false
			case pendingEnd && !closing:
				pendingEnd = false
				if (space || !startsLower) && !startsLower {
					sent++
					first = true
				}
			}
		}
		newlines = 0
		space = false
		start := i
		if r >= 0x1100 && cjk.Is(r) {
			for i < n {
				c, w := utf8.DecodeRuneInString(text[i:])
				if !cjk.Is(c) && !(0xFE00 <= c && c <= 0xFE0F) {
					break
				}
				i += w
			}
			tok := offToken{start: int32(start), end: int32(i), sent: sent, flags: flags, kind: offCJK}
			if first {
				tok.flags |= offFirst
				first = false
			}
			toks = append(toks, tok)
			continue
		}
		if offWordRune(r) {
			i, flags = offScanWord(text, i, flags)
			tok := offToken{start: int32(start), end: int32(i), sent: sent, flags: flags}
			if offDigit(text[start]) {
				tok.kind = offNum
			} else {
				tok.kind = offWord
			}
			// An abbreviation followed by a capitalised stop word ("Apple
			// Inc. The company") ends the sentence after all.
			if len(toks) > 0 && !first {
				prev := toks[len(toks)-1]
				if prev.has(offAbbrev) && tok.has(offCap) && prev.sent == sent &&
					!offHonorifics[strings.TrimSuffix(prev.text(text), ".")] && offIsStop(tok.text(text)) {
					sent++
					tok.sent = sent
					first = true
				}
			}
			if first {
				tok.flags |= offFirst
				first = false
			}
			toks = append(toks, tok)
			continue
		}
		i += w
		tok := offToken{start: int32(start), end: int32(i), sent: sent, kind: offPunct, flags: flags, r: r}
		if (r == '`' || r == '\'') && i < n && text[i] == byte(r) {
			i++
			tok.end = int32(i)
			tok.r = '"'
		}
		toks = append(toks, tok)
		switch {
		case r == '.' || r == '!' || r == '?' || r == '…':
			pendingEnd = true
		case offCJKEnd(r):
			hardEnd = true
		case r == '(' || r == '[' || r == ':' || r == '（' || r == '：':
			first = true
		}
	}
	return toks, int(sent) + 1
}

// offScanWord scans one word or number starting at i and returns its end
// and flags. Words keep inner apostrophes, hyphens and initials' full stops;
// numbers keep decimal points and thousands separators.
func offScanWord(text string, i int, flags offFlags) (int, offFlags) {
	n := len(text)
	start := i
	upper, lower, letters, runes := 0, 0, 0, 0
	firstUpper := false
	digitsOnly := true
	segStart, segUpper, seg := true, false, start
	for i < n {
		r, w := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(text[i:])
		}
		if offWordRune(r) {
			if segStart {
				segUpper = offUpperRune(r)
				segStart = false
				seg = i
			}
			if r < 0x80 {
				switch {
				case 'A' <= r && r <= 'Z':
					upper++
					letters++
					firstUpper = firstUpper || runes == 0
					digitsOnly = false
				case 'a' <= r && r <= 'z':
					lower++
					letters++
					digitsOnly = false
				}
			} else if unicode.IsLetter(r) {
				letters++
				digitsOnly = false
				if unicode.IsUpper(r) || unicode.IsTitle(r) {
					upper++
					firstUpper = firstUpper || runes == 0
				} else if unicode.IsLower(r) {
					lower++
				}
			} else if !unicode.IsDigit(r) {
				digitsOnly = false
			}
			runes++
			i += w
			continue
		}
		next := offRuneAt(text, i+w)
		switch {
		case r == '_' && runes > 0 && offWordRune(next):
			// Identifiers such as NETLINK_KERNEL_SOCKET stay whole.
			digitsOnly = false
		case (r == '\'' || r == '’') && runes > 0 && offLetter(next) && !digitsOnly:
		case (r == '-' || r == '‐') && runes > 0 && offWordRune(next) && !offHyphenSplit(text, seg, i, i+w, segUpper):
			// "Wiley-Blackwell" and "half-brother" are one word, but
			// "French-held" and "post-World" are two: the name is one part.
			digitsOnly = false
			segStart = true
		case r == '.' && digitsOnly && runes > 0 && next < 0x80 && offDigit(byte(next)):
		case r == ',' && digitsOnly && runes > 0 && runes <= 3 && i+4 <= n &&
			offDigit(text[i+1]) && offDigit(text[i+2]) && offDigit(text[i+3]) &&
			(i+4 == n || !offDigit(text[i+4])):
		case r == '&' && upper == runes && runes <= 3 && next < 0x80 && 'A' <= next && next <= 'Z':
		default:
			goto done
		}
		i += w
	}
done:
	word := text[start:i]
	if i < n && text[i] == '.' {
		switch {
		case runes == 1 && letters == 1:
			// Initials "G." and "U.S.", "e.g.": absorb the stops, but a
			// lowercase single letter only when more letters follow.
			j := i + 1
			for j+1 < n && offLetter(rune(text[j])) && text[j+1] == '.' {
				j += 2
			}
			if firstUpper || j > i+1 {
				i = j
				flags |= offAbbrev
			}
		case offHonorifics[word] || offAbbrevs[word]:
			i++
			flags |= offAbbrev
		}
	}
	if firstUpper || upper > 0 && lower > 0 && !digitsOnly && letters >= 2 && start < i && !offDigit(text[start]) {
		flags |= offCap
	}
	if upper == 0 && lower > 0 {
		flags |= offLower
	}
	if upper >= 2 && lower == 0 {
		flags |= offAllCaps
	}
	if digitsOnly {
		flags |= offDigits
	}
	if w := text[start:i]; len(w) > 2 && (strings.HasSuffix(w, "'s") || strings.HasSuffix(w, "’s") || strings.HasSuffix(w, "'S")) {
		flags |= offPoss
	}
	return i, flags
}

// offLowerWord returns the lower-case form of a word, without allocating
// when it is lower case ASCII already.
func offLowerWord(w string) string {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.ToLower(w)
		}
	}
	return w
}

func offIsStop(w string) bool { return offStopWords[offLowerWord(w)] }

func offUpperRune(r rune) bool {
	if r < 0x80 {
		return 'A' <= r && r <= 'Z'
	}
	return unicode.IsUpper(r) || unicode.IsTitle(r)
}

// offHyphenSplit reports whether a hyphen at i divides a name from a
// common word: "French-held", "Detroit-area", "post-World War II". Names
// like "Kim Jong-il" and "Wiley-Blackwell" stay one word.
func offHyphenSplit(text string, seg, i, next int, segUpper bool) bool {
	end := next
	for end < len(text) {
		r, w := utf8.DecodeRuneInString(text[end:])
		if !offLetter(r) {
			break
		}
		end += w
	}
	after := text[next:end]
	if after == "" {
		return false
	}
	nextUpper := offUpperRune(offRuneAt(text, next))
	switch {
	case segUpper && !nextUpper:
		return offHyphenHeads[offLowerWord(after)]
	case !segUpper && nextUpper:
		return offHyphenPrefixes[offLowerWord(text[seg:i])]
	}
	return false
}
