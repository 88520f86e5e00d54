package splitter

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// cl100k is the cl100k_base encoding done without tiktoken-go, whose
// pre-tokenizer is a backtracking regular expression (regexp2) that took
// four fifths of the time to count tokens. It gives exactly tiktoken-go's
// tokens (cl100k_test.go compares the two): the pieces its pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// cuts, found by the scanner below with the same character classes (Go's
// unicode tables, as regexp2 uses), then byte-pair merged by rank.
type cl100k struct {
	ranks   map[string]int
	decoder []string  // by rank
	caches  sync.Pool // of *pieceCache
}

func newCl100k() (*cl100k, error) {
	ranks, decoder, err := loadRanks("cl100k_base.tiktoken")
	if err != nil {
		return nil, err
	}
	c := &cl100k{ranks: ranks, decoder: decoder}
	c.caches.New = func() any { return new(pieceCache) }
	return c, nil
}

// loadRanks reads an encoding's "base64-token rank" lines from the
// loader's embedded assets (nothing is downloaded). It does what the
// loader's own LoadTiktokenBpe does at less than half the cost, which every
// one-shot query process pays before it answers: the tokens are decoded
// into one buffer and keyed by substrings of it, into a map sized once.
// The ranks must be the line numbers, 0 to n-1, as in every tiktoken file.
func loadRanks(name string) (map[string]int, []string, error) {
	contents, err := assets.Assets.ReadFile(name)
	if err != nil {
		return nil, nil, err
	}
	n := bytes.Count(contents, []byte{'\n'})
	if len(contents) > 0 && contents[len(contents)-1] != '\n' {
		n++
	}
	arena := make([]byte, 0, len(contents)) // decoded tokens are shorter than their base64
	ends := make([]int, 0, n)
	for line := 0; len(contents) > 0; line++ {
		nl := bytes.IndexByte(contents, '\n')
		if nl < 0 {
			nl = len(contents)
		}
		rec := contents[:nl]
		contents = contents[min(nl+1, len(contents)):]
		if len(rec) == 0 {
			line--
			continue
		}
		sp := bytes.IndexByte(rec, ' ')
		if sp < 0 {
			return nil, nil, fmt.Errorf("%s: line %d: no rank", name, line+1)
		}
		if r, err := strconv.Atoi(string(rec[sp+1:])); err != nil || r != line {
			return nil, nil, fmt.Errorf("%s: line %d: rank %q is not the line number", name, line+1, rec[sp+1:])
		}
		k, err := base64.StdEncoding.Decode(arena[len(arena):cap(arena)], rec[:sp])
		if err != nil {
			return nil, nil, fmt.Errorf("%s: line %d: %w", name, line+1, err)
		}
		arena = arena[:len(arena)+k]
		ends = append(ends, len(arena))
	}
	all := string(arena)
	ranks := make(map[string]int, len(ends))
	decoder := make([]string, len(ends))
	start := 0
	for r, end := range ends {
		tok := all[start:end]
		if _, dup := ranks[tok]; dup {
			return nil, nil, fmt.Errorf("%s: token of rank %d repeats an earlier one", name, r)
		}
		ranks[tok], decoder[r] = r, tok
		start = end
	}
	return ranks, decoder, nil
}

// Character classes of the pattern. Every character is exactly one of
// them; '\r' and '\n' are white space set apart.
const (
	clOther  = iota // not white space, letter or number
	clLetter        // \p{L}
	clNumber        // \p{N}
	clSpace         // \s but not \r or \n
	clNewline
)

// asciiClass holds the class of each ASCII character, computed with the
// predicates used for all others.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = runeClass(r)
	}
	return t
}()

func runeClass(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return clNewline
	case unicode.IsSpace(r):
		return clSpace
	case unicode.Is(unicode.Letter, r):
		return clLetter
	case unicode.Is(unicode.Number, r):
		return clNumber
	}
	return clOther
}

// at returns the class and size of the character at s[i] (i < len(s)).
func at(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return runeClass(r), n
}

// skip returns the end of the run of characters of class c from i.
func skip(s string, i int, c uint8) int {
	for i < len(s) {
		k, n := at(s, i)
		if k != c {
			break
		}
		i += n
	}
	return i
}

// contraction returns the end of "'s", "'t", "'re", "'ve", "'m", "'ll"
// or "'d" (any case) at s[i], or 0. Only ASCII letters fold to these.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return 0
}

