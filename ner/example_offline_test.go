package ner_test

import (
	"context"
	"fmt"

	"github.com/docgraph/docgraph/ner"
)

func ExampleOffline_Extract() {
	x, err := ner.NewOffline().Extract(context.Background(), ner.Chunk{
		ID:       "p0",
		DocTitle: "Teutberga",
		Text:     "Teutberga (died 11 November 875) was a queen of Lotharingia by marriage to Lothair II.",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range x.Entities {
		fmt.Printf("%s (%s)\n", e.Name, e.Type)
	}
	for _, r := range x.Relations[:2] {
		fmt.Printf("%s -> %s [%s]\n", r.Source, r.Target, r.Keywords)
	}
	// Output:
	// Teutberga (document)
	// 11 November 875 (date)
	// Lotharingia (other)
	// Lothair II (person)
	// Teutberga -> 11 November 875 [died]
	// Teutberga -> Lotharingia [died, queen]
}

func ExampleOffline_Mentions() {
	for _, e := range ner.NewOffline().Mentions("Who died first, Thomas Valentine Cooper or John Ellis Roosevelt?") {
		fmt.Println(e.Name)
	}
	// Output:
	// Thomas Valentine Cooper
	// John Ellis Roosevelt
}
