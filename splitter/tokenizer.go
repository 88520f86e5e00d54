// Package splitter cuts document text into overlapping chunks bounded in tokens.
// It is docgraph's Splitter stage; chunks are exact byte ranges of the source text.
package splitter

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// defaultEncoding is the vocabulary used when NewTokenizer is given "".
const defaultEncoding = "cl100k_base"

func init() {
	// tiktoken's default loader fetches vocabularies over HTTP on first use.
	// Installing the embedded loader before any encoding can be requested
	// means no code path in this process downloads one.
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
}

// Tokenizer counts tokens with a tiktoken vocabulary. It is safe for
// concurrent use.
type Tokenizer struct {
	name string
	enc  *tiktoken.Tiktoken // other encodings than cl100k_base
	cl   *cl100k            // cl100k_base, docgraph's own (cl100k.go)
}

var (
	tokenizersMu sync.Mutex
	tokenizers   = map[string]*Tokenizer{}
)

// NewTokenizer returns the tokenizer for a tiktoken encoding such as
// "cl100k_base" (the default when encoding is ""). Building one parses a
// vocabulary of ~100k entries, so tokenizers are cached per encoding.
func NewTokenizer(encoding string) (*Tokenizer, error) {
	if encoding == "" {
		encoding = defaultEncoding
	}
	tokenizersMu.Lock()
	defer tokenizersMu.Unlock()
	if t, ok := tokenizers[encoding]; ok {
		return t, nil
	}
	t := &Tokenizer{name: encoding}
	var err error
	if encoding == defaultEncoding {
		t.cl, err = newCl100k()
	} else {
		t.enc, err = tiktoken.GetEncoding(encoding)
	}
	if err != nil {
		return nil, fmt.Errorf("splitter: load tokenizer %q: %w", encoding, err)
	}
	tokenizers[encoding] = t
	return t, nil
}

// encode returns the tokens of text.
func (t *Tokenizer) encode(text string) []int {
	if t.cl != nil {
		var ids []int
		t.cl.encode(text, &ids, nil)
		return ids
	}
	return t.enc.EncodeOrdinary(text)
}

// decode returns the text of tokens.
func (t *Tokenizer) decode(ids []int) string {
	if t.cl != nil {
		return t.cl.decode(ids)
	}
	return t.enc.Decode(ids)
}

// Count returns the number of tokens in text. Special-token strings such as
// "<|endoftext|>" are counted as ordinary text, as they are in documents.
func (t *Tokenizer) Count(text string) int {
	if text == "" {
		return 0
	}
	if t.cl != nil {
		return t.cl.count(text)
	}
	return len(t.enc.EncodeOrdinary(text))
}

// Truncate returns the longest prefix of text that fits in maxTokens tokens,
// cut at a UTF-8 character boundary (a multi-byte character is never split,
// even where a token boundary falls inside it).
func (t *Tokenizer) Truncate(text string, maxTokens int) string {
	if maxTokens <= 0 || text == "" {
		return ""
	}
	// Tokenizing costs at least linear time in the text (quadratic in an
	// unbroken run), so a long text is cut through prefixes of growing
	// length: the first one over the limit contains the answer.
	for n := 8*maxTokens + 64; n < len(text); n *= 2 {
		if p := snapBack(text, n); t.Count(text[:p]) > maxTokens {
			return t.truncate(text[:p], maxTokens)
		}
	}
	return t.truncate(text, maxTokens)
}

func (t *Tokenizer) truncate(text string, maxTokens int) string {
	ids := t.encode(text)
	if len(ids) <= maxTokens {
		return text
	}
	// For valid UTF-8 the first maxTokens tokens decode to a byte prefix of
	// text, which is the answer up to a partial character at its end.
	n := 0
	if head := t.decode(ids[:maxTokens]); strings.HasPrefix(text, head) {
		n = snapBack(text, len(head))
		if t.Count(text[:n]) <= maxTokens {
			return text[:n]
		}
	} else {
		n = len(text)
	}
	// Invalid UTF-8 decodes to U+FFFD, so positions are searched directly:
	// text[:lo] fits, text[:hi] does not.
	lo, hi := 0, n
	for {
		mid := snapBack(text, lo+(hi-lo)/2)
		if mid <= lo {
			mid = nextBoundary(text, lo)
		}
		if mid >= hi {
			return text[:lo]
		}
		if t.Count(text[:mid]) <= maxTokens {
			lo = mid
		} else {
			hi = mid
		}
	}
}

// tokenEnds returns the byte offset in s at which each token of s ends, or
// nil when the tokens do not decode back to s byte for byte (invalid UTF-8).
func (t *Tokenizer) tokenEnds(s string) []int {
	if !utf8.ValidString(s) {
		return nil
	}
	if t.cl != nil {
		// Valid UTF-8: the tokens are byte ranges of s.
		ends := make([]int, 0, len(s)/4+1)
		t.cl.encode(s, nil, &ends)
		return ends
	}
	ids := t.enc.EncodeOrdinary(s)
	ends := make([]int, len(ids))
	pos := 0
	one := make([]int, 1)
	for i, id := range ids {
		one[0] = id
		pos += len(t.enc.Decode(one))
		ends[i] = pos
	}
	if pos != len(s) {
		return nil
	}
	return ends
}

// tokensFrom estimates the tokens of s[p:] from the token ends of s: every
// token ending after p is (at least partly) in the suffix.
func tokensFrom(ends []int, p int) int {
	return len(ends) - sort.SearchInts(ends, p+1)
}

// snapBack moves p back to the nearest position that decoding s from the
// start reaches, so s[:p] and s[p:] never split a valid UTF-8 sequence.
// Invalid bytes count as one-byte characters.
func snapBack(s string, p int) int {
	if p <= 0 {
		return 0
	}
	if p >= len(s) {
		return len(s)
	}
	// Decoding never skips a byte that can start a character, so the
	// nearest such byte before p decides whether p is inside a sequence.
	for q := p - 1; q >= 0 && q >= p-(utf8.UTFMax-1); q-- {
		if utf8.RuneStart(s[q]) {
			if _, size := utf8.DecodeRuneInString(s[q:]); q+size > p {
				return q
			}
			return p
		}
	}
	return p
}

// nextBoundary returns the character boundary after the one at p.
func nextBoundary(s string, p int) int {
	if p >= len(s) {
		return len(s)
	}
	_, size := utf8.DecodeRuneInString(s[p:])
	return p + size
}
