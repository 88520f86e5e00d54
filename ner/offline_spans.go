package ner

import (
	"strconv"
	"strings"
)

// Span finders of the offline extractor. Each works on one sentence's
// tokens [s0, s1) and adds the mentions it finds.

func (x *offExtraction) word(i int) string { return x.toks[i].text(x.text) }

// lower returns token i in lower case, computed once per token.
func (x *offExtraction) lower(i int) string {
	if x.lowers == nil {
		s := x.scratch()
		x.lowers, x.lowered = resized(s.lowers, len(x.toks)), resized(s.lowered, len(x.toks))
	}
	if !x.lowered[i] {
		x.lowers[i], x.lowered[i] = offLowerWord(x.word(i)), true
	}
	return x.lowers[i]
}

func (x *offExtraction) isPunct(i int, r rune) bool {
	return i >= 0 && i < len(x.toks) && x.toks[i].kind == offPunct && x.toks[i].r == r
}

func (x *offExtraction) month(i int) bool {
	t := x.toks[i]
	if t.kind != offWord || !t.has(offCap) || t.end-t.start > 10 || !strings.ContainsRune("JFMASOND", rune(x.text[t.start])) {
		return false
	}
	return offMonths[strings.TrimSuffix(x.lower(i), ".")]
}

func (x *offExtraction) number(i int) (int, bool) {
	t := x.toks[i]
	if t.kind != offNum || !t.has(offDigits) || t.end-t.start > 4 {
		return 0, false
	}
	v, err := strconv.Atoi(x.word(i))
	return v, err == nil
}

func (x *offExtraction) day(i, s1 int) bool {
	if i >= s1 {
		return false
	}
	if v, ok := x.number(i); ok {
		return v >= 1 && v <= 31 && x.toks[i].end-x.toks[i].start <= 2
	}
	w := x.lower(i)
	if x.toks[i].kind == offNum && len(w) >= 3 && len(w) <= 4 {
		suf := w[len(w)-2:]
		if suf == "st" || suf == "nd" || suf == "rd" || suf == "th" {
			v, err := strconv.Atoi(w[:len(w)-2])
			return err == nil && v >= 1 && v <= 31
		}
	}
	return false
}

func (x *offExtraction) yearish(i, s1 int) bool {
	if i >= s1 {
		return false
	}
	v, ok := x.number(i)
	return ok && v > 0
}

// year reports a stand-alone year 1000-2099 or a decade like "1990s".
func (x *offExtraction) year(i int) bool {
	t := x.toks[i]
	if t.kind != offNum {
		return false
	}
	w := x.word(i)
	if len(w) == 5 && (w[4] == 's') {
		w = w[:4]
	}
	if len(w) != 4 {
		return false
	}
	v, err := strconv.Atoi(w)
	return err == nil && v >= 1000 && v <= 2099
}

func (x *offExtraction) addRange(si, a, b int, typ string) {
	for k := a; k < b; k++ {
		x.consumed[k] = true
	}
	start, end := int(x.toks[a].start), int(x.toks[b-1].end)
	x.add(offSpan{start: start, end: end, t0: a, t1: b, sent: si, name: x.text[start:end], typ: typ})
}

// dates finds "11 November 875", "March 3, 1990", "January 1960", stand-alone
// years, and numbers that carry a unit, a currency or a percent sign.
func (x *offExtraction) dates(si, s0, s1 int) {
	for i := s0; i < s1; i++ {
		if x.consumed[i] {
			continue
		}
		t := x.toks[i]
		switch {
		case x.day(i, s1) && i+1 < s1 && x.month(i+1):
			end := i + 2
			if x.yearish(end, s1) {
				end++
			} else if x.isPunct(end, ',') && x.yearish(end+1, s1) && x.year(end+1) {
				end += 2
			}
			x.addRange(si, i, end, "date")
			i = end - 1
		case x.month(i) && x.day(i+1, s1) && (i+2 >= s1 || x.toks[i+2].kind != offNum):
			end := i + 2
			if x.isPunct(end, ',') && end+1 < s1 && x.year(end+1) {
				end += 2
			} else if end < s1 && x.year(end) {
				end++
			}
			x.addRange(si, i, end, "date")
			i = end - 1
		case x.month(i) && i+1 < s1 && x.year(i+1):
			x.addRange(si, i, i+2, "date")
			i++
		case x.year(i) && x.standaloneYear(i, s0, s1):
			x.addRange(si, i, i+1, "date")
		case t.kind == offNum && x.o.numbers:
			if end, ok := x.measure(i, s1); ok {
				start := i
				if i > s0 && x.currency(i-1) {
					start = i - 1
				}
				x.addRange(si, start, end, "number")
				i = end - 1
			}
		}
	}
}

