package graphbuild

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Entity resolution within one document, before its mention rows are
// built: a name the document uses as a short form of another of its names
// is folded into that name. Two rules, each explained by the text:
//   - a surname: a one-word name that is the last word of exactly one
//     full name (two to four capitalised words) of the same document
//     ("Thompson" and "Ken Thompson");
//   - an acronym defined in the text, "International Business Machines
//     (IBM)" or "IBM (International Business Machines)", whose capitals
//     are the initials of the long form.
//
// Resolution never joins two full names, and stays within the document:
// the mention rows keep the short form as their name (the merged entity
// takes the name its own mentions use), so deleting the document removes
// exactly what it contributed, and the merged graph stays a function of
// the set of stored documents.

// Merge is one name folded into another by Resolve.
type Merge struct {
	Short, Full string
	Rule        string // "surname" or "acronym"
}

// Resolve returns the merges of one document's extractions: which names
// stand for another name of the same document.
func Resolve(chunks []ChunkExtraction) []Merge {
	return resolve(chunks, keyMemo{})
}

func resolve(chunks []ChunkExtraction, keys keyMemo) []Merge {
	names := map[string]*docName{} // by key
	var order []string
	note := func(name, typ string) {
		key := keys.key(name)
		if key == "" {
			return
		}
		n, ok := names[key]
		if !ok {
			n = &docName{name: strings.TrimSpace(name)}
			names[key] = n
			order = append(order, key)
		}
		if n.typ == "" {
			n.typ = strings.ToLower(strings.TrimSpace(typ))
		}
	}
	for _, c := range chunks {
		if c.Extraction == nil {
			continue
		}
		for _, e := range c.Extraction.Entities {
			note(e.Name, e.Type)
		}
		for _, r := range c.Extraction.Relations {
			note(r.Source, "")
			note(r.Target, "")
		}
	}
	merged := map[string]Merge{} // by the short form's key
	// Acronyms first: a definition in the text is the stronger evidence.
	defs := map[string]map[string]bool{} // acronym key -> long keys defined for it
	for _, c := range chunks {
		texts := []string{c.Text}
		if c.Text == "" && c.Extraction != nil {
			// No chunk text: the descriptions quote the sentences.
			for _, e := range c.Extraction.Entities {
				texts = append(texts, e.Description)
			}
		}
		for _, t := range texts {
			for _, d := range acronymDefinitions(t) {
				ak, lk := NormalizeKey(d[0]), NormalizeKey(d[1])
				if names[ak] == nil || names[lk] == nil || ak == lk {
					continue
				}
				if defs[ak] == nil {
					defs[ak] = map[string]bool{}
				}
				defs[ak][lk] = true
			}
		}
	}
	for ak, longs := range defs {
		if len(longs) != 1 {
			continue // defined twice, differently: leave it
		}
		for lk := range longs {
			merged[ak] = Merge{Short: names[ak].name, Full: names[lk].name, Rule: "acronym"}
		}
	}
	fulls := map[string][]string{} // last word (key) -> full names' keys
	inNames := map[string]int{}    // word key -> multi-word names holding it
	for _, k := range order {
		n := names[k]
		// "Chicago Bulls" where Chicago is a name of its own: a place's team, not a person.
		if last, ok := fullName(n); ok && names[keys.key(strings.Fields(n.name)[0])] == nil {
			fulls[last] = append(fulls[last], k)
		}
		if words := strings.Fields(k); len(words) > 1 {
			seen := map[string]bool{}
			for _, w := range words {
				if !seen[w] {
					seen[w] = true
					inNames[w]++
				}
			}
		}
	}
	// Surnames: a short form of exactly one full name. A word the document
	// also writes in lower case is a common word capitalised by its place
	// ("President", "Revolution"), no surname; the text is searched for the
	// candidates' lower-case forms only, and only when there are any.
	var candidates []string
	lowerWords := map[string]bool{} // lower-case forms of the candidates -> written so
	for _, k := range order {
		n := names[k]
		if _, done := merged[k]; done || !shortForm(n) {
			continue
		}
		if fs := fulls[k]; len(fs) == 1 && inNames[k] == 1 {
			candidates = append(candidates, k)
			lowerWords[strings.ToLower(n.name)] = false
		}
	}
	if len(candidates) > 0 {
		for _, c := range chunks {
			markLowerWords(lowerWords, c.Text)
			if c.Text == "" && c.Extraction != nil {
				for _, e := range c.Extraction.Entities {
					markLowerWords(lowerWords, e.Description)
				}
			}
		}
	}
	for _, k := range candidates {
		if n := names[k]; !lowerWords[strings.ToLower(n.name)] {
			merged[k] = Merge{Short: n.name, Full: names[fulls[k][0]].name, Rule: "surname"}
		}
	}
	// A full name is never itself folded away (no chains), and nothing is
	// folded into a name that is folded.
	out := make([]Merge, 0, len(merged))
	for _, m := range merged {
		if _, chained := merged[NormalizeKey(m.Full)]; !chained {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Short < out[j].Short })
	return out
}

