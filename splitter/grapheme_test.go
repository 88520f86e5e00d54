package splitter

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClusterBoundary(t *testing.T) {
	for _, c := range []struct {
		name, s string
		cuts    []int // rune indexes where a cut is allowed
	}{
		{"combining accent", "e\u0301a", []int{0, 2, 3}},
		{"Devanagari vowel sign", "कि", []int{0, 2}},
		{"Thai tone mark", "ก่า", []int{0, 2, 3}},
		{"Hangul jamo", "\u1112\u1161\u11ab\u1100\u1173\u11af", []int{0, 3, 6}},
		{"Hangul syllable and trailing jamo", "\ud55c\u11ab", []int{0, 2}},
		{"skin tone", "👍🏽!", []int{0, 2, 3}},
		{"variation selector", "❤\ufe0f!", []int{0, 2, 3}},
		{"ZWJ family", "👩\u200d💻x", []int{0, 3, 4}},
		{"flags", "🇯🇵🇰🇷", []int{0, 2, 4}},
		{"keycap", "1\ufe0f\u20e3", []int{0, 3}},
		{"CRLF", "a\r\nb", []int{0, 1, 3, 4}},
		{"plain", "abc", []int{0, 1, 2, 3}},
	} {
		allowed := map[int]bool{}
		for _, i := range c.cuts {
			allowed[i] = true
		}
		i := 0
		for p := 0; p <= len(c.s); {
			if got := clusterBoundary(c.s, p); got != allowed[i] {
				t.Errorf("%s: clusterBoundary(%q, rune %d) = %v", c.name, c.s, i, got)
			}
			if p == len(c.s) {
				break
			}
			_, size := utf8.DecodeRuneInString(c.s[p:])
			p += size
			i++
		}
	}
}

// clusterText mixes scripts whose user-perceived characters are several
// runes, without spaces, so the splitter must cut inside runs of them.
func clusterText(n int) string {
	parts := []string{
		"e\u0301", "a\u0308\u0304", "कि", "क्षि", "ก่", "ที่", "\u1112\u1161\u11ab", "\u1100\u1173\u11af",
		"👍🏽", "❤\ufe0f", "👩\u200d💻", "👨\u200d👩\u200d👧", "🇯🇵", "🇰🇷", "1\ufe0f\u20e3", "\ud55c\u11ab", "x",
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(parts[(i*7+i/3)%len(parts)])
	}
	return b.String()
}

// TestSplitKeepsClusters: no chunk starts or ends inside a user-perceived
// character, whatever the overlap, once the chunk size holds the longest
// (32 tokens: every cluster here is at most 32 bytes, a token at least a
// byte); smaller chunks cut long clusters between runes and stay valid.
func TestSplitKeepsClusters(t *testing.T) {
	text := clusterText(600)
	for _, size := range []int{4, 8, 13} {
		s, err := New(WithChunkSize(size), WithOverlap(size/3))
		if err != nil {
			t.Fatal(err)
		}
		checkChunks(t, s, "d", text, s.Split("d", text))
	}
	for _, size := range []int{32, 47, 100} {
		for _, overlap := range []int{0, 3, 11} {
			s, err := New(WithChunkSize(size), WithOverlap(overlap))
			if err != nil {
				t.Fatal(err)
			}
			chunks := s.Split("d", text)
			checkChunks(t, s, "d", text, chunks)
			for _, c := range chunks {
				for _, p := range []int{c.Start, c.End} {
					if !clusterBoundary(text, p) {
						t.Fatalf("size %d overlap %d: chunk %d [%d,%d) cuts a cluster at %d: %q|%q",
							size, overlap, c.Index, c.Start, c.End, p, text[max(0, p-12):p], text[p:min(len(text), p+12)])
					}
				}
			}
		}
	}
}

// TestSplitZalgo: a cluster too long for a chunk is still cut, between runes.
func TestSplitZalgo(t *testing.T) {
	text := "a" + strings.Repeat("\u0301\u0316", 60) + "b"
	s, err := New(WithChunkSize(8), WithOverlap(0))
	if err != nil {
		t.Fatal(err)
	}
	chunks := s.Split("d", text)
	checkChunks(t, s, "d", text, chunks)
	if len(chunks) < 2 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for _, c := range chunks {
		if !utf8.ValidString(c.Text) || strings.IndexFunc(c.Text, unicode.IsSpace) >= 0 {
			t.Errorf("chunk %q", c.Text)
		}
	}
}