// standaloneYear rejects years that are really parts of names ("Windows
// 2000") or quantities ("2000 people", "$2000").
func (x *offExtraction) standaloneYear(i, s0, s1 int) bool {
	if i > s0 {
		p := x.toks[i-1]
		if x.currency(i - 1) {
			return false
		}
		if p.kind == offWord && p.has(offCap) && !p.has(offFirst) && !offIsStop(x.word(i-1)) && !x.month(i-1) && p.end == x.toks[i].start-1 {
			return false
		}
	}
	if i+1 < s1 {
		n := x.toks[i+1]
		if n.kind == offWord && (offUnits[x.lower(i+1)] || offScales[x.lower(i+1)]) || n.kind == offPunct && n.r == '%' {
			return false
		}
	}
	return true
}

func (x *offExtraction) currency(i int) bool {
	t := x.toks[i]
	return t.kind == offPunct && (t.r == '$' || t.r == '£' || t.r == '€' || t.r == '¥' || t.r == '₹')
}

// measure returns the end of a number with a unit, scale or percent sign
// starting at token i.
func (x *offExtraction) measure(i, s1 int) (int, bool) {
	end := i + 1
	money := i > 0 && x.currency(i-1)
	if end < s1 && x.toks[end].kind == offWord && offScales[x.lower(end)] {
		end++
		money = true
	}
	if end < s1 && x.isPunct(end, '%') {
		return end + 1, true
	}
	if end < s1 && x.toks[end].kind == offWord && offUnits[x.lower(end)] {
		return end + 1, true
	}
	return end, money
}

// quotes finds titles in quotation marks: "What Is God?", “Hello Love”,
// “Brother” and 'Veliki Prezir'.
func (x *offExtraction) quotes(si, s0, s1 int) {
	open := -1
	var openR rune
	for k := s0; k < s1; k++ {
		t := x.toks[k]
		if t.kind != offPunct {
			continue
		}
		switch t.r {
		case '“', '‘', '«':
			open, openR = k, t.r
		case '”', '’', '»':
			want := map[rune]rune{'”': '“', '’': '‘', '»': '«'}[t.r]
			if open >= 0 && openR == want {
				x.quoted(si, open, k)
				open = -1
			} else if open >= 0 && openR == '"' && t.r == '”' {
				x.quoted(si, open, k)
				open = -1
			}
		case '"':
			if open >= 0 && (openR == '"' || openR == '“') {
				x.quoted(si, open, k)
				open = -1
			} else {
				open, openR = k, '"'
			}
		case '\'':
			switch {
			case open >= 0 && openR == '\'' && !t.has(offSpace):
				x.quoted(si, open, k)
				open = -1
			case open < 0 && (k == s0 || t.has(offSpace) || x.toks[k-1].kind == offPunct) && k+1 < s1 && !x.toks[k+1].has(offSpace):
				open, openR = k, '\''
			}
		}
	}
}

