package prompts

import (
	"slices"
	"strings"
	"testing"
)

func TestEveryTemplateHasATest(t *testing.T) {
	want := []string{Answer, Continue, Extract, Judge, Keywords, LLMOnly, LogicPlan, PathsAnswer, PathsSelect, Precheck, Summarize}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v (add a render test for each new prompt)", got, want)
	}
}

func TestRender(t *testing.T) {
	chunk := ExtractData{
		EntityTypes: []string{"protein", "gene"},
		Language:    "German",
		Text:        "BRCA1 encodes a protein that repairs DNA.",
	}
	tests := []struct {
		name    string
		render  func() (string, error)
		want    []string // substrings that must appear
		notWant []string
	}{
		{
			name:   "extract",
			render: func() (string, error) { return RenderExtract(chunk) },
			want: []string{
				"[protein, gene]", "German", "BRCA1 encodes a protein that repairs DNA.",
				`("entity"<|>NAME<|>TYPE<|>DESCRIPTION)`,
				`("relationship"<|>SOURCE<|>TARGET<|>DESCRIPTION<|>KEYWORDS<|>STRENGTH)`,
				"<|COMPLETE|>", "Example 1", "Example 2", "Example 3",
			},
			notWant: []string{"<no value>", "{{"},
		},
		{
			name:    "extract defaults",
			render:  func() (string, error) { return RenderExtract(ExtractData{Text: "x"}) },
			want:    []string{strings.Join(DefaultEntityTypes, ", "), "English"},
			notWant: []string{"<no value>"},
		},
		{
			name:    "continue",
			render:  func() (string, error) { return RenderContinue(chunk) },
			want:    []string{"[protein, gene]", "German", "##", "<|COMPLETE|>", "missed"},
			notWant: []string{"<no value>", "BRCA1"}, // the text is already in the history
		},
		{
			name:    "judge",
			render:  func() (string, error) { return RenderJudge(chunk) },
			want:    []string{"YES or NO", "[protein, gene]"},
			notWant: []string{"<no value>"},
		},
		{
			name: "summarize relation",
			render: func() (string, error) {
				return RenderSummarize(SummarizeData{Kind: "relation", Name: "BRCA1 -> DNA repair",
					Descriptions: []string{"first fact", "second fact"}, MaxWords: 80})
			},
			want:    []string{"Relation: BRCA1 -> DNA repair", "1. first fact", "2. second fact", "80 words", "English"},
			notWant: []string{"<no value>", "Entity:"},
		},
		{
			name: "summarize entity defaults",
			render: func() (string, error) {
				return RenderSummarize(SummarizeData{Kind: "entity", Name: "BRCA1", Descriptions: []string{"a gene"}})
			},
			want: []string{"Entity: BRCA1", "1. a gene", "150 words"},
		},
		{
			name:    "keywords",
			render:  func() (string, error) { return RenderKeywords(KeywordsData{Query: "What does BRCA1 do?"}) },
			want:    []string{"What does BRCA1 do?", `"high_level_keywords"`, `"low_level_keywords"`, "English"},
			notWant: []string{"<no value>"},
		},
		{
			name: "answer",
			render: func() (string, error) {
				return RenderAnswer(AnswerData{Question: "What does BRCA1 do?", Sources: []Source{
					{ID: 1, Title: "genes.md", Text: "BRCA1 repairs DNA."},
					{ID: 2, Text: "Untitled passage."},
				}})
			},
			want:    []string{"[1] genes.md\nBRCA1 repairs DNA.", "[2]\nUntitled passage.", "What does BRCA1 do?", "[n]", "a few paragraphs"},
			notWant: []string{"<no value>"},
		},
		{
			name:    "llm only",
			render:  func() (string, error) { return RenderLLMOnly("Who designed Go?") },
			want:    []string{"Question: Who designed Go?", "one answer per line", "own knowledge", "I don't know"},
			notWant: []string{"<no value>", "[n]"},
		},
		{
			name: "logic plan",
			render: func() (string, error) {
				return RenderLogicPlan(LogicPlanData{Question: "How much older is Babbage than Lovelace?", MaxSteps: 6, Operators: []Operator{
					{Name: "lookup_entity", Signature: "name", Doc: "find an entity by name"},
					{Name: "compute", Signature: "op, values, near?", Doc: "count, sum, min, max, earliest, latest or diff"},
				}})
			},
			want: []string{
				"Question: How much older is Babbage than Lovelace?", "- lookup_entity(name): find an entity by name",
				"- compute(op, values, near?): count", "at most 6 steps", `{"steps": [{"question": "...", "op": "OPERATOR", "args": {"NAME": "VALUE"}}]}`, "$N",
			},
			notWant: []string{"<no value>"},
		},
		{
			name: "precheck",
			render: func() (string, error) {
				return RenderPrecheck(PrecheckData{Question: "Where was Fairfax born?", Context: "Step 1: ... Melbourne"})
			},
			want:    []string{"YES or NO", "Step 1: ... Melbourne", "Question: Where was Fairfax born?"},
			notWant: []string{"<no value>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.render()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("rendered prompt lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("rendered prompt contains %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name, prompt string
		data         any
		wantErr      string
	}{
		{"unknown prompt", "nope", nil, `no prompt named "nope"`},
		{"missing map key", Judge, map[string]any{"Text": "x"}, "EntityTypes"},
		{"wrong struct", Summarize, struct{ Kind string }{"entity"}, "Name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(tt.prompt, tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Render(%q) error = %v, want one mentioning %q", tt.prompt, err, tt.wantErr)
			}
		})
	}
}

func TestRenderPathPrompts(t *testing.T) {
	paths := []string{"Alice -[works_at]-> Acme", "Acme -[located_in]-> Berlin"}
	sel, err := Render(PathsSelect, map[string]any{"Question": "Where does Alice work?", "Paths": paths, "Ranked": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Where does Alice work?", "1. Alice -[works_at]-> Acme", "2. Acme -[located_in]-> Berlin", "most to least useful", "NONE"} {
		if !strings.Contains(sel, want) {
			t.Errorf("paths_select lacks %q:\n%s", want, sel)
		}
	}
	ans, err := Render(PathsAnswer, map[string]any{"Question": "Q?", "Priority": paths[:1], "Additional": paths[1:]})
	if err != nil {
		t.Fatal(err)
	}
	hi, add := strings.Index(ans, "High priority paths:"), strings.Index(ans, "Additional paths:")
	if hi < 0 || add < hi || !strings.Contains(ans[hi:add], paths[0]) || !strings.Contains(ans[add:], paths[1]) {
		t.Errorf("paths_answer must list priority paths before additional ones:\n%s", ans)
	}
	plain, _ := Render(PathsAnswer, map[string]any{"Question": "Q?", "Priority": paths})
	if strings.Contains(plain, "High priority") || strings.Contains(plain, "<no value>") {
		t.Errorf("without additional paths there are no priority headings:\n%s", plain)
	}
}

func TestRenderLogicPlanWithoutOperators(t *testing.T) {
	if _, err := RenderLogicPlan(LogicPlanData{Question: "q"}); err != nil {
		t.Errorf("a plan prompt without operators still renders: %v", err)
	}
}
