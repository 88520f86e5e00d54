package ner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/docgraph/docgraph/cjk"
	"github.com/docgraph/docgraph/loader"
)

// offlineVersion names the offline extractor's behaviour; bump it whenever a
// change alters what is extracted, since stores record it in their fingerprint.
const offlineVersion = "offline-v4"

// Offline is the extractor docgraph uses when no language model is
// configured: capitalised names, quoted titles, dates and measured numbers,
// related by sharing a sentence. It is deterministic and safe for concurrent use.
type Offline struct {
	window      int
	descLen     int
	maxKeywords int
	titleLinks  int
	numbers     bool
}

// OfflineOption configures an Offline extractor.
type OfflineOption func(*Offline)

// WithRelationWindow relates each entity to at most n entities that follow
// it in the same sentence (default 3), which keeps long sentences linear.
func WithRelationWindow(n int) OfflineOption {
	return func(o *Offline) {
		if n > 0 {
			o.window = n
		}
	}
}

// WithDescriptionLength caps entity and relation descriptions at n bytes (default 200).
func WithDescriptionLength(n int) OfflineOption {
	return func(o *Offline) {
		if n > 0 {
			o.descLen = n
		}
	}
}

// WithNumbers turns extraction of numbers with units, percentages and
// amounts of money on or off (default on). Dates are always extracted.
func WithNumbers(on bool) OfflineOption {
	return func(o *Offline) { o.numbers = on }
}

// NewOffline returns an offline extractor.
func NewOffline(opts ...OfflineOption) *Offline {
	o := &Offline{window: 3, descLen: 200, maxKeywords: 5, titleLinks: 8, numbers: true}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// Name identifies the extractor and every option that changes its output.
func (o *Offline) Name() string {
	def := NewOffline()
	var opts []string
	if o.window != def.window {
		opts = append(opts, fmt.Sprintf("window=%d", o.window))
	}
	if o.descLen != def.descLen {
		opts = append(opts, fmt.Sprintf("desc=%d", o.descLen))
	}
	if o.numbers != def.numbers {
		opts = append(opts, fmt.Sprintf("numbers=%t", o.numbers))
	}
	if len(opts) == 0 {
		return offlineVersion
	}
	return offlineVersion + "(" + strings.Join(opts, ",") + ")"
}

// Extract returns the chunk's entities in order of first mention, the
// document title first, and the relations between entities that share a sentence.
func (o *Offline) Extract(ctx context.Context, c Chunk) (*Extraction, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("offline extract chunk %q: %w", c.ID, err)
	}
	x := &offExtraction{o: o, text: c.Text}
	defer x.release()
	if err := x.run(ctx, c.DocTitle); err != nil {
		return nil, fmt.Errorf("offline extract chunk %q: %w", c.ID, err)
	}
	return x.result(), nil
}

// Mentions finds the entity names in arbitrary text such as a question, so
// retrieval can link it to the entities of the graph.
func (o *Offline) Mentions(text string) []Entity {
	x := &offExtraction{o: o, text: text, query: true, bridge: true}
	defer x.release()
	_ = x.run(context.Background(), "")
	return x.entities()
}

// offScratch is the working memory of one extraction that none of its
// results keeps: the next extraction reuses it rather than allocate it
// anew (a chunk's tokens, spans and word sets are most of the bytes the
// extractor allocates).
type offScratch struct {
	toks      []offToken
	consumed  []bool
	spans     []offSpan
	lowers    []string
	lowered   []bool
	lowerSeen map[string]bool
	capMid    map[string]bool
}

var offScratches = sync.Pool{New: func() any {
	return &offScratch{lowerSeen: map[string]bool{}, capMid: map[string]bool{}}
}}

// maxScratchTokens bounds the extractions whose memory is kept for reuse:
// a huge text (a question pasted whole, a chunk of a custom size) would
// keep its arrays and maps alive, and clearing a big map costs its size.
const maxScratchTokens = 1 << 14

// scratch takes working memory for an extraction of text.
func (x *offExtraction) scratch() *offScratch {
	if x.s == nil {
		x.s = offScratches.Get().(*offScratch)
	}
	return x.s
}