func (x *offExtraction) quoted(si, open, close int) {
	a, b := open+1, close
	for a < b && x.toks[a].kind == offPunct && x.toks[a].r != '(' {
		a++
	}
	for b > a && x.toks[b-1].kind == offPunct && strings.ContainsRune(",.;:", x.toks[b-1].r) {
		b--
	}
	if a >= b || b-a > 16 {
		return
	}
	first := x.toks[a]
	if !(first.kind == offWord && first.has(offCap) || first.kind == offNum) {
		return
	}
	start, end := int(first.start), int(x.toks[b-1].end)
	if end-start > 120 || strings.ContainsAny(x.text[start:end], "\n") {
		return
	}
	words, content, caps := 0, 0, 0
	for k := a; k < b; k++ {
		t := x.toks[k]
		if t.kind == offPunct {
			continue
		}
		words++
		w := x.lower(k)
		if offStopWords[w] || offConnectors[w] || t.kind == offNum {
			continue
		}
		content++
		if t.has(offCap) {
			caps++
		}
	}
	if words > 12 || words > 3 && caps*5 < content*3 {
		return
	}
	x.add(offSpan{start: start, end: end, t0: a, t1: b, sent: si, name: x.text[start:end], typ: "work", quoted: true})
}

// nameWord reports a capitalised word that can be part of a name.
func (x *offExtraction) nameWord(i int) bool {
	t := x.toks[i]
	if t.kind != offWord || !t.has(offCap) || x.consumed[i] {
		return false
	}
	if t.has(offAllCaps) && offStopWords[x.lower(i)] && t.end-t.start > 1 {
		return false // "FROM", "WHERE" in code and shouting
	}
	return true
}

func (x *offExtraction) connector(i int) (ok, weak bool) {
	t := x.toks[i]
	if t.kind == offPunct {
		return t.r == '&' && t.has(offSpace), false
	}
	if t.kind != offWord || !t.has(offLower) {
		return false, false
	}
	w := x.word(i)
	return offConnectors[w], offWeakConnectors[w]
}

// ordinal reports "3rd", "12Th".
func (x *offExtraction) ordinal(i int) bool {
	t := x.toks[i]
	if t.kind != offNum || t.end-t.start < 3 || t.end-t.start > 6 {
		return false
	}
	w := x.lower(i)
	suf := w[len(w)-2:]
	if suf != "st" && suf != "nd" && suf != "rd" && suf != "th" {
		return false
	}
	for k := 0; k < len(w)-2; k++ {
		if !offDigit(w[k]) {
			return false
		}
	}
	return true
}

// numStart reports a number that opens a name: "11 Harrowhouse", "26th Chess Olympiad".
func (x *offExtraction) numStart(i, s1 int) bool {
	return x.nameNumber(i) && i+1 < s1 && x.nameWord(i+1) && !x.toks[i+1].has(offNL)
}

// nameNumber reports a whole number or ordinal that can be part of a name;
// "9.6" is a section number, not part of the heading's name.
func (x *offExtraction) nameNumber(i int) bool {
	t := x.toks[i]
	if t.kind != offNum || x.consumed[i] {
		return false
	}
	if x.ordinal(i) {
		return true
	}
	if !t.has(offDigits) || t.end-t.start > 4 {
		return false
	}
	return !strings.ContainsAny(x.word(i), ".,")
}

// offCut is a place where a raw span may divide into separate names: the
// left name ends before token l and the right one starts at token r. Hard
// cuts ("and") divide it unless the whole is known to be one name; soft ones
// (a possessive, "for", "with") yield the whole and the parts.
type offCut struct {
	l, r int
	hard bool
}