// pieceEnd returns the end of the pattern's match that starts at s[i]
// (i < len(s), s valid UTF-8). Every character starts a match, so matches
// tile the text. The alternatives are tried in the pattern's order.
func pieceEnd(s string, i int) int {
	if j := contraction(s, i); j > 0 {
		return j
	}
	c, n := at(s, i)
	if c == clLetter {
		return skip(s, i+n, clLetter)
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+ with the optional character taken.
	if c == clOther || c == clSpace {
		if j := i + n; j < len(s) {
			if c2, n2 := at(s, j); c2 == clLetter {
				return skip(s, j+n2, clLetter)
			}
		}
	}
	if c == clNumber {
		j := i + n
		for k := 1; k < 3 && j < len(s); k++ {
			c2, n2 := at(s, j)
			if c2 != clNumber {
				break
			}
			j += n2
		}
		return j
	}
	// " ?[^\s\p{L}\p{N}]+[\r\n]*"
	from := -1
	if c == clOther {
		from = i
	} else if s[i] == ' ' && i+1 < len(s) {
		if c2, _ := at(s, i+1); c2 == clOther {
			from = i + 1
		}
	}
	if from >= 0 {
		j := skip(s, from, clOther)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// White space from here on: i starts a run of it.
	j, last, lastNL, count := i, i, -1, 0
	for j < len(s) {
		c2, n2 := at(s, j)
		if c2 != clSpace && c2 != clNewline {
			break
		}
		if c2 == clNewline {
			lastNL = j
		}
		last = j
		j += n2
		count++
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+ backtracks to the last line break
		return lastNL + 1
	case j == len(s) || count == 1: // \s+(?!\S) at the end; else \s+
		return j
	}
	return last // \s+(?!\S) leaves the last space to the word after it
}

// forEachPiece calls fn with the start and end of each piece of s.
func forEachPiece(s string, fn func(a, b int)) {
	for i := 0; i < len(s); {
		j := pieceEnd(s, i)
		fn(i, j)
		i = j
	}
}

// validText is s as regexp2 reads it: every byte of invalid UTF-8 a U+FFFD.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
}

// count returns the number of tokens of s.
func (c *cl100k) count(s string) int {
	s = validText(s)
	cache := c.caches.Get().(*pieceCache)
	defer c.caches.Put(cache)
	n := 0
	var parts [bpeStack]bpePart
	for a := 0; a < len(s); {
		b := pieceEnd(s, a)
		piece := s[a:b]
		a = b
		if len(piece) == 1 {
			n++ // every byte is a token
			continue
		}
		e := cache.entry(piece)
		if e != nil && e.len == uint8(len(piece)) && string(e.key[:e.len]) == piece {
			n += int(e.tokens)
			continue
		}
		k := 1
		if _, ok := c.ranks[piece]; !ok {
			k = len(c.merge(piece, parts[:0])) - 1
		}
		n += k
		if e != nil {
			e.len, e.tokens = uint8(copy(e.key[:], piece)), uint8(k)
		}
	}
	return n
}

// pieceCache remembers the token counts of recent short pieces: prose
// repeats a few thousand words, and a look-up among the 100k tokens of the
// vocabulary misses the processor's caches twice. Each processor has one
// (a sync.Pool), 512 KB.
type pieceCache [1 << 14]cacheEntry

type cacheEntry struct {
	key         [cachedPiece]byte
	len, tokens uint8
}

// cachedPiece is the longest piece the cache holds.
const cachedPiece = 30

// entry returns the slot of piece, or nil for a piece too long to cache.
func (pc *pieceCache) entry(piece string) *cacheEntry {
	if len(piece) > cachedPiece {
		return nil
	}
	h := uint64(len(piece))
	for i := 0; i < len(piece); i++ {
		h = (h ^ uint64(piece[i])) * 0x100000001b3
	}
	h ^= h >> 29
	return &pc[h&(uint64(len(pc))-1)]
}

// encode appends the tokens of s to *ids and the byte offset in s where
// each one ends to *ends; either may be nil.
func (c *cl100k) encode(s string, ids, ends *[]int) {
	s = validText(s)
	var parts [bpeStack]bpePart
	forEachPiece(s, func(a, b int) {
		piece := s[a:b]
		if r, ok := c.ranks[piece]; ok {
			if ids != nil {
				*ids = append(*ids, r)
			}
			if ends != nil {
				*ends = append(*ends, b)
			}
			return
		}
		ps := c.merge(piece, parts[:0])
		for k := 0; k+1 < len(ps); k++ {
			if ids != nil {
				*ids = append(*ids, c.ranks[piece[ps[k].start:ps[k+1].start]])
			}
			if ends != nil {
				*ends = append(*ends, a+ps[k+1].start)
			}
		}
	})
}

// decode concatenates the bytes of tokens.
func (c *cl100k) decode(ids []int) string {
	var b []byte
	for _, id := range ids {
		if id >= 0 && id < len(c.decoder) {
			b = append(b, c.decoder[id]...)
		}
	}
	return string(b)
}

// bpePart is one part of a piece being merged: where it starts, and the
// rank of it joined with the part after it (math.MaxInt: not a token).
type bpePart struct {
	start, rank int
}

// bpeStack is how many parts a piece can have before merge allocates.
const bpeStack = 64

// merge byte-pair merges piece, starting from its bytes: while some two
// neighbouring parts join into a token, the pair of lowest rank is joined
// (the leftmost on a tie). It returns the parts, and one past the last.
func (c *cl100k) merge(piece string, parts []bpePart) []bpePart {
	rank := func(ps []bpePart, i int) int {
		if i+2 < len(ps) {
			if r, ok := c.ranks[piece[ps[i].start:ps[i+2].start]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, bpePart{i, math.MaxInt})
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rank(parts, i)
	}
	for len(parts) > 1 {
		best, at := math.MaxInt, -1
		for i := 0; i+1 < len(parts); i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		parts[at].rank = rank(parts, at)
		if at > 0 {
			parts[at-1].rank = rank(parts, at-1)
		}
	}
	return parts
}
