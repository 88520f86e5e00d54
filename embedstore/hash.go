package embedstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"docgraph/cjk"
)

// Hash is the offline embedder: signed feature hashing of words, word bigrams
// and character trigrams, L2-normalised; text in Chinese, Japanese or Korean,
// which has no spaces to find words by, gives its characters, character
// bigrams and trigrams instead. It needs no model, is deterministic, and
// makes lexical overlap (including partial words) show up as cosine similarity.
type Hash struct {
	dim        int
	wordW      float32
	bigramW    float32
	trigramW   float32
	stopWeight float32
	cjkW       [3]float32 // CJK character unigrams, bigrams, trigrams
	version    int
}

// HashOption configures NewHash.
type HashOption func(*Hash)

// WithDimension sets the vector dimension (default 384).
func WithDimension(n int) HashOption {
	return func(h *Hash) {
		if n > 0 {
			h.dim = n
		}
	}
}

// WithVersion picks the algorithm: 2, the default, embeds CJK text by its
// character n-grams; 1, the version before, took a run of CJK characters
// for one word. Version 1 stays so that stores made with it keep working.
func WithVersion(v int) HashOption {
	return func(h *Hash) {
		if v == 1 || v == 2 {
			h.version = v
		}
	}
}

// NewHash returns the offline hashing embedder.
func NewHash(opts ...HashOption) *Hash {
	h := &Hash{dim: 384, wordW: 1, bigramW: 0.6, trigramW: 0.25, stopWeight: 0.15, cjkW: [3]float32{0.4, 1, 0.5}, version: 2}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Name identifies the algorithm; bump the version when vectors change
// (v2: character n-grams for CJK text).
func (h *Hash) Name() string { return fmt.Sprintf("hash-v%d", h.version) }

// Deterministic reports that a text's vector depends on the text and the
// embedder's name and dimension alone, so it can be made again at will.
func (h *Hash) Deterministic() bool { return true }

// Dimension is the length of every vector.
func (h *Hash) Dimension() int { return h.dim }

// EmbedDocuments embeds each text.
func (h *Hash) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("hash embed: %w", err)
			}
		}
		out[i] = h.Vector(t)
	}
	return out, nil
}

// EmbedQuery embeds one text.
func (h *Hash) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("hash embed: %w", err)
	}
	return h.Vector(text), nil
}

// Vector embeds one text without a context.
func (h *Hash) Vector(text string) []float32 {
	v := make([]float32, h.dim)
	var prev uint64
	havePrev := false
	var buf [64]byte
	forEachWord(text, h.version >= 2, func(word string, isCJK bool) {
		if isCJK {
			h.addCJK(v, word)
			havePrev = false
			return
		}
		w := h.wordW
		if stopWords[word] {
			w *= h.stopWeight
		}
		hw := fnv64(word)
		h.add(v, hw, w)
		if havePrev {
			h.add(v, mix(prev, hw), h.bigramW*w)
		}
		prev, havePrev = hw, true
		// Character trigrams of the padded word make inflections and
		// spelling variants land near each other.
		if len(word) > 3 && !stopWords[word] {
			p := append(buf[:0], '<')
			p = append(p, word...)
			p = append(p, '>')
			for i := 0; i+3 <= len(p); {
				_, size := utf8.DecodeRune(p[i:])
				h.add(v, fnv64b(p[i:min(i+3, len(p))])^0x9e3779b97f4a7c15, h.trigramW)
				i += size
			}
		}
	})
	normalize(v)
	return v
}

// addCJK adds the character unigrams, bigrams and trigrams of a run of CJK
// characters: a bigram is the usual stand-in for a word, a trigram for a
// name, and single characters keep a one-character word from vanishing.
func (h *Hash) addCJK(v []float32, run string) {
	var ends [4]int // byte offsets where the last characters start, newest last
	n := 0
	for i, r := range run {
		w := utf8.RuneLen(r)
		copy(ends[:3], ends[1:])
		ends[3] = i
		n++
		for k := 1; k <= 3 && k <= n; k++ {
			g := run[ends[4-k] : i+w]
			h.add(v, fnv64(g)^cjkSeed[k-1], h.cjkW[k-1])
		}
	}
}

// cjkSeed keeps CJK n-gram features apart from word features of the same bytes.
var cjkSeed = [3]uint64{0x2545f4914f6cdd1d, 0x5851f42d4c957f2d, 0x14057b7ef767814f}

func (h *Hash) add(v []float32, hv uint64, w float32) {
	idx := int(hv % uint64(h.dim))
	if hv>>63 == 1 {
		w = -w
	}
	v[idx] += w
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// forEachWord calls fn with each lower-cased run of letters and digits of
// other scripts, and with each run of CJK characters (isCJK) when cjkRuns
// is set; without it (version 1) an ideograph is a word of its own and
// kana and hangul are letters like any other.
func forEachWord(text string, cjkRuns bool, fn func(word string, isCJK bool)) {
	var sb, run strings.Builder
	flush := func() {
		if sb.Len() > 0 {
			fn(sb.String(), false)
			sb.Reset()
		}
	}
	flushRun := func() {
		if run.Len() > 0 {
			fn(run.String(), true)
			run.Reset()
		}
	}
	for _, r := range text {
		if cjkRuns {
			r = cjk.Fold(r)
		}
		switch {
		case cjkRuns && r >= 0x1100 && cjk.Is(r):
			flush()
			run.WriteRune(r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			flushRun()
			sb.WriteRune(unicode.ToLower(r))
			// Version 1 took each ideograph for a word.
			if !cjkRuns && r >= 0x2E80 && unicode.Is(unicode.Han, r) {
				flush()
			}
		default:
			flush()
			flushRun()
		}
	}
	flush()
	flushRun()
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func fnv64b(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func mix(a, b uint64) uint64 {
	x := a*0x9e3779b97f4a7c15 ^ (b + 0x632be59bd9b4e019)
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return x
}

// Cosine returns the cosine similarity of two vectors. Vectors of
// different lengths come from different embedders and are not comparable:
// their similarity is 0.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can did do does for from had has have he her his how i if in into is it its of on or our she so than that the their them then there these they this to was were what when where which who whom whose why will with would you your`) {
		m[w] = true
	}
	return m
}()