// extend returns the end of the raw capitalised span that starts at token i.
func (x *offExtraction) extend(i, s1 int) (int, []offCut) {
	var cuts []offCut
	if x.toks[i].kind == offNum {
		// "23 Winter Olympic Games" also names "Winter Olympic Games".
		cuts = append(cuts, offCut{l: i + 1, r: i + 1})
	}
	j := i + 1
	for j < s1 {
		t := x.toks[j]
		if t.has(offNL) {
			break
		}
		prev := x.toks[j-1]
		if prev.has(offPoss) {
			if !x.nameWord(j) && !x.numStart(j, s1) {
				break
			}
			if !offPossessiveHeads[x.lower(j)] && !offPossessiveOwners[x.lower(j-1)] {
				cuts = append(cuts, offCut{l: j, r: j})
			}
			j++
			continue
		}
		if x.nameWord(j) {
			j++
			continue
		}
		lineEnd := j+1 >= len(x.toks) || x.toks[j+1].has(offNL)
		if x.nameNumber(j) && prev.kind == offWord && (j+1 >= s1 || x.toks[j+1].kind != offNum) &&
			!(lineEnd && t.end-t.start >= 3) { // "Connection Tracking 250": a page number
			// "Apollo 11", "Live at the Rainbow 1973": the number may
			// also be a date or a count after the name, so keep both.
			cuts = append(cuts, offCut{l: j, r: j + 1})
			j++
			continue
		}
		// "Saxe- Coburg": a hyphen the text spaced out.
		if t.kind == offPunct && (t.r == '-' || t.r == '‐') && !t.has(offSpace) && j+1 < s1 && x.nameWord(j+1) {
			j += 2
			continue
		}
		k, weak := j, false
		for k < s1 && k-j < 2 {
			ok, w := x.connector(k)
			if !ok {
				break
			}
			weak = weak || w
			k++
		}
		if k > j && k < s1 && (x.nameWord(k) || x.numStart(k, s1)) && !x.toks[k].has(offNL) {
			switch w := x.word(j); {
			case w == "and" || w == "&":
				cuts = append(cuts, offCut{l: j, r: k, hard: true})
			case weak:
				cuts = append(cuts, offCut{l: j, r: k})
			}
			j = k + 1
			continue
		}
		// "Judiciary Act of 1869"
		if k == j+1 && x.word(j) == "of" && k < s1 && x.consumed[k] && x.year(k) && (k+1 >= s1 || !x.nameWord(k+1)) {
			j = k + 1
		}
		break
	}
	return j, cuts
}

// firstPiece returns the end of the first name in the raw span at token i,
// before any "and", "in" or possessive that may divide it.
func (x *offExtraction) firstPiece(i, s1 int) int {
	e, cuts := x.extend(i, s1)
	if len(cuts) > 0 {
		e = cuts[0].l
	}
	return e
}

// names finds capitalised spans, splits them into the names they contain
// and adds each.
func (x *offExtraction) names(si, s0, s1 int) {
	for i := s0; i < s1; {
		if !x.nameWord(i) && !x.numStart(i, s1) {
			i++
			continue
		}
		j, cuts := x.extend(i, s1)
		if last, lastSoft := x.nameSpan(si, i, j, cuts); last >= 0 {
			x.suffixes(si, last, lastSoft, j, s1)
		}
		i = j
	}
}

