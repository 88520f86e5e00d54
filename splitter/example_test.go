package splitter_test

import (
	"fmt"
	"log"

	"github.com/docgraph/docgraph/splitter"
)

func ExampleSplitter_Split() {
	s, err := splitter.New(splitter.WithChunkSize(16), splitter.WithOverlap(6))
	if err != nil {
		log.Fatal(err)
	}
	text := "Graphs link entities. Chunks keep sentences whole.\n\n" +
		"知识图谱连接实体。分块保留句子。"
	for _, c := range s.Split("doc1", text) {
		fmt.Printf("%s %2d tokens [%d,%d) %q\n", c.ID(), c.Tokens, c.Start, c.End, c.Text)
	}
	// Output:
	// doc1:0000 11 tokens [0,50) "Graphs link entities. Chunks keep sentences whole."
	// doc1:0001 15 tokens [22,79) "Chunks keep sentences whole.\n\n知识图谱连接实体。"
	// doc1:0002 16 tokens [61,100) "谱连接实体。分块保留句子。"
}

func ExampleTokenizer_Truncate() {
	tok, err := splitter.NewTokenizer("cl100k_base")
	if err != nil {
		log.Fatal(err)
	}
	text := "The quick brown fox jumps over the lazy dog."
	fmt.Println(tok.Count(text))
	fmt.Printf("%q\n", tok.Truncate(text, 4))
	// Output:
	// 10
	// "The quick brown fox"
}
