package ner

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/docgraph/docgraph/prompts"
)

// recStart finds where a record begins: an opening parenthesis, the
// record type (quoted or not), then the tuple delimiter. Everything between
// records that does not start one is chatter and is skipped.
var recStart = regexp.MustCompile(`\(\s*["'` + "`" + `]?\s*(?i:entity|relationship|relation)\s*["'` + "`" + `]?\s*` +
	regexp.QuoteMeta(prompts.TupleDelimiter))

// ParseRecords reads the delimited records of an extraction answer:
//
//	("entity"<|>NAME<|>TYPE<|>DESCRIPTION)##
//	("relationship"<|>SOURCE<|>TARGET<|>DESCRIPTION<|>KEYWORDS<|>STRENGTH)##
//
// It tolerates chatter around the records, markdown fences, missing record
// delimiters (one record per line) and an answer cut off mid-record. A
// record with the wrong number of fields, an empty name or type, or a
// missing relation endpoint is rejected and counted, never fatal. STRENGTH
// may be omitted; relations are not checked against the entities here.
func ParseRecords(answer string) *Extraction {
	x := &Extraction{}
	answer = recStripThink(answer)
	if i := strings.Index(answer, prompts.CompletionDelimiter); i >= 0 {
		answer = answer[:i]
	}
	starts := recStart.FindAllStringIndex(answer, -1)
	for k, s := range starts {
		end := len(answer)
		if k+1 < len(starts) {
			end = starts[k+1][0]
		}
		rec := answer[s[0]:end]
		// A record ends at its record delimiter, or failing that at the end
		// of its line: whatever follows is chatter.
		if i := strings.Index(rec, prompts.RecordDelimiter); i >= 0 {
			rec = rec[:i]
		} else if i := strings.IndexByte(rec, '\n'); i >= 0 {
			rec = rec[:i]
		}
		recParse(rec, x)
	}
	return x
}

func recParse(rec string, x *Extraction) {
	rec = strings.TrimSpace(rec)
	closed := strings.HasSuffix(rec, ")")
	rec = strings.TrimSuffix(strings.TrimPrefix(rec, "("), ")")
	fields := strings.Split(rec, prompts.TupleDelimiter)
	for i := range fields {
		fields[i] = recClean(fields[i])
	}
	kind := strings.ToLower(fields[0])
	switch {
	case kind == "entity" && len(fields) == 4 && closed:
		e := Entity{Name: fields[1], Type: strings.ToLower(fields[2]), Description: fields[3]}
		if e.Name == "" || e.Type == "" {
			x.Rejected++
			return
		}
		x.Entities = append(x.Entities, e)
	case (kind == "relationship" || kind == "relation") && (len(fields) == 5 || len(fields) == 6) && closed:
		r := Relation{Source: fields[1], Target: fields[2], Description: fields[3], Keywords: fields[4]}
		if len(fields) == 6 {
			r.Weight = recWeight(fields[5])
		}
		if r.Source == "" || r.Target == "" || strings.EqualFold(r.Source, r.Target) {
			x.Rejected++
			return
		}
		x.Relations = append(x.Relations, r)
	default:
		// Wrong field count, or cut off before its closing parenthesis.
		x.Rejected++
	}
}

// recClean trims the quotes, backticks and spaces models put around fields
// and collapses runs of whitespace.
func recClean(s string) string {
	s = strings.TrimSpace(s)
	s = strings.Trim(s, "\"'`")
	return strings.Join(strings.Fields(s), " ")
}

// recWeight reads a strength such as "8", "7.5" or "8/10"; 0 (meaning
// the default weight) when there is no number.
func recWeight(s string) float64 {
	s, _, _ = strings.Cut(s, "/")
	w, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || w < 0 {
		return 0
	}
	return w
}

// ParseJudge reads the judge's answer strictly: YES or NO, in any case,
// optionally quoted, emphasised or followed by punctuation. ok is false for
// anything else, such as "Yes, there are more", which the loop treats as a
// stop and counts.
func ParseJudge(answer string) (yes, ok bool) {
	s := strings.TrimSpace(recStripThink(answer))
	s = strings.Trim(s, "\"'`*_ \t\r\n")
	s = strings.TrimRight(s, ".!。！ ")
	switch strings.ToLower(s) {
	case "yes":
		return true, true
	case "no":
		return false, true
	}
	return false, false
}