// nameSpan trims a raw capitalised span [a, b) and adds the names in it. It
// returns the first token of the last name, or -1 when there is none, and
// the first token of that name's last part after soft cuts.
func (x *offExtraction) nameSpan(si, a, b int, cuts []offCut) (int, int) {
	altStart := -1
	if x.toks[a].has(offFirst) && x.toks[a].kind == offWord {
		w := x.lower(a)
		single := b-a == 1 || b-a == 2 && x.toks[b-1].kind == offNum
		if offStopWords[w] || single && (x.lowerSeen[w] || offCommonShape(w) && !x.capMid[x.word(a)]) {
			keep := false
			if w == "the" || w == "a" || w == "an" {
				altStart = a
				k := offKey(x.text[x.toks[a].start:x.toks[b-1].end])
				keep = k != "" && (k == x.titleKey || k == x.aliasKey)
			}
			if !keep {
				a++
				for a < b {
					if ok, _ := x.connector(a); !ok && x.toks[a].kind != offNum {
						break
					}
					a++
				}
			} else {
				altStart = -1
			}
		}
	}
	if a >= b {
		return -1, -1
	}
	// Pieces between "and"s: "Jen Armbruster and Gus Triandos" is two
	// people. The whole is one name only when it reads like one: "Procter &
	// Gamble", "the Mine Safety and Health Administration".
	var soft []offCut
	var piecesBuf [8][2]int
	pieces := piecesBuf[:0]
	ps := a
	amp, singles := false, true
	for _, c := range cuts {
		if c.l <= a {
			continue
		}
		if !c.hard {
			soft = append(soft, c)
			continue
		}
		pieces = append(pieces, [2]int{ps, c.l})
		singles = singles && c.l-ps == 1
		amp = amp || x.word(c.l) == "&"
		ps = c.r
	}
	pieces = append(pieces, [2]int{ps, b})
	singles = singles && b-ps == 1
	if len(pieces) == 2 {
		theBefore := a > 0 && x.toks[a-1].kind == offWord && x.word(a-1) == "the"
		if amp && singles || theBefore {
			x.namePiece(si, a, b, altStart, nil)
		}
	}
	for n := 1; n < len(pieces); n++ {
		if l, r := pieces[n-1], pieces[n]; offOrgWords[x.lower(r[1]-1)] {
			x.namePiece(si, l[0], r[1], -1, nil) // "the Mine Safety and Health Administration"
		}
	}
	lastSoft := a
	for n, p := range pieces {
		alt := -1
		if n == 0 {
			alt = altStart
		}
		var in []offCut
		lastSoft = p[0]
		for _, c := range soft {
			if c.l > p[0] && c.r <= p[1] {
				in = append(in, c)
				if c.r < p[1] {
					lastSoft = c.r
				}
			}
		}
		x.namePiece(si, p[0], p[1], alt, in)
	}
	return pieces[len(pieces)-1][0], lastSoft
}

// namePiece adds the name on tokens [a, b), the names on either side of
// each soft cut, its parts around "of", and the name without a leading
// title ("King Hussein").
func (x *offExtraction) namePiece(si, a, b, altStart int, soft []offCut) {
	// A whole joined by "for" or "with" is as often two names as one
	// title, so only its parts take part in relations.
	for _, c := range soft {
		if c.r > c.l {
			if _, weak := x.connector(c.l); weak {
				x.aliasing = true
			}
		}
	}
	x.nameAdd(si, a, b, altStart, "")
	x.aliasing = false
	x.ofParts(si, a, b)
	x.untitled(si, a, b)
	for _, c := range soft {
		x.nameAdd(si, a, c.l, altStart, "")
		x.ofParts(si, a, c.l)
		x.nameAdd(si, c.r, b, -1, "")
		x.ofParts(si, c.r, b)
	}
}

// untitled adds "Bruce McCandless II" for "Captain Bruce McCandless II".
func (x *offExtraction) untitled(si, a, b int) {
	k := a
	for k < b-1 && (offStripTitles[strings.TrimSuffix(x.lower(k), ".")] || k > a && x.word(k) == "the") {
		k++
	}
	if k == a && (x.word(a) == "St." || x.word(a) == "Saint") {
		// "St. Edward the Confessor", but not "St. Maurice's Abbey".
		k++
		for p := k; p < b; p++ {
			if x.toks[p].has(offPoss) || offLocationWords[x.lower(p)] || offOrgWords[x.lower(p)] {
				return
			}
		}
	}
	if k > a && b-k >= 2 && x.nameWord(k) {
		x.nameAdd(si, k, b, -1, "person")
		x.ofParts(si, k, b)
	}
}

