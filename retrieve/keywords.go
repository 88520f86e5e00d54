package retrieve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/tmc/langchaingo/llms"

	"github.com/docgraph/docgraph/cjk"
	"github.com/docgraph/docgraph/graphbuild"
	"github.com/docgraph/docgraph/ner"
	"github.com/docgraph/docgraph/prompts"
	"github.com/docgraph/docgraph/store"
)

// Keywords are a question's search terms at LightRAG's two levels.
type Keywords struct {
	// High are the broad themes and concepts: they are matched against relations.
	High []string `json:"high_level"`
	// Low are the specific names and terms: they are matched against entities.
	Low []string `json:"low_level"`
	// Source says where they came from: "llm" or "offline".
	Source string `json:"source"`
}

// Mentioner finds entity names in a text such as a question; the offline
// extractor (ner.Offline) is one.
type Mentioner interface {
	Mentions(text string) []ner.Entity
}

// ErrUnusableKeywords is returned when a model's keyword answer cannot be used.
var ErrUnusableKeywords = errors.New("unusable keyword answer")

// ExtractKeywords asks the model for the question's keywords as JSON and
// falls back to OfflineKeywords when there is no model, the call fails or
// the answer is unusable; the second result says why it fell back (nil
// when the model's keywords were used).
func ExtractKeywords(ctx context.Context, model llms.Model, m Mentioner, question string) (Keywords, error) {
	if model == nil {
		return OfflineKeywords(m, question), nil
	}
	prompt, err := prompts.RenderKeywords(prompts.KeywordsData{Query: question})
	if err != nil {
		return OfflineKeywords(m, question), err
	}
	answer, err := llms.GenerateFromSinglePrompt(ctx, model, prompt, llms.WithTemperature(0), llms.WithJSONMode())
	if err != nil {
		return OfflineKeywords(m, question), fmt.Errorf("keywords: %w", err)
	}
	kw, err := ParseKeywords(answer)
	if err != nil {
		return OfflineKeywords(m, question), err
	}
	return kw, nil
}

// ParseKeywords reads a model's keyword answer: a JSON object with
// high_level_keywords and low_level_keywords, possibly inside a Markdown
// code fence or surrounded by prose. An answer with neither list is unusable.
func ParseKeywords(answer string) (Keywords, error) {
	s := strings.TrimSpace(answer)
	start, end := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if start < 0 || end < start {
		return Keywords{}, fmt.Errorf("%w: no JSON object in %q", ErrUnusableKeywords, clip(answer, 80))
	}
	var raw struct {
		High json.RawMessage `json:"high_level_keywords"`
		Low  json.RawMessage `json:"low_level_keywords"`
	}
	if err := json.Unmarshal([]byte(s[start:end+1]), &raw); err != nil {
		return Keywords{}, fmt.Errorf("%w: %v", ErrUnusableKeywords, err)
	}
	kw := Keywords{High: keywordList(raw.High), Low: keywordList(raw.Low), Source: "llm"}
	if len(kw.High) == 0 && len(kw.Low) == 0 {
		return Keywords{}, fmt.Errorf("%w: no keywords in %q", ErrUnusableKeywords, clip(answer, 80))
	}
	return kw, nil
}