// release hands the working memory back, emptied, for the next extraction.
func (x *offExtraction) release() {
	s := x.s
	if s == nil || len(x.toks) > maxScratchTokens {
		return
	}
	clear(x.lowers) // no view of this text outlives it in the pool
	clear(x.spans)
	clear(s.lowerSeen)
	clear(s.capMid)
	s.toks, s.consumed, s.spans, s.lowers, s.lowered = x.toks[:0], x.consumed[:0], x.spans[:0], x.lowers[:0], x.lowered[:0]
	x.s = nil
	offScratches.Put(s)
}

// offSpan is one mention of an entity in the text.
type offSpan struct {
	start, end int // bytes of the name in the text
	t0, t1     int // its tokens
	sent       int
	name, key  string
	typ        string
	altKey     string // key of the name with the leading "The" it lost
	altStart   int
	top        bool // not inside another mention
	alias      bool // a longer reading of names that relate on their own
	quoted     bool
}

type offEntity struct {
	name, typ, desc string
}

type offExtraction struct {
	o         *Offline
	text      string
	toks      []offToken
	consumed  []bool
	sentStart []int
	sentEnd   []int
	spans     []offSpan
	aliasing  bool            // spans added now are aliases (offSpan.alias)
	lowerSeen map[string]bool // words seen in lower case: "Today" opening a sentence is one
	capMid    map[string]bool // words seen capitalised inside a sentence
	lowers    []string        // tokens in lower case, filled on demand
	lowered   []bool

	titleKey, aliasKey string
	title, alias       string
	aliasType          string

	hasCJK   bool               // the text has CJK characters (offline_cjk.go)
	query    bool               // a question (Mentions): CJK runs are cut into terms
	bridge   bool               // ...and terms joined by 和, 与, 及 or 之 are also read as one
	words    bool               // ...keeping common Japanese words (QueryTerms)
	cjkTerms map[string]cjkTerm // the chunk's known CJK terms
	cjkMax   int                // the longest of them, in characters
	japanese bool               // the text has hiragana: its kanji are cut as Japanese

	order  []string // entity keys in order of first mention
	ents   map[string]*offEntity
	rels   []Relation
	relIdx map[[2]string]int // by the two keys, in order

	s *offScratch // where the working memory above came from
}

// resized returns b with length n, all zero, reusing its array when it can.
func resized[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	b = b[:n]
	clear(b)
	return b
}

func (x *offExtraction) run(ctx context.Context, title string) error {
	s := x.scratch()
	x.toks, _ = offTokenize(x.text, slices.Grow(s.toks[:0], len(x.text)/5+16))
	x.consumed = resized(s.consumed, len(x.toks))
	x.spans = slices.Grow(s.spans[:0], len(x.toks)/6+4)
	x.title = strings.Join(strings.Fields(strings.ToValidUTF8(title, "")), " ")
	x.titleKey = offKey(x.title)
	if x.titleKey == "" || loader.GenericTitle(x.title) {
		// "Table of Contents" or "README" names no document: as an entity
		// it would join every document so titled.
		x.title, x.titleKey = "", ""
	}
	if base, hint, ok := offSplitParenthesis(x.title); ok {
		x.alias, x.aliasKey = base, offKey(base)
		x.aliasType = offHintType(hint)
		if x.aliasKey == "" || x.aliasKey == x.titleKey {
			x.alias, x.aliasKey = "", ""
		}
	}
	for _, t := range x.toks {
		if t.kind == offCJK {
			x.hasCJK = true
			x.cjkPrepare()
			break
		}
	}
	x.lowerSeen, x.capMid = s.lowerSeen, s.capMid
	for _, t := range x.toks {
		switch {
		case t.kind != offWord:
		case t.has(offLower):
			x.lowerSeen[t.text(x.text)] = true
		case t.has(offCap) && !t.has(offFirst):
			x.capMid[t.text(x.text)] = true
		}
	}
	for s0, k := 0, 0; s0 < len(x.toks); k++ {
		if k&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		s1 := s0 + 1
		for s1 < len(x.toks) && x.toks[s1].sent == x.toks[s0].sent {
			s1++
		}
		x.sentStart = append(x.sentStart, int(x.toks[s0].start))
		x.sentEnd = append(x.sentEnd, int(x.toks[s1-1].end))
		x.sentence(len(x.sentStart)-1, s0, s1)
		s0 = s1
	}
	x.resolve()
	return nil
}

