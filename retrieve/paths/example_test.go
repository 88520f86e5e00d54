package paths_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/docgraph/docgraph/retrieve/paths"
)

func Example() {
	kb := `Kismet|directed_by|William Dieterle
Kismet|starred_actors|Marlene Dietrich
Morocco|directed_by|Josef von Sternberg
Morocco|starred_actors|Marlene Dietrich
Juarez|directed_by|William Dieterle
Juarez|starred_actors|Bette Davis`
	kg, err := paths.ReadTriples(strings.NewReader(kb))
	if err != nil {
		panic(err)
	}
	spec, err := paths.ParseSpec("se=ppr:exact,pf=spf,pr=bm25")
	if err != nil {
		panic(err)
	}
	r, err := paths.New(kg, spec, paths.WithTopK(2))
	if err != nil {
		panic(err)
	}
	// The seed is the entity in brackets; without brackets, names the
	// question spells out are linked.
	res, err := r.Retrieve(context.Background(), "who directed the films [Marlene Dietrich] acted in", nil)
	if err != nil {
		panic(err)
	}
	for _, p := range res.Paths {
		fmt.Println(p.Text)
	}
	// Output:
	// Marlene Dietrich <-[starred_actors]- Kismet -[directed_by]-> William Dieterle
	// Marlene Dietrich <-[starred_actors]- Morocco -[directed_by]-> Josef von Sternberg
}

func ExampleParseSpec() {
	for _, text := range []string{"pf=beam:emb:triple", "lego:9"} {
		spec, err := paths.ParseSpec(text)
		if err != nil {
			panic(err)
		}
		fmt.Println(spec)
	}
	// Output:
	// se=ppr,pf=beam:emb:triple,pr=emb
	// se=ppr,pf=beam:bm25,pr=random
}

func ExampleAnswerPrompt() {
	high := []paths.Path{{Text: "Kismet -[directed_by]-> William Dieterle"}}
	extra := []paths.Path{{Text: "Kismet -[starred_actors]-> Marlene Dietrich"}}
	prompt, _ := paths.AnswerPrompt("Who directed Kismet?", high, extra)
	fmt.Print(prompt[strings.Index(prompt, "Reasoning paths:"):])
	// Output:
	// Reasoning paths:
	// High priority paths:
	// Kismet -[directed_by]-> William Dieterle
	//
	// Additional paths:
	// Kismet -[starred_actors]-> Marlene Dietrich
	//
	// Question: Who directed Kismet?
}
