package splitter

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Chunk is one piece of a document: an exact byte range of its text.
type Chunk struct {
	DocID  string
	Index  int
	Text   string // == text[Start:End] exactly
	Tokens int    // token count of Text
	Start  int    // byte offsets into the document text
	End    int
}

// ID names the chunk within its document, e.g. "ab12...:0003". The index is
// zero-padded so IDs of one document sort in document order.
func (c Chunk) ID() string {
	return fmt.Sprintf("%s:%04d", c.DocID, c.Index)
}

const (
	defaultChunkSize = 768
	defaultOverlap   = 32
	// minChunkSize is the smallest limit that every single character fits
	// in (a character is at most 4 bytes, a token at least 1), so the limit
	// can always be met without cutting inside a character.
	minChunkSize = 4
)

// defaultSeparators are tried in order: paragraphs, lines, sentence ends
// (Latin and CJK), clauses, words. Characters come last implicitly.
var defaultSeparators = []string{
	"\n\n", "\n",
	". ", "! ", "? ", "。", "！", "？", "；", "; ",
	", ", " ",
}

// Option configures a Splitter.
type Option func(*config)

type config struct {
	size, overlap int
	seps          []string
	tok           *Tokenizer
}

// WithChunkSize sets the hard upper limit of a chunk in tokens (default 768,
// at least 4).
func WithChunkSize(tokens int) Option { return func(c *config) { c.size = tokens } }

// WithOverlap sets how many tokens consecutive chunks share at most
// (default 32). It must be smaller than the chunk size.
func WithOverlap(tokens int) Option { return func(c *config) { c.overlap = tokens } }

// WithSeparators replaces the separators tried, coarsest first. An empty
// string stands for "characters" and ends the list; characters are the last
// resort whether or not it is given.
func WithSeparators(seps []string) Option {
	return func(c *config) {
		c.seps = nil
		for _, s := range seps {
			if s == "" {
				break
			}
			c.seps = append(c.seps, s)
		}
	}
}

// WithTokenizer sets the tokenizer that measures chunks (default cl100k_base).
func WithTokenizer(t *Tokenizer) Option { return func(c *config) { c.tok = t } }

// Splitter cuts text into chunks of at most a given number of tokens. It is
// immutable after New and safe for concurrent use.
type Splitter struct {
	size, overlap int
	seps          []string
	tok           *Tokenizer
	// guardBytes: ranges longer than this are split further without being
	// counted first. Prose runs 3-6 bytes a token, so such a range is far
	// over the limit, and counting it would cost a pass over it for nothing
	// (and BPE is quadratic in the length of one unbroken word).
	guardBytes int
	// windowBytes bounds the spans handed to the tokenizer when a range has
	// no separator left and is cut at token boundaries. Such a range is one
	// unbroken word to BPE, whose cost is quadratic in its length.
	windowBytes int
	// cluster bounds, in bytes, the grapheme clusters kept whole
	// (grapheme.go); at most the chunk size, so one always fits.
	cluster int
}

// snap moves p back to a boundary the splitter may cut at.
func (s *Splitter) snap(text string, p int) int { return snapCluster(text, p, s.cluster) }

// next returns the first boundary the splitter may cut at after p.
func (s *Splitter) next(text string, p int) int { return nextCluster(text, p, s.cluster) }

// New returns a Splitter configured by opts.
func New(opts ...Option) (*Splitter, error) {
	c := config{size: defaultChunkSize, overlap: defaultOverlap, seps: defaultSeparators}
	for _, o := range opts {
		o(&c)
	}
	if c.size < minChunkSize {
		return nil, fmt.Errorf("splitter: chunk size %d tokens is below the minimum of %d", c.size, minChunkSize)
	}
	if c.overlap < 0 || c.overlap >= c.size {
		return nil, fmt.Errorf("splitter: overlap %d tokens must be in [0, chunk size %d)", c.overlap, c.size)
	}
	if c.tok == nil {
		t, err := NewTokenizer("")
		if err != nil {
			return nil, fmt.Errorf("splitter: %w", err)
		}
		c.tok = t
	}
	return &Splitter{
		size:        c.size,
		overlap:     c.overlap,
		seps:        append([]string(nil), c.seps...),
		tok:         c.tok,
		guardBytes:  8*c.size + 64,
		windowBytes: min(4*c.size+16, 1024),
		cluster:     min(maxCluster, c.size),
	}, nil
}

// Tokenizer returns the tokenizer that measures chunks.
func (s *Splitter) Tokenizer() *Tokenizer { return s.tok }

// piece is a range of the text known to fit in one chunk. exact says tokens
// was counted on the piece alone; otherwise it was read off the tokens of a
// wider span.
type piece struct {
	start, end, tokens int
	exact              bool
}