// sentence finds the mentions of one sentence, tokens [s0, s1).
func (x *offExtraction) sentence(si, s0, s1 int) {
	first := len(x.spans)
	if x.hasCJK {
		x.cjkSentence(si, s0, s1)
	}
	x.dates(si, s0, s1)
	x.quotes(si, s0, s1)
	x.names(si, s0, s1)
	spans := x.spans[first:]
	slices.SortStableFunc(spans, compareSpans)
	maxEnd := -1
	for i := range spans {
		if spans[i].alias {
			continue
		}
		spans[i].top = spans[i].start >= maxEnd
		if spans[i].end > maxEnd {
			maxEnd = spans[i].end
		}
	}
}

// compareSpans orders the mentions of a sentence by where they start,
// the longer first, a quoted title before a name of the same extent.
func compareSpans(a, b offSpan) int {
	switch {
	case a.start != b.start:
		return cmp.Compare(a.start, b.start)
	case a.end != b.end:
		return cmp.Compare(b.end, a.end)
	case a.quoted && !b.quoted:
		return -1
	case b.quoted && !a.quoted:
		return 1
	}
	return 0
}

func (x *offExtraction) add(sp offSpan) {
	sp.name = offCollapse(sp.name)
	if sp.name == "" {
		return
	}
	sp.key = offKey(sp.name)
	if sp.key == "" {
		return
	}
	sp.alias = x.aliasing
	x.spans = append(x.spans, sp)
}

// resolve assigns every mention to an entity and builds the relations.
func (x *offExtraction) resolve() {
	x.ents = make(map[string]*offEntity, len(x.spans)/2+2)
	x.relIdx = make(map[[2]string]int, len(x.spans))
	keys := make(map[string]bool, len(x.spans)+2)
	for _, sp := range x.spans {
		keys[sp.key] = true
	}
	keys[x.titleKey] = x.titleKey != ""
	keys[x.aliasKey] = x.aliasKey != ""
	for i := range x.spans {
		sp := &x.spans[i]
		if sp.altKey != "" && keys[sp.altKey] {
			sp.key, sp.start = sp.altKey, sp.altStart
			sp.name = offCollapse(x.text[sp.start:sp.end])
		}
	}
	firstDesc := ""
	if len(x.sentStart) > 0 {
		firstDesc = x.snippet(x.sentStart[0], x.sentEnd[0], x.sentStart[0], x.sentStart[0])
	}
	if x.title != "" {
		x.entity(x.titleKey, x.title, "document", firstDesc)
	}
	if x.alias != "" {
		x.entity(x.aliasKey, x.alias, x.aliasType, firstDesc)
		x.relate(x.titleKey, x.aliasKey, "title", firstDesc)
	}
	for _, sp := range x.spans {
		desc := "" // an entity keeps the description of its first mention
		if _, known := x.ents[sp.key]; !known {
			desc = x.snippet(x.sentStart[sp.sent], x.sentEnd[sp.sent], sp.start, sp.end)
		}
		x.entity(sp.key, sp.name, sp.typ, desc)
	}
	x.titleRelations()
	// Entities that share a sentence: each one with the next few.
	for i := 0; i < len(x.spans); {
		j := i
		for j < len(x.spans) && x.spans[j].sent == x.spans[i].sent {
			j++
		}
		x.cooccur(x.spans[i:j])
		i = j
	}
}

func (x *offExtraction) cooccur(spans []offSpan) {
	for i := range spans {
		a := &spans[i]
		if !a.top {
			continue
		}
		paired := 0
		for j := i + 1; j < len(spans) && paired < x.o.window; j++ {
			b := &spans[j]
			if !b.top || b.key == a.key {
				continue
			}
			paired++
			x.relateLazy(a.key, b.key, func() (string, string) {
				return x.between(a.end, b.start, a.t1, b.t0), x.snippet(a.start, b.end, a.start, b.end)
			})
		}
	}
}

