package ner_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/docgraph/docgraph/llm"
	"github.com/docgraph/docgraph/llm/llmtest"
	"github.com/docgraph/docgraph/ner"
)

// Loop-NER against an OpenAI-compatible server (a local test server here):
// one extraction, one gleaning round, and the judge is not needed because
// no round is left.
func ExampleNewLoop() {
	srv := llmtest.NewServer(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Last(), "were missed") {
			return llmtest.Reply{Content: `("relationship"<|>Marie Curie<|>Polonium<|>She discovered it.<|>discovery<|>9)##` + "\n<|COMPLETE|>"}
		}
		return llmtest.Reply{Content: `Here you go: ("entity"<|>Marie Curie<|>person<|>A physicist and chemist.)##` + "\n<|COMPLETE|>"}
	})
	defer srv.Close()

	client, err := llm.New("openai:gpt-4o-mini", llm.WithBaseURL(srv.OpenAIBaseURL()), llm.WithAPIKey("sk-example"))
	if err != nil {
		panic(err)
	}
	defer client.Close()

	loop := ner.NewLoop(client, ner.WithGleaning(1), ner.WithVariant(ner.VariantBase),
		ner.WithEntityTypes("person", "element", "organization"))
	x, err := loop.Extract(context.Background(), ner.Chunk{ID: "c1", Text: "Marie Curie discovered polonium."})
	if err != nil {
		panic(err)
	}
	for _, e := range x.Entities {
		fmt.Printf("%s (%s)\n", e.Name, e.Type)
	}
	for _, r := range x.Relations {
		fmt.Printf("%s -> %s: %s\n", r.Source, r.Target, r.Keywords)
	}
	st := loop.Stats()
	fmt.Printf("calls %d, rounds %d, rejected %d\n", st.Calls, st.Rounds, st.Rejected)
	// Output:
	// Marie Curie (person)
	// Polonium (unknown)
	// Marie Curie -> Polonium: discovery
	// calls 2, rounds 1, rejected 0
}

func ExampleParseRecords() {
	x := ner.ParseRecords("```\n" +
		`("entity"<|>Go<|>technology<|>A programming language.)##` + "\n" +
		`("entity"<|>Google<|>organization)##` + "\n" + // a field short: rejected
		`("relationship"<|>Google<|>Go<|>Google created Go.<|>creator<|>8)##` + "\n```")
	fmt.Println(len(x.Entities), len(x.Relations), x.Rejected)
	// Output: 1 1 1
}

func ExampleParseJudge() {
	for _, a := range []string{"YES", "no.", "Yes, many more."} {
		yes, ok := ner.ParseJudge(a)
		fmt.Println(yes, ok)
	}
	// Output:
	// true true
	// false true
	// false false
}