// nameAdd adds the name on tokens [a, b) unless it is a lone function word
// or similar noise.
func (x *offExtraction) nameAdd(si, a, b, altStart int, typ string) {
	for b > a {
		if ok, _ := x.connector(b - 1); !ok {
			break
		}
		b--
	}
	for a < b {
		if ok, _ := x.connector(a); !ok {
			break
		}
		a++
	}
	if a >= b {
		return
	}
	start, end := int(x.toks[a].start), int(x.toks[b-1].end)
	if x.toks[b-1].has(offPoss) {
		end -= len("'s")
		if strings.HasSuffix(x.text[:int(x.toks[b-1].end)], "’s") {
			end -= len("’") - 1
		}
	}
	if b-a == 1 {
		t := x.toks[a]
		w := x.lower(a)
		if t.has(offAllCaps) && (x.capsStop(a-1) || x.capsStop(a+1)) {
			return // "ORDER BY": code, not a name
		}
		if t.kind == offNum || offStopWords[w] || offMonths[strings.TrimSuffix(w, ".")] || offWeekdays[w] || offWorkCues[w] || offLabels[w] {
			return
		}
		if n := end - start; n == 1 || n == 2 && t.has(offAbbrev) {
			return // "I", "A", a lone initial
		}
	}
	if typ == "" {
		typ = x.nameType(a, b)
	}
	sp := offSpan{start: start, end: end, t0: a, t1: b, sent: si, name: x.text[start:end], typ: typ}
	if altStart >= 0 && altStart < a {
		s := int(x.toks[altStart].start)
		sp.altKey, sp.altStart = offKey(x.text[s:end]), s
	}
	x.add(sp)
}

// ofParts adds the parts of "Lothair II of Lotharingia": the place after
// "of", and the part before it unless that is a generic head like "King".
func (x *offExtraction) ofParts(si, a, b int) {
	for k := a + 1; k < b-1; k++ {
		if x.toks[k].kind != offWord || x.word(k) != "of" {
			continue
		}
		r := k + 1
		if r < b && x.word(r) == "the" {
			r++
		}
		if r < b && x.nameWord(r) {
			x.nameAdd(si, r, b, -1, "")
			x.ofParts(si, r, b)
		}
		if k-a > 1 || !offGenericHeads[x.lower(a)] {
			x.nameAdd(si, a, k, -1, "")
		}
		return
	}
}

// suffixes adds the longer forms a name [a, b) takes with what follows it:
// "By the Grace of God (film)", "Johnnycake, West Virginia", "David Ogilvy,
// 12th Earl of Airlie", "Hellraiser: Revelations".
func (x *offExtraction) suffixes(si, a, softA, b, s1 int) {
	if b+2 < s1 && x.isPunct(b, '(') {
		k, words := b+1, 0
		for k < s1 && k-b <= 5 && x.toks[k].kind != offPunct {
			if x.toks[k].kind == offWord {
				words++
			}
			k++
		}
		if words > 0 && k < s1 && k-b <= 5 && x.isPunct(k, ')') && !offStopWords[x.lower(b+1)] &&
			!(k == b+2 && x.toks[b+1].has(offAllCaps)) && !offParenSkip[x.lower(b+1)] {
			start, end := int(x.toks[a].start), int(x.toks[k].end)
			x.add(offSpan{start: start, end: end, t0: a, t1: k + 1, sent: si, name: x.text[start:end],
				typ: offHintType(x.text[x.toks[b+1].start:x.toks[k-1].end])})
		}
	}
	if b+1 >= s1 || x.toks[b+1].has(offNL) {
		return
	}
	a = softA
	start := int(x.toks[a].start)
	switch {
	case x.isPunct(b, ','):
		k := b + 1
		if !x.nameWord(k) && !x.numStart(k, s1) {
			return
		}
		full, cuts := x.extend(k, s1)
		e := full
		for _, c := range cuts {
			if c.l > k+1 || x.toks[k].kind != offNum {
				e = c.l
				break
			}
		}
		head := k
		if x.toks[k].kind == offNum {
			head++
		}
		typ := ""
		switch {
		case offNobleWords[x.lower(head)]:
			typ = "person"
		case e-k == 1 && offRegions[x.lower(k)] || e-k == 2 && offRegions[x.lower(k)+"_"+x.lower(k+1)] ||
			offAdminWords[x.lower(e-1)]:
			typ = "location"
		default:
			return
		}
		x.nameAdd(si, a, e, -1, typ)
		if typ == "person" && full != e && len(cuts) > 0 && cuts[len(cuts)-1].hard && full-cuts[len(cuts)-1].r == 1 {
			// "John Lyon, 5th Earl of Strathmore and Kinghorne", but not
			// "Adolph I, Duke of Cleves and Marie of Burgundy".
			x.nameAdd(si, a, full, -1, typ)
		}
	case x.isPunct(b, ':') && !x.toks[b].has(offSpace) && (x.nameWord(b+1) || x.numStart(b+1, s1)):
		e := x.firstPiece(b+1, s1)
		if x.toks[e-1].has(offPoss) {
			return
		}
		end := int(x.toks[e-1].end)
		x.add(offSpan{start: start, end: end, t0: a, t1: e, sent: si, name: x.text[start:end], typ: x.nameType(b+1, e)})
	}
}

