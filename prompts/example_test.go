package prompts_test

import (
	"fmt"
	"strings"

	"github.com/docgraph/docgraph/prompts"
)

func ExampleRenderJudge() {
	p, err := prompts.RenderJudge(prompts.ExtractData{EntityTypes: []string{"person", "city"}})
	if err != nil {
		panic(err)
	}
	fmt.Print(p)
	// Output:
	// Look at the text and at every record written so far. Are there still entities
	// or relationships in the text that have not been written as records?
	// Entity types that count: [person, city].
	//
	// Answer with exactly one word, YES or NO.
}

func ExampleRender() {
	p, err := prompts.Render(prompts.Keywords, prompts.KeywordsData{Query: "Who founded Acme?", Language: "English"})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(p, "Question: Who founded Acme?"))
	// Output: true
}