// Split cuts text into chunks of at most the chunk size in tokens. Chunks
// are trimmed of surrounding whitespace, whitespace-only chunks are
// dropped, and every other byte of text lies in at least one chunk.
// Consecutive chunks share at most the overlap in tokens.
func (s *Splitter) Split(docID, text string) []Chunk {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var pieces []piece
	s.splitRange(text, 0, len(text), 0, &pieces)
	return s.merge(docID, text, pieces)
}

// splitRange appends pieces covering text[a:b], trying separators from
// level on.
func (s *Splitter) splitRange(text string, a, b, level int, out *[]piece) {
	if b-a <= s.guardBytes {
		if n := s.tok.Count(text[a:b]); n <= s.size {
			*out = append(*out, piece{a, b, n, true})
			return
		}
	}
	for k := level; k < len(s.seps); k++ {
		cuts := cutPoints(text, a, b, s.seps[k])
		if len(cuts) == 0 {
			continue
		}
		prev := a
		for _, c := range cuts {
			s.splitRange(text, prev, c, k+1, out)
			prev = c
		}
		s.splitRange(text, prev, b, k+1, out)
		return
	}
	s.splitTokens(text, a, b, out)
}

// cutPoints returns the positions strictly inside text[a:b] where sep splits
// it. A run of repeated separators makes one cut. The separator stays with
// the text before it, except for trailing spaces, which go with the text
// after it: tiktoken attaches a leading space to the following word, so
// cutting there keeps the token counts of the pieces additive.
func cutPoints(text string, a, b int, sep string) []int {
	seg := text[a:b]
	trail := len(sep) - len(strings.TrimRight(sep, " \t"))
	var cuts []int
	for i := 0; i < len(seg); {
		j := strings.Index(seg[i:], sep)
		if j < 0 {
			break
		}
		end := i + j + len(sep)
		for strings.HasPrefix(seg[end:], sep) {
			end += len(sep)
		}
		c := snapBack(text, a+end-trail)
		if c > a && c < b && (len(cuts) == 0 || c > cuts[len(cuts)-1]) && clusterBoundary(text, c) {
			cuts = append(cuts, c)
		}
		i = end
	}
	return cuts
}

// splitTokens cuts text[a:b], which no separator divides, at token
// boundaries that are also character boundaries.
func (s *Splitter) splitTokens(text string, a, b int, out *[]piece) {
	for a < b {
		e := b
		if e-a > s.windowBytes {
			e = s.snap(text, a+s.windowBytes)
			if e <= a {
				e = s.next(text, a)
			}
		}
		s.tokenPieces(text, a, e, out)
		a = e
	}
}

func (s *Splitter) tokenPieces(text string, a, e int, out *[]piece) {
	if ends := s.tok.tokenEnds(text[a:e]); ends != nil {
		start, n := a, 0
		for _, end := range ends {
			n++
			if p := a + end; p == e || clusterBoundary(text, p) {
				*out = append(*out, piece{start, p, n, false})
				start, n = p, 0
			}
		}
		return
	}
	// Invalid UTF-8 does not round-trip through the tokenizer. A byte costs
	// at most 3 tokens (it is counted as U+FFFD), so spans of size/4 bytes
	// fit; bisect defensively all the same.
	step := max(1, s.size/4)
	for a < e {
		m := min(e, s.snap(text, a+step))
		if m <= a {
			m = min(e, s.next(text, a))
		}
		s.bisect(text, a, m, out)
		a = m
	}
}

// bisect appends text[a:b] as one piece if it fits, else its two halves.
func (s *Splitter) bisect(text string, a, b int, out *[]piece) {
	n := s.tok.Count(text[a:b])
	mid := s.snap(text, a+(b-a)/2)
	if mid <= a {
		mid = s.next(text, a)
	}
	if n <= s.size || mid >= b {
		*out = append(*out, piece{a, b, n, true})
		return
	}
	s.bisect(text, a, mid, out)
	s.bisect(text, mid, b, out)
}