// titleRelations links the document title to the entities of the chunk's
// opening sentence, which in encyclopaedic text is about the title's subject.
func (x *offExtraction) titleRelations() {
	if x.title == "" {
		return
	}
	linked := 0
	for i := 0; i < len(x.spans) && linked < x.o.titleLinks; i++ {
		sp := &x.spans[i]
		if sp.sent > 1 || sp.sent == 1 && linked > 0 {
			break
		}
		if !sp.top || sp.key == x.titleKey || sp.key == x.aliasKey {
			continue
		}
		linked++
		x.relateLazy(x.titleKey, sp.key, func() (string, string) {
			kw := x.between(x.sentStart[sp.sent], sp.start, x.sentOpen(sp.sent), sp.t0)
			return kw, x.snippet(x.sentStart[sp.sent], x.sentEnd[sp.sent], sp.start, sp.end)
		})
	}
}

func (x *offExtraction) sentOpen(si int) int {
	return sort.Search(len(x.toks), func(i int) bool { return int(x.toks[i].sent) >= si })
}

func (x *offExtraction) entity(key, name, typ, desc string) {
	if e, ok := x.ents[key]; ok {
		if e.typ == "other" && typ != "other" && e.typ != "document" {
			e.typ = typ
		}
		return
	}
	x.ents[key] = &offEntity{name: name, typ: typ, desc: desc}
	x.order = append(x.order, key)
}

func (x *offExtraction) relate(ka, kb, keywords, desc string) {
	x.relateLazy(ka, kb, func() (string, string) { return keywords, desc })
}

// relateLazy is relate with the keywords and description made by describe,
// called only for a pair not related before: a repeated pair only weighs
// more, and its words and snippet were made for nothing.
func (x *offExtraction) relateLazy(ka, kb string, describe func() (keywords, desc string)) {
	if ka == kb {
		return
	}
	id := [2]string{ka, kb}
	if kb < ka {
		id = [2]string{kb, ka}
	}
	if i, ok := x.relIdx[id]; ok {
		x.rels[i].Weight++
		return
	}
	keywords, desc := describe()
	x.relIdx[id] = len(x.rels)
	x.rels = append(x.rels, Relation{
		Source: x.ents[ka].name, Target: x.ents[kb].name,
		Keywords: keywords, Description: desc, Weight: 1,
	})
}

// between describes what lies between two mentions, bytes [lo, hi) and
// tokens [t0, t1): its content words, or for CJK text its terms.
func (x *offExtraction) between(lo, hi, t0, t1 int) string {
	if x.hasCJK && lo < hi && cjk.Contains(x.text[lo:hi]) {
		return x.cjkKeywords(lo, hi)
	}
	return x.keywords(t0, t1)
}

// keywords are the content words between two mentions, tokens [t0, t1).
func (x *offExtraction) keywords(t0, t1 int) string {
	var kw []string
	for t := t0; t < t1 && len(kw) < x.o.maxKeywords; t++ {
		tok := x.toks[t]
		if tok.kind != offWord || !tok.has(offLower) || tok.end-tok.start < 3 {
			continue
		}
		w := tok.text(x.text)
		if offStopWords[w] || offConnectors[w] {
			continue
		}
		dup := false
		for _, k := range kw {
			dup = dup || k == w
		}
		if !dup {
			kw = append(kw, w)
		}
	}
	return strings.Join(kw, ", ")
}

// snippet returns text[lo:hi] with white space collapsed, cut to the
// description length around the focus [fs, fe) on word boundaries.
func (x *offExtraction) snippet(lo, hi, fs, fe int) string {
	limit := x.o.descLen
	if hi-lo > limit {
		from := fs - limit/4
		if fe-fs > limit*3/4 {
			from = fs
		}
		if from < lo {
			from = lo
		}
		to := from + limit
		if to > hi {
			to, from = hi, max(lo, hi-limit)
		}
		lo, hi = offWordBoundary(x.text, from, lo, false), offWordBoundary(x.text, to, hi, true)
	}
	return offCollapse(x.text[lo:hi])
}