// recStripThink removes the <think>...</think> reasoning that some models
// (DeepSeek-R1, QwQ, Qwen3) write before their answer: drafts of records in
// it are not the answer. An unclosed block leaves nothing.
func recStripThink(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
}

// recMerge adds the records of y to x: entities by name (case-insensitive),
// relations by ordered endpoint pair, joining distinct descriptions and
// keeping the strongest weight, so that gleaning rounds that repeat a
// record add nothing twice.
func recMerge(x, y *Extraction) {
	x.Rejected += y.Rejected
	ents := make(map[string]int, len(x.Entities))
	for i, e := range x.Entities {
		ents[strings.ToLower(e.Name)] = i
	}
	for _, e := range y.Entities {
		i, ok := ents[strings.ToLower(e.Name)]
		if !ok {
			ents[strings.ToLower(e.Name)] = len(x.Entities)
			x.Entities = append(x.Entities, e)
			continue
		}
		old := &x.Entities[i]
		old.Description = recJoin(old.Description, e.Description, "; ")
		if old.Type == recUnknownType && e.Type != recUnknownType {
			old.Type = e.Type
		}
	}
	rels := make(map[[2]string]int, len(x.Relations))
	for i, r := range x.Relations {
		rels[recRelKey(r)] = i
	}
	for _, r := range y.Relations {
		i, ok := rels[recRelKey(r)]
		if !ok {
			rels[recRelKey(r)] = len(x.Relations)
			x.Relations = append(x.Relations, r)
			continue
		}
		old := &x.Relations[i]
		old.Description = recJoin(old.Description, r.Description, "; ")
		old.Keywords = recJoin(old.Keywords, r.Keywords, ", ")
		old.Weight = max(old.Weight, r.Weight)
	}
}

func recRelKey(r Relation) [2]string {
	return [2]string{strings.ToLower(r.Source), strings.ToLower(r.Target)}
}

func recJoin(a, b, sep string) string {
	switch {
	case b == "" || strings.Contains(a, b):
		return a
	case a == "":
		return b
	}
	return a + sep + b
}

// recUnknownType is the type of an entity known only from a relation.
const recUnknownType = "unknown"

// recAddEndpoints makes every relation endpoint an entity, so that the
// graph never holds an edge to a node it does not have.
func recAddEndpoints(x *Extraction) {
	have := make(map[string]bool, len(x.Entities))
	for _, e := range x.Entities {
		have[strings.ToLower(e.Name)] = true
	}
	for _, r := range x.Relations {
		for _, name := range []string{r.Source, r.Target} {
			if !have[strings.ToLower(name)] {
				have[strings.ToLower(name)] = true
				x.Entities = append(x.Entities, Entity{Name: name, Type: recUnknownType})
			}
		}
	}
}

// recUsable reports whether an extraction answer is in the extraction
// format: it holds a record that parsed, or the completion delimiter alone,
// which is how a model says there is nothing (more) to list. A gleaning
// answer may also be blank: nothing more. Prose, a refusal or an empty
// first answer is not usable; those are what a wrong model name or a chat
// template that ignores the prompt produce.
func recUsable(answer string, x *Extraction, gleaning bool) bool {
	if len(x.Entities)+len(x.Relations) > 0 {
		return true
	}
	answer = strings.TrimSpace(recStripThink(answer))
	if strings.Contains(answer, prompts.CompletionDelimiter) {
		return true
	}
	return gleaning && answer == ""
}

// answerExcerptBytes bounds the start of an unusable answer quoted in
// warnings and errors.
const answerExcerptBytes = 80

// recExcerpt is the start of an answer on one line, at most
// answerExcerptBytes long and cut at a character boundary, with "..."
// when cut. It is not escaped: whoever prints it escapes it.
func recExcerpt(answer string) string {
	s := strings.Join(strings.Fields(answer), " ")
	if len(s) <= answerExcerptBytes {
		return s
	}
	cut := answerExcerptBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
