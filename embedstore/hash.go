package embedstore

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/docgraph/docgraph/cjk"
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
	h := &Hash{dim: defaultDim, wordW: 1, bigramW: 0.6, trigramW: 0.25, stopWeight: 0.15, cjkW: [3]float32{0.4, 1, 0.5}, version: 2}
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
	e := hashBuffers.Get().(*hashEmbedding)
	e.h, e.v, e.havePrev = h, v, false
	e.touched = resized(e.touched, (h.dim+63)/64)
	e.words(text)
	e.normalize()
	e.h, e.v = nil, nil
	hashBuffers.Put(e)
	return v
}

// resized returns b with length n, all zero, reusing its array when it can.
func resized(b []uint64, n int) []uint64 {
	if cap(b) < n {
		return make([]uint64, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// hashBuffers recycles the buffers of hashEmbedding.
var hashBuffers = sync.Pool{New: func() any {
	return &hashEmbedding{word: make([]byte, 0, 64), run: make([]byte, 0, 64), pad: make([]byte, 0, 64)}
}}

// hashEmbedding is one text's vector being summed. The features and the
// order they are added in are the algorithm's: the floats must come out
// the same, bit for bit, whatever is done here to go faster (stores hold
// vectors it made, and queries are embedded anew).
type hashEmbedding struct {
	h        *Hash
	v        []float32
	prev     uint64
	havePrev bool
	word     []byte // the word being read, lower-cased
	run      []byte // the run of CJK characters being read
	pad      []byte // '<' word '>' for its trigrams
	// touched has a bit for each element of v that a feature was added to:
	// the others are +0, so normalising can pass them by (a short text
	// touches a few dozen of 384).
	touched []uint64
}

// words adds the features of each lower-cased run of letters and digits of
// text, and of each run of CJK characters (version 2); version 1 takes an
// ideograph for a word of its own and kana and hangul for letters.
func (e *hashEmbedding) words(text string) {
	cjkRuns := e.h.version >= 2
	e.word, e.run = e.word[:0], e.run[:0]
	for i := 0; i < len(text); {
		if b := text[i]; b < utf8.RuneSelf {
			i++
			if c := asciiWord[b]; c != 0 {
				e.flushRun()
				e.word = append(e.word, c)
			} else {
				e.flushWord()
				e.flushRun()
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if cjkRuns {
			r = cjk.Fold(r)
		}
		switch {
		case cjkRuns && r >= 0x1100 && cjk.Is(r):
			e.flushWord()
			e.run = utf8.AppendRune(e.run, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			e.flushRun()
			e.word = utf8.AppendRune(e.word, unicode.ToLower(r))
			// Version 1 took each ideograph for a word.
			if !cjkRuns && r >= 0x2E80 && unicode.Is(unicode.Han, r) {
				e.flushWord()
			}
		default:
			e.flushWord()
			e.flushRun()
		}
	}
	e.flushWord()
	e.flushRun()
}

// asciiWord maps an ASCII letter or digit to its lower case and every
// other ASCII character to 0, a separator.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := range byte(utf8.RuneSelf) {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
			t[c] = c
		case 'A' <= c && c <= 'Z':
			t[c] = c + 'a' - 'A'
		}
	}
	return t
}()

func (e *hashEmbedding) flushWord() {
	if len(e.word) == 0 {
		return
	}
	h, word := e.h, e.word
	e.word = e.word[:0]
	hw := fnv64b(word)
	w := h.wordW
	stop := stopWordSlots.has(word, hw)
	if stop {
		w *= h.stopWeight
	}
	e.add(hw, w)
	if e.havePrev {
		e.add(mix(e.prev, hw), h.bigramW*w)
	}
	e.prev, e.havePrev = hw, true
	// Character trigrams of the padded word make inflections and
	// spelling variants land near each other.
	if len(word) > 3 && !stop {
		p := append(e.pad[:0], '<')
		p = append(p, word...)
		p = append(p, '>')
		e.pad = p
		for i := 0; i+3 <= len(p); {
			size := 1
			if p[i] >= utf8.RuneSelf {
				_, size = utf8.DecodeRune(p[i:])
			}
			e.add(fnv64b(p[i:i+3])^0x9e3779b97f4a7c15, h.trigramW)
			i += size
		}
	}
}

func (e *hashEmbedding) flushRun() {
	if len(e.run) == 0 {
		return
	}
	e.addCJK(e.run)
	e.run = e.run[:0]
	e.havePrev = false
}

// addCJK adds the character unigrams, bigrams and trigrams of a run of CJK
// characters: a bigram is the usual stand-in for a word, a trigram for a
// name, and single characters keep a one-character word from vanishing.
func (e *hashEmbedding) addCJK(run []byte) {
	h := e.h
	var ends [4]int // byte offsets where the last characters start, newest last
	n := 0
	for i := 0; i < len(run); {
		_, w := utf8.DecodeRune(run[i:])
		copy(ends[:3], ends[1:])
		ends[3] = i
		n++
		for k := 1; k <= 3 && k <= n; k++ {
			e.add(fnv64b(run[ends[4-k]:i+w])^cjkSeed[k-1], h.cjkW[k-1])
		}
		i += w
	}
}

// cjkSeed keeps CJK n-gram features apart from word features of the same bytes.
var cjkSeed = [3]uint64{0x2545f4914f6cdd1d, 0x5851f42d4c957f2d, 0x14057b7ef767814f}

// add adds w to the element hv picks, negated when hv's top bit is set.
func (e *hashEmbedding) add(hv uint64, w float32) {
	var idx uint64
	if len(e.v) == defaultDim {
		idx = hv % defaultDim // a constant divisor: a multiplication, not a division
	} else {
		idx = hv % uint64(len(e.v))
	}
	if hv>>63 == 1 {
		w = -w
	}
	e.v[idx] += w
	e.touched[idx/64] |= 1 << (idx % 64)
}

// defaultDim is the dimension of hash vectors unless WithDimension sets one.
const defaultDim = 384

// normalize scales v to unit length. The squares are summed in the order
// of the elements, as they always were; the untouched elements, +0, add
// +0 to the sum and change nothing, so they are passed by.
func (e *hashEmbedding) normalize() {
	v := e.v
	var s float64
	for k, set := range e.touched {
		for set != 0 {
			i := k*64 + bits.TrailingZeros64(set)
			set &= set - 1
			s += float64(v[i]) * float64(v[i])
		}
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for k, set := range e.touched {
		for set != 0 {
			i := k*64 + bits.TrailingZeros64(set)
			set &= set - 1
			v[i] *= inv
		}
	}
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

// stopWords weigh less and give no trigrams.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can did do does for from had has have he her his how i if in into is it its of on or our she so than that the their them then there these they this to was were what when where which who whom whose why will with would you your`) {
		m[w] = true
	}
	return m
}()

// stopWordSlots holds the stop words by their hash, which each word's
// features need anyway: a look-up in a map of strings hashed the word
// again and took 40% of the time to embed prose.
var stopWordSlots = func() (s hashedWords) {
	for w := range stopWords {
		i := fnv64b([]byte(w)) & (uint64(len(s)) - 1)
		for s[i] != "" {
			i = (i + 1) & (uint64(len(s)) - 1)
		}
		s[i] = w
	}
	return s
}()

// hashedWords is an open-addressed set of words keyed by fnv64b.
type hashedWords [256]string

// has reports whether word, whose fnv64b is h, is in the set.
func (s *hashedWords) has(word []byte, h uint64) bool {
	for i := h & (uint64(len(s)) - 1); s[i] != ""; i = (i + 1) & (uint64(len(s)) - 1) {
		if s[i] == string(word) {
			return true
		}
	}
	return false
}