// offWordBoundary moves i to the nearest rune-aligned white space at or
// inside the limit, backwards for an end and forwards for a start.
func offWordBoundary(s string, i, limit int, end bool) int {
	for steps := 0; steps < 24; steps++ {
		if end {
			if i <= limit || i <= 0 {
				break
			}
		} else if i >= limit || i >= len(s) {
			break
		}
		if i > 0 && i < len(s) && s[i] == ' ' {
			return i
		}
		if end {
			i--
		} else {
			i++
		}
	}
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		if end {
			i--
		} else {
			i++
		}
	}
	return i
}

func (x *offExtraction) entities() []Entity {
	out := make([]Entity, 0, len(x.order))
	for _, k := range x.order {
		e := x.ents[k]
		out = append(out, Entity{Name: e.name, Type: e.typ, Description: e.desc})
	}
	return out
}

func (x *offExtraction) result() *Extraction {
	// An exact copy: the slice grew by doubling, and a document's
	// extractions may all be held until its graph is built.
	var rels []Relation
	if len(x.rels) > 0 {
		rels = slices.Clone(x.rels)
	}
	return &Extraction{Entities: x.entities(), Relations: rels}
}

// offKey normalises a name the way the graph merges names: lower case,
// letters and digits only, apostrophes dropped, other runs of punctuation and
// space as one space.
func offKey(name string) string {
	var sb strings.Builder
	sb.Grow(len(name))
	space := false
	for _, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			space = false
			sb.WriteRune(unicode.ToLower(r))
		case r == '\'' || r == '’':
		default:
			space = true
		}
	}
	return sb.String()
}

// offCollapse trims s and turns every run of white space into one space.
func offCollapse(s string) string {
	clean := true
	prevSpace := true
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			// Most non-ASCII text (CJK, accented letters) needs no work.
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || offSpaceRune(r) || unicode.IsControl(r) {
				clean = false
				break
			}
			prevSpace = false
			i += size
			continue
		}
		sp := c == ' '
		if c == '\t' || c == '\n' || c == '\r' || c < ' ' || c == 0x7f || sp && prevSpace {
			clean = false
			break
		}
		prevSpace = sp
		i++
	}
	if clean && !prevSpace {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	pending := false
	for _, r := range strings.ToValidUTF8(s, "") {
		if offSpaceRune(r) || r == '\n' || unicode.IsControl(r) {
			pending = sb.Len() > 0
			continue
		}
		if pending {
			sb.WriteByte(' ')
			pending = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// offSplitParenthesis splits "Theodred II (Bishop of Elmham)" into its base
// name and the disambiguation in parentheses.
func offSplitParenthesis(title string) (base, hint string, ok bool) {
	if !strings.HasSuffix(title, ")") {
		return "", "", false
	}
	open := strings.LastIndex(title, "(")
	if open <= 0 {
		return "", "", false
	}
	base = strings.TrimSpace(title[:open])
	hint = strings.TrimSpace(title[open+1 : len(title)-1])
	return base, hint, base != "" && hint != ""
}

// offHintType types a name from its disambiguation: "film", "singer", "river".
func offHintType(hint string) string {
	for _, w := range strings.Fields(offKey(hint)) {
		switch {
		case offWorkCues[w]:
			return "work"
		case offPersonHints[w]:
			return "person"
		case w == "band" || w == "company" || w == "organization" || w == "party" || w == "club" || w == "team":
			return "organization"
		case offLocationWords[w] || w == "country" || w == "region":
			return "location"
		}
	}
	return "other"
}

var offPersonHints = offWordSet(`actor actress singer musician footballer politician writer author
	poet painter composer director producer rapper boxer cricketer athlete player wrestler
	businessman bishop king queen prince princess saint general admiral philosopher scientist
	physicist chemist mathematician journalist artist sculptor architect lawyer judge`)
