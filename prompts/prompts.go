// Package prompts holds every prompt docgraph sends to a language model, one
// text/template file per prompt, embedded in the binary and rendered by name.
package prompts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"text/template"
)

// The delimited record format the extraction prompts ask for and ner parses.
const (
	TupleDelimiter      = "<|>"
	RecordDelimiter     = "##"
	CompletionDelimiter = "<|COMPLETE|>"
)

// Prompt names, one per file in templates/.
const (
	Extract   = "extract"
	Continue  = "continue"
	Judge     = "judge"
	Summarize = "summarize"
	Keywords  = "keywords"
	Answer    = "answer"
	// PathsSelect and PathsAnswer are path retrieval's LLM scorer / fine
	// filter (GraphRAG-FI) and its answer prompt with priority paths.
	PathsSelect = "paths_select"
	PathsAnswer = "paths_answer"
	// LLMOnly is GraphRAG-FI's answer from the model alone, as a list.
	LLMOnly = "llm_only"
	// LogicPlan and Precheck are HuixiangDou2's logic-form decomposition
	// (Algorithm 1) and the pre-check of its context (Algorithm 3).
	LogicPlan = "logic_plan"
	Precheck  = "precheck"
)

// DefaultEntityTypes are the entity types the extraction prompt asks for when
// the caller names none: broad enough for technical and general documents.
var DefaultEntityTypes = []string{
	"person", "organization", "location", "event", "product",
	"technology", "concept", "document", "date",
}

//go:embed templates/*.tmpl
var files embed.FS

var templates = mustParse()

func mustParse() map[string]*template.Template {
	funcs := template.FuncMap{
		"join":  strings.Join,
		"upper": strings.ToUpper,
		"inc":   func(i int) int { return i + 1 },
	}
	names, err := fs.Glob(files, "templates/*.tmpl")
	if err != nil {
		panic(fmt.Sprintf("prompts: list templates: %v", err))
	}
	out := make(map[string]*template.Template, len(names))
	for _, file := range names {
		name := strings.TrimSuffix(path.Base(file), ".tmpl")
		t, err := template.New(path.Base(file)).Funcs(funcs).Option("missingkey=error").ParseFS(files, file)
		if err != nil {
			// The templates are compiled into the binary, so a parse error is a
			// build mistake that every test run catches.
			panic(fmt.Sprintf("prompts: parse %s: %v", file, err))
		}
		out[name] = t
	}
	return out
}

// Names lists the prompts that can be rendered, sorted.
func Names() []string {
	names := make([]string, 0, len(templates))
	for n := range templates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Render executes the prompt called name with data. Missing fields are errors,
// so a prompt never goes out with a hole in it.
func Render(name string, data any) (string, error) {
	t, ok := templates[name]
	if !ok {
		return "", fmt.Errorf("prompts: no prompt named %q (have %s)", name, strings.Join(Names(), ", "))
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()) + "\n", nil
}

// ExtractData fills the extract, continue and judge prompts.
type ExtractData struct {
	// EntityTypes the model may use; DefaultEntityTypes when empty.
	EntityTypes []string
	// Language the descriptions are written in; "English" when empty.
	Language string
	// Text is the chunk to read.
	Text string
}

func (d ExtractData) fill() map[string]any {
	types := d.EntityTypes
	if len(types) == 0 {
		types = DefaultEntityTypes
	}
	lang := d.Language
	if lang == "" {
		lang = "English"
	}
	return map[string]any{
		"EntityTypes":         types,
		"Language":            lang,
		"Text":                d.Text,
		"TupleDelimiter":      TupleDelimiter,
		"RecordDelimiter":     RecordDelimiter,
		"CompletionDelimiter": CompletionDelimiter,
	}
}

// RenderExtract renders the first extraction request for one chunk.
func RenderExtract(d ExtractData) (string, error) { return Render(Extract, d.fill()) }

// RenderContinue renders the gleaning request: the entities and relations
// the previous answers missed, in the same format.
func RenderContinue(d ExtractData) (string, error) { return Render(Continue, d.fill()) }

// RenderJudge renders the yes/no question whether anything remains to extract.
func RenderJudge(d ExtractData) (string, error) { return Render(Judge, d.fill()) }

// SummarizeData fills the summarize prompt.
type SummarizeData struct {
	Kind         string // "entity" or "relation"
	Name         string // the entity's name, or "A -> B" for a relation
	Descriptions []string
	Language     string // "English" when empty
	MaxWords     int    // the summary's length limit; 150 when zero
}

// RenderSummarize renders the request to merge descriptions of one entity or relation.
func RenderSummarize(d SummarizeData) (string, error) {
	if d.Language == "" {
		d.Language = "English"
	}
	if d.MaxWords <= 0 {
		d.MaxWords = 150
	}
	return Render(Summarize, d)
}

// KeywordsData fills the keywords prompt.
type KeywordsData struct {
	Query    string
	Language string // "English" when empty
}

// RenderKeywords renders the request for a query's high- and low-level keywords as JSON.
func RenderKeywords(d KeywordsData) (string, error) {
	if d.Language == "" {
		d.Language = "English"
	}
	return Render(Keywords, d)
}

// Source is one numbered piece of context an answer may cite as [ID].
type Source struct {
	ID    int
	Title string
	Text  string
}

// AnswerData fills the answer prompt.
type AnswerData struct {
	Question string
	Sources  []Source
	// ResponseType says the answer's shape, e.g. "a few paragraphs"; "a few
	// paragraphs" when empty.
	ResponseType string
	Language     string // "the language of the question" when empty
}

// RenderAnswer renders the request to answer a question from numbered sources.
func RenderAnswer(d AnswerData) (string, error) {
	if d.ResponseType == "" {
		d.ResponseType = "a few paragraphs"
	}
	if d.Language == "" {
		d.Language = "the language of the question"
	}
	return Render(Answer, d)
}

// RenderLLMOnly renders the request to answer a question without any
// retrieved context, every possible answer on its own line.
func RenderLLMOnly(question string) (string, error) {
	return Render(LLMOnly, map[string]any{"Question": question})
}

// Operator describes one logic-form operator to the model.
type Operator struct {
	Name      string
	Signature string // its arguments, optional ones marked with "?"
	Doc       string
}

// LogicPlanData fills the logic_plan prompt.
type LogicPlanData struct {
	Question  string
	Operators []Operator
	MaxSteps  int
}

// RenderLogicPlan renders the request to decompose a question into
// (sub-question, operator, arguments) steps, as JSON.
func RenderLogicPlan(d LogicPlanData) (string, error) { return Render(LogicPlan, d) }

// PrecheckData fills the precheck prompt.
type PrecheckData struct {
	Question string
	Context  string
}

// RenderPrecheck renders the yes/no question whether a context supports
// an answer.
func RenderPrecheck(d PrecheckData) (string, error) { return Render(Precheck, d) }