var offParenSkip = offWordSet(`born died née nee formerly also aka or and now then later see`)

// nameType guesses a name's type from its words and its neighbours.
func (x *offExtraction) nameType(a, b int) string {
	first, last := strings.TrimSuffix(x.lower(a), "."), x.lower(b-1)
	lastBare := strings.TrimSuffix(last, ".")
	switch {
	case offOrgWords[last] || offOrgWords[lastBare]:
		if offLocationWords[last] && !offOrgWords[first] {
			return "location"
		}
		return "organization"
	case offWorkWords[last]:
		return "work"
	case offLocationWords[last]:
		return "location"
	case offOrgWords[first] && b-a > 1:
		return "organization"
	case offPersonCues[first] && b-a > 1:
		return "person"
	case first == "lake" || first == "mount" || first == "mt" || first == "isle" || first == "cape" || first == "fort" || first == "port" || first == "gulf":
		return "location"
	case offPersonSuffixes[last] && b-a > 1 && !strings.Contains(x.text[x.toks[a].start:x.toks[b-1].end], "War"):
		return "person"
	}
	for k := a; k < b-1; k++ {
		if t := x.toks[k]; t.has(offAbbrev) && t.end-t.start == 2 && t.has(offCap) {
			return "person" // "G. Stanley Hall"
		}
	}
	// "Etan Boritzer (born 1950)"
	if b+1 < len(x.toks) && x.isPunct(b, '(') {
		if w := x.lower(b + 1); w == "born" || w == "died" || w == "b." || w == "d." || w == "née" {
			return "person"
		}
	}
	if a > 0 && x.toks[a-1].kind == offWord && offPersonCues[strings.TrimSuffix(x.lower(a-1), ".")] {
		return "person"
	}
	if a > 0 && x.toks[a-1].kind == offWord && x.toks[a-1].has(offLower) {
		p := x.word(a - 1)
		switch {
		case offWorkCues[p]:
			return "work"
		case offPersonCues[p]:
			return "person"
		case p == "by" && a > 1 && x.toks[a-2].kind == offWord && strings.HasSuffix(x.word(a-2), "ed"):
			return "person" // "directed by", "written by"
		case offLocationCues[p] && b-a <= 3 && !(a > 1 && offWorkVerbs[x.lower(a-2)]):
			return "location"
		}
	}
	return "other"
}

var offWorkVerbs = offWordSet(`starred appeared featured role roles cast played published appears stars`)

// capsStop reports an upper-case stop word such as "BY" or "FROM".
func (x *offExtraction) capsStop(i int) bool {
	return i >= 0 && i < len(x.toks) && x.toks[i].has(offAllCaps) && offStopWords[x.lower(i)]
}

// offCommonShape reports words shaped like common words rather than names
// (gerunds, adverbs, participles), for judging a sentence's first word.
func offCommonShape(w string) bool {
	if len(w) < 6 {
		return false
	}
	return strings.HasSuffix(w, "ing") || strings.HasSuffix(w, "ly") || strings.HasSuffix(w, "ed") ||
		strings.HasSuffix(w, "ness") || strings.HasSuffix(w, "ment") || strings.HasSuffix(w, "tion")
}
