package splitter

import (
	"unicode"
	"unicode/utf8"
)

// Chunk boundaries fall between user-perceived characters (grapheme
// clusters, UAX #29), not only between runes: a base letter and its
// combining marks, a Hangul syllable spelt in jamo, an emoji with its
// skin-tone modifier or variation selector, emoji joined by ZWJ and a flag's
// two regional indicators each stay in one chunk. The rules below are UAX
// #29's, with Extended_Pictographic approximated by the emoji blocks; a
// cluster longer than maxCluster bytes (zalgo text) is cut between runes,
// so that every piece still fits a chunk (a token is at least a byte, so
// the bound is also at most the chunk size).

// maxCluster bounds how far a boundary moves to keep a cluster whole, and
// how far back clusterBoundary looks.
const maxCluster = 32

func isExtend(r rune) bool {
	switch {
	case r == 0x200C || r == 0x200D: // ZWNJ, ZWJ
		return true
	case 0xFE00 <= r && r <= 0xFE0F, 0xE0100 <= r && r <= 0xE01EF: // variation selectors
		return true
	case 0x1F3FB <= r && r <= 0x1F3FF: // emoji modifiers (skin tones)
		return true
	case 0xE0020 <= r && r <= 0xE007F: // tags (subdivision flags)
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

func isRegional(r rune) bool { return 0x1F1E6 <= r && r <= 0x1F1FF }

func isPictographic(r rune) bool {
	return 0x1F000 <= r && r <= 0x1FAFF || 0x2600 <= r && r <= 0x27BF || 0x2300 <= r && r <= 0x23FF ||
		0x2B00 <= r && r <= 0x2BFF || r == 0x00A9 || r == 0x00AE || r == 0x203C || r == 0x2049 || r == 0x2122
}

// Hangul syllable types.
const (
	hangulNone = iota
	hangulL
	hangulV
	hangulT
	hangulLV
	hangulLVT
)

func hangulType(r rune) int {
	switch {
	case 0x1100 <= r && r <= 0x115F, 0xA960 <= r && r <= 0xA97C:
		return hangulL
	case 0x1160 <= r && r <= 0x11A7, 0xD7B0 <= r && r <= 0xD7C6:
		return hangulV
	case 0x11A8 <= r && r <= 0x11FF, 0xD7CB <= r && r <= 0xD7FB:
		return hangulT
	case 0xAC00 <= r && r <= 0xD7A3:
		if (r-0xAC00)%28 == 0 {
			return hangulLV
		}
		return hangulLVT
	}
	return hangulNone
}

// clusterBoundary reports whether s may be cut at byte p: p is a rune
// boundary, and no grapheme cluster of s spans it (looking at most
// maxCluster bytes back).
func clusterBoundary(s string, p int) bool {
	if p <= 0 || p >= len(s) {
		return true
	}
	if snapBack(s, p) != p {
		return false
	}
	a, _ := utf8.DecodeLastRuneInString(s[:p])
	b, _ := utf8.DecodeRuneInString(s[p:])
	switch {
	case a == '\r' && b == '\n':
		return false
	case a == '\r' || a == '\n' || b == '\r' || b == '\n':
		return true
	case isExtend(b):
		return false
	}
	if ha, hb := hangulType(a), hangulType(b); ha != hangulNone && hb != hangulNone {
		switch ha {
		case hangulL:
			if hb != hangulT {
				return false
			}
		case hangulV, hangulLV:
			if hb == hangulV || hb == hangulT {
				return false
			}
		case hangulT, hangulLVT:
			if hb == hangulT {
				return false
			}
		}
	}
	if a == 0x200D && isPictographic(b) {
		// An emoji ZWJ sequence: pictograph Extend* ZWJ pictograph.
		for q := p - len(string(a)); q > 0 && q > p-maxCluster; {
			r, size := utf8.DecodeLastRuneInString(s[:q])
			if isPictographic(r) {
				return false
			}
			if !isExtend(r) {
				break
			}
			q -= size
		}
	}
	if isRegional(a) && isRegional(b) {
		// Flags pair regional indicators from the start of their run.
		n := 0
		for q := p; q > 0 && q > p-4*maxCluster; {
			r, size := utf8.DecodeLastRuneInString(s[:q])
			if !isRegional(r) {
				break
			}
			n++
			q -= size
		}
		return n%2 == 0
	}
	return true
}

// snapCluster moves p back to the nearest cluster boundary, or when that is
// more than limit bytes away, to the nearest rune boundary.
func snapCluster(s string, p, limit int) int {
	p = snapBack(s, p)
	for q := p; q > 0 && p-q <= limit; q = snapBack(s, q-1) {
		if clusterBoundary(s, q) {
			return q
		}
	}
	return p
}

// nextCluster returns the cluster boundary after p, or the next rune
// boundary when the cluster is longer than limit bytes.
func nextCluster(s string, p, limit int) int {
	first := nextBoundary(s, p)
	for q := first; q < len(s) && q-p <= limit; q = nextBoundary(s, q) {
		if clusterBoundary(s, q) {
			return q
		}
	}
	if len(s)-p <= limit {
		return len(s)
	}
	return first
}