// markLowerWords marks the words of set that text writes: runs of
// letters beginning with a lower-case letter.
func markLowerWords(set map[string]bool, text string) {
	start := -1
	for i, r := range text {
		switch letter := unicode.IsLetter(r); {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			markLowerWord(set, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		markLowerWord(set, text[start:])
	}
}

func markLowerWord(set map[string]bool, w string) {
	if seen, wanted := set[w]; wanted && !seen {
		if first, _ := utf8.DecodeRuneInString(w); unicode.IsLower(first) {
			set[w] = true
		}
	}
}

type docName struct {
	name, typ string
}

// personish types may be people; a place or a date of the same word is not one.
func personish(typ string) bool { return typ == "" || typ == "person" || typ == "other" }

// fullName reports a name of two to four capitalised words of letters (an
// initial may carry a full stop), and returns its last word's key.
func fullName(n *docName) (string, bool) {
	if !personish(n.typ) {
		return "", false
	}
	words := strings.Fields(n.name)
	if len(words) < 2 || len(words) > 4 || notGiven[NormalizeKey(words[0])] || demonym(words[0]) {
		return "", false
	}
	for _, w := range words {
		// Capitalised words only: no connector, possessive, acronym or number.
		if w = strings.TrimSuffix(w, "."); !capitalisedWord(w) || strings.ContainsAny(w, "'’") || allCaps(w) && len(w) > 1 {
			return "", false
		}
	}
	last := NormalizeKey(words[len(words)-1])
	if utf8.RuneCountInString(last) < 3 || genericHeads[last] || strings.HasSuffix(words[len(words)-1], ".") {
		return "", false
	}
	return last, true
}

// shortForm reports a one-word capitalised name that could be a surname.
func shortForm(n *docName) bool {
	if !personish(n.typ) || strings.ContainsAny(n.name, " \t") {
		return false
	}
	return utf8.RuneCountInString(n.name) >= 3 && capitalisedWord(n.name) && !allCaps(n.name) && !demonym(n.name) && !notGiven[NormalizeKey(n.name)]
}

// demonym reports a word naming a people or language ("German", "Tamil",
// "Portuguese"): "High German" is no German's full name.
func demonym(w string) bool {
	k := NormalizeKey(w)
	return demonyms[k] || strings.HasSuffix(k, "ese") || strings.HasSuffix(k, "ish") && len(k) > 5
}

var demonyms = wordSet(`german french english irish scottish welsh british american canadian mexican brazilian argentine
	italian spanish portuguese dutch flemish belgian swiss austrian greek roman latin russian polish czech slovak
	hungarian romanian bulgarian serbian croatian ukrainian turkish arab arabic persian iranian iraqi syrian jewish
	hebrew egyptian african asian european indian pakistani bengali tamil telugu hindi urdu punjabi sanskrit thai
	vietnamese korean japanese chinese mongolian tibetan indonesian malay filipino australian norse nordic swedish
	norwegian danish finnish icelandic baltic celtic gaelic saxon norman viking catholic protestant christian muslim`)

// notGiven are first words of names that are not people's names: "Vice
// President", "New Year", "Roman Emperor Gallienus".
var notGiven = wordSet(`vice high low new old great little big upper lower middle north south east west northern
	southern eastern western central ancient modern early late royal national international united holy grand
	general president king queen prince princess emperor empress lord lady sir saint st pope bishop archbishop
	judge justice captain colonel major sergeant doctor dr professor mr mrs ms miss hello dear happy merry
	first second third last best top final annual world my our his her their your its nazi soviet
	county city lake mount cape port fort baron baroness duke duchess earl count countess marquess viscount
	administrative shia sunni the a an`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// capitalisedWord: an upper-case letter, then letters, apostrophes and
// hyphens only ("O'Brien", "Saint-Just").
func capitalisedWord(w string) bool {
	first, size := utf8.DecodeRuneInString(w)
	if size == 0 || !unicode.IsUpper(first) {
		return false
	}
	for _, r := range w[size:] {
		if !unicode.IsLetter(r) && r != '\'' && r != '’' && r != '-' {
			return false
		}
	}
	return true
}

func allCaps(w string) bool {
	letters := 0
	for _, r := range w {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters > 0
}

// genericHeads end names that are not people's: "Thompson River" does not
// make "River" a surname, and such a head is no short form of anything.
var genericHeads = wordSet(`river lake mountain mount island islands bay sea ocean city county state province
		district region street road avenue square bridge park station airport church cathedral abbey castle palace
		school college university institute academy museum hospital library company corporation inc ltd group band
		team club party army navy war battle award prize cup league championship festival film album song series
		show novel book magazine newspaper journal records studios productions society association foundation
		council committee ministry department office court hall house tower building centre center theatre theater
		kingdom republic empire dynasty family brothers sisters sons revolution rebellion uprising revolt war
		eve day night year season top`)

// acronymPattern finds "Long Form (ACR)" and "ACR (Long Form)".
var (
	longThenAcronym = regexp.MustCompile(`((?:[\p{Lu}][\p{L}'’.-]*\s+(?:(?:of|and|for|the|de|du|des|la|le|van|von|&)\s+)*){1,9}[\p{Lu}][\p{L}'’.-]*)\s*\(\s*([\p{Lu}][\p{Lu}\p{Ll}&.]{1,9})\s*[),;]`)
	acronymThenLong = regexp.MustCompile(`\b([\p{Lu}][\p{Lu}&.]{1,9})\s*\(\s*((?:[\p{Lu}][\p{L}'’.-]*\s+(?:(?:of|and|for|the|de|du|des|la|le|van|von|&)\s+)*){1,9}[\p{Lu}][\p{L}'’.-]*)\s*\)`)
)

// acronymDefinitions returns the (acronym, long form) pairs text defines,
// the long form cut to the words whose initials spell the acronym.
//
// Every definition holds exactly one "(", followed by a capital, and lies
// within the letters, spaces and name punctuation around it, so the
// patterns run on those windows only, not on the whole text: the same
// matches (acronymDefinitionsWhole in the tests runs them on the whole
// text), at a fraction of the cost on a book.
func acronymDefinitions(text string) [][2]string {
	var out, after [][2]string
	for p := 0; ; p++ {
		i := strings.IndexByte(text[p:], '(')
		if i < 0 {
			break
		}
		p += i
		if !capitalAfter(text, p+1) {
			continue
		}
		w := text[definitionStart(text, p):definitionEnd(text, p+1)]
		if m := longThenAcronym.FindStringSubmatch(w); m != nil {
			if long, ok := initialsMatch(m[2], m[1]); ok {
				out = append(out, [2]string{m[2], long})
			}
		}
		if m := acronymThenLong.FindStringSubmatch(w); m != nil {
			if long, ok := initialsMatch(m[1], m[2]); ok && long == strings.Join(strings.Fields(m[2]), " ") {
				after = append(after, [2]string{m[1], long})
			}
		}
	}
	return append(out, after...)
}

// capitalAfter reports whether text[i:] opens with white space (as the
// patterns' \s has it) and then an upper-case letter.
func capitalAfter(text string, i int) bool {
	for i < len(text) && strings.IndexByte(" \t\n\f\r", text[i]) >= 0 {
		i++
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsUpper(r)
}

// inDefinition reports the characters a definition holds besides its
// "(" and its closing ")", "," or ";": letters, white space, and the
// apostrophes, full stops, hyphens and ampersands of names.
func inDefinition(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\f', '\r', '\'', '’', '.', '-', '&':
		return true
	}
	return unicode.IsLetter(r)
}

// definitionStart is where the window of the "(" at p starts: one
// character before the run of definition characters that ends at p, so
// that \b sees what it would see in the whole text.
func definitionStart(text string, p int) int {
	for p > 0 {
		r, n := utf8.DecodeLastRuneInString(text[:p])
		p -= n
		if !inDefinition(r) {
			break
		}
	}
	return p
}

// definitionEnd is where the window that goes on at i ends: after the run
// of definition characters from i and the character that ends it.
func definitionEnd(text string, i int) int {
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if !inDefinition(r) {
			break
		}
	}
	return i
}

// initialsMatch checks that the capitals of acr are the initials of the
// last capitalised words of long (connectors between them allowed) and
// returns those words.
func initialsMatch(acr, long string) (string, bool) {
	var caps []rune
	for _, r := range acr {
		if unicode.IsUpper(r) {
			caps = append(caps, r)
		}
	}
	if len(caps) < 2 {
		return "", false
	}
	words := strings.Fields(long)
	// Walk back from the last word, matching capitals from the last; a
	// company's legal suffix may stand outside the acronym.
	i, k := len(words)-1, len(caps)-1
	if first, _ := utf8.DecodeRuneInString(words[i]); i > 0 && first != caps[k] && legalSuffixes[NormalizeKey(words[i])] {
		i--
	}
	end := len(words)
	for i >= 0 && k >= 0 {
		first, _ := utf8.DecodeRuneInString(words[i])
		switch {
		case unicode.IsUpper(first) && unicode.ToUpper(first) == caps[k]:
			k--
		case unicode.IsUpper(first):
			return "", false // a capitalised word the acronym skips
		}
		i--
	}
	if k >= 0 {
		return "", false
	}
	return strings.Join(words[i+1:end], " "), true
}

var legalSuffixes = map[string]bool{"corporation": true, "corp": true, "inc": true, "ltd": true, "limited": true, "company": true, "co": true, "plc": true, "llc": true, "group": true, "ag": true, "gmbh": true, "sa": true}