// keywordList accepts a list of strings or one comma-separated string, as
// models produce both; it trims, drops empties and repeats.
func keywordList(raw json.RawMessage) []string {
	var items []string
	var list []any
	var one string
	switch {
	case json.Unmarshal(raw, &list) == nil:
		for _, v := range list {
			if s, ok := v.(string); ok {
				items = append(items, s)
			}
		}
	case json.Unmarshal(raw, &one) == nil:
		items = strings.Split(one, ",")
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range items {
		s = strings.TrimSpace(s)
		k := strings.ToLower(s)
		if s == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	return out
}

// OfflineKeywords derives keywords without a model: the low level are the
// names the extractor finds in the question, the high level all its content
// words (stop words removed). Without a model the themes cannot be told
// from the names, and relation search does better with both. A question
// without names uses its content words at both levels.
func OfflineKeywords(m Mentioner, question string) Keywords {
	return offlineKeywords(mentionNames(m, question), question)
}

// offlineKeywords is OfflineKeywords with the question's names already found.
func offlineKeywords(names []string, question string) Keywords {
	kw := Keywords{Low: names, High: ContentWords(question), Source: "offline"}
	if len(kw.Low) == 0 {
		kw.Low = kw.High
	}
	return kw
}

// mentionNames are the names the extractor finds in text, each once.
func mentionNames(m Mentioner, text string) []string {
	if m == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range m.Mentions(text) {
		key := graphbuild.NormalizeKey(e.Name)
		if key == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e.Name)
	}
	return out
}

// maxNameSpan bounds, in characters, the parts of a CJK name looked up.
const maxNameSpan = 12

// nameIDs are the ids of the entities a question's names may stand for:
// each name's and, since CJK text has no spaces to show where a name inside
// a longer term ends ("刘燕卿授予" holds 刘燕卿), those of every part of three
// or more characters of a CJK name that does not cut a Latin word or a
// number. (Two-character parts are mostly common words: 实际 in 实际上.)
func nameIDs(names []string) []string {
	ids := make([]string, 0, len(names))
	seen := map[string]bool{}
	add := func(n string) {
		if id := graphbuild.EntityID(n); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, n := range names {
		add(n)
		if !cjk.Contains(n) {
			continue
		}
		rs := []rune(n)
		inWord := func(i int) bool { // a cut before rune i splits a word or number
			return i > 0 && i < len(rs) && alnum(rs[i-1]) && alnum(rs[i])
		}
		for i := range rs {
			for j := i + 3; j <= min(len(rs), i+maxNameSpan); j++ {
				if part := string(rs[i:j]); (i > 0 || j < len(rs)) && !inWord(i) && !inWord(j) && cjk.Contains(part) && !ner.CommonWord(part) {
					add(part)
				}
			}
		}
	}
	return ids
}

func alnum(r rune) bool { return !cjk.Is(r) && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// longestNamed drops, of the entities nameIDs found, those whose CJK name
// lies inside the name of another one found: 拉迪氏苦味银汉鱼, not also 银汉鱼.
func longestNamed(ents []store.Entity) []store.Entity {
	keys := make([]string, len(ents))
	for i, e := range ents {
		keys[i] = graphbuild.NormalizeKey(e.Name)
	}
	out := ents[:0:0]
	for i, e := range ents {
		inside := false
		for j := range ents {
			inside = inside || j != i && len(keys[j]) > len(keys[i]) && cjk.Contains(keys[i]) && strings.Contains(keys[j], keys[i])
		}
		if !inside {
			out = append(out, e)
		}
	}
	return out
}

// textQuery is the full-text query for a question: its content words, as
// stop words add nothing to BM25 but make the index walk every posting list
// they have; the question itself when it has none.
func textQuery(question string) string {
	if terms := strings.Join(ContentWords(question), " "); terms != "" {
		return terms
	}
	return question
}

// ContentWords are the words of text that are not stop words, in order,
// each once. Text in Chinese, Japanese or Korean, which has no spaces
// between words, gives the terms the offline extractor cuts it into.
func ContentWords(text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-'
	})
	var out []string
	seen := map[string]bool{}
	for _, w := range words {
		if cjk.Contains(w) {
			for _, t := range ner.QueryTerms(w) {
				if lt := strings.ToLower(t); !seen[lt] {
					seen[lt] = true
					out = append(out, t)
				}
			}
			continue
		}
		w = strings.Trim(w, "'-")
		lw := strings.ToLower(w)
		if lw == "" || stopWords[lw] || seen[lw] || len([]rune(lw)) < 2 && !unicode.IsDigit([]rune(lw)[0]) {
			continue
		}
		seen[lw] = true
		out = append(out, w)
	}
	return out
}

// stopWords are English function words and question words.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do does doing done down during
		each either few for from further had has have having he her here hers herself him himself his how
		i if in into is it its itself just let me more most my myself neither no nor not of off on once only
		or other our ours ourselves out over own same she should so some such than that the their theirs
		them themselves then there these they this those through to too under until up upon very was we were
		what when where which while who whom whose why will with within without would you your yours yourself
		yourselves s t don didn doesn isn wasn weren aren tell give name list describe explain please
		many much did ever does like among per via vs`) {
		m[w] = true
	}
	return m
}()

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