// merge packs consecutive pieces greedily into chunks, summing the pieces'
// token counts and verifying each chunk with a real count.
func (s *Splitter) merge(docID, text string, pieces []piece) []Chunk {
	var chunks []Chunk
	from, ovTok := -1, 0 // start and tokens of the overlap carried into the next chunk
	lastEnd := 0
	for i := 0; i < len(pieces); {
		start, est := pieces[i].start, 0
		if from >= 0 {
			start, est = from, ovTok
		}
		j := i
		for j < len(pieces) && est+pieces[j].tokens <= s.size {
			est += pieces[j].tokens
			j++
		}
		if j == i {
			if from >= 0 {
				from = -1
				continue
			}
			pieces = s.resplit(text, pieces, i)
			continue
		}
		// Token counts of concatenations are only roughly additive; the
		// real count decides, shedding pieces from the end while over.
		cs, ce := trimRange(text, start, pieces[j-1].end)
		var n int
		if p := pieces[i]; j == i+1 && p.exact && cs == p.start && ce == p.end {
			n = p.tokens // already a real count of exactly this text
		} else {
			n = s.tok.Count(text[cs:ce])
		}
		resplit := false
		for n > s.size {
			switch {
			case j > i+1:
				for excess := n - s.size; j > i+1 && excess > 0; {
					j--
					excess -= pieces[j].tokens
				}
			case start != pieces[i].start:
				start = pieces[i].start
			default:
				resplit = true
			}
			if resplit {
				break
			}
			cs, ce = trimRange(text, start, pieces[j-1].end)
			n = s.tok.Count(text[cs:ce])
		}
		if resplit {
			pieces = s.resplit(text, pieces, i)
			from = -1
			continue
		}
		if cs == ce || ce <= lastEnd {
			// Whitespace only, or nothing beyond the previous chunk.
			i, from = j, -1
			continue
		}
		chunks = append(chunks, Chunk{
			DocID: docID, Index: len(chunks), Text: text[cs:ce], Tokens: n, Start: cs, End: ce,
		})
		lastEnd = ce
		from, ovTok = -1, 0
		if s.overlap > 0 && j < len(pieces) {
			if limit := min(s.overlap, s.size-pieces[j].tokens); limit > 0 {
				from, ovTok = s.overlapStart(text, cs, ce, pieces[j-1].end, limit)
			}
		}
		i = j
	}
	return chunks
}

// resplit replaces pieces[i], whose text turned out to be over the limit,
// by halves counted for real.
func (s *Splitter) resplit(text string, pieces []piece, i int) []piece {
	var finer []piece
	p := pieces[i]
	mid := s.snap(text, p.start+(p.end-p.start)/2)
	if mid <= p.start {
		mid = s.next(text, p.start)
	}
	if mid >= p.end {
		// A single character always fits (minChunkSize); keep it.
		p.tokens, p.exact = 0, false
		finer = []piece{p}
	} else {
		s.bisect(text, p.start, mid, &finer)
		s.bisect(text, mid, p.end, &finer)
	}
	out := make([]piece, 0, len(pieces)+len(finer))
	out = append(out, pieces[:i]...)
	out = append(out, finer...)
	return append(out, pieces[i+1:]...)
}

// overlapStart picks where the next chunk starts inside the chunk
// text[lo:shareEnd] whose pieces end at end: the earliest boundary p such
// that the shared region, text[p:shareEnd] trimmed, has at most limit
// tokens. Coarse boundaries (paragraph, sentence) are preferred unless they
// give less than half the limit; token boundaries are the last resort. It
// returns -1 when no boundary fits, else p and the shared tokens.
func (s *Splitter) overlapStart(text string, lo, shareEnd, end, limit int) (int, int) {
	ws := s.snap(text, end-(8*limit+16))
	if ws <= lo {
		ws = s.next(text, lo)
	}
	if ws >= end {
		return -1, 0
	}
	ends := s.tok.tokenEnds(text[ws:end])
	count := func(p int) int {
		if ends != nil {
			return tokensFrom(ends, p-ws)
		}
		return s.tok.Count(text[p:end])
	}
	var best []int // candidates of the chosen level, from the chosen one on
	bestTok := 0
	consider := func(cands []int) bool {
		k := sort.Search(len(cands), func(k int) bool { return count(cands[k]) <= limit })
		if k < len(cands) {
			if n := count(cands[k]); n > bestTok {
				best, bestTok = cands[k:], n
			}
		}
		return 2*bestTok >= limit
	}
	done := false
	for _, sep := range s.seps {
		if cands := cutPoints(text, ws, end, sep); len(cands) > 0 && consider(cands) {
			done = true
			break
		}
	}
	if !done && ends != nil {
		var cands []int
		for _, e := range ends[:len(ends)-1] {
			if p := ws + e; clusterBoundary(text, p) {
				cands = append(cands, p)
			}
		}
		consider(cands)
	}
	// The estimate came from tokens of a wider window; confirm it on the
	// region the two chunks will really share once trimmed. Trimming
	// matters: " retrieval" is one token, "retrieval" three.
	for _, p := range best {
		if p >= shareEnd {
			break
		}
		tp, _ := trimRange(text, p, shareEnd)
		if tp >= shareEnd {
			break
		}
		if n := s.tok.Count(text[tp:shareEnd]); n <= limit {
			return p, n
		}
	}
	return -1, 0
}

// trimRange narrows text[a:b] to exclude surrounding Unicode whitespace.
func trimRange(text string, a, b int) (int, int) {
	seg := text[a:b]
	left := strings.TrimLeftFunc(seg, unicode.IsSpace)
	a += len(seg) - len(left)
	right := strings.TrimRightFunc(left, unicode.IsSpace)
	return a, a + len(right)
}
