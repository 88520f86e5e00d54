package eval_test

import (
	"fmt"

	"github.com/docgraph/docgraph/eval"
)

func ExampleRecall() {
	retrieved := []string{"p7", "p3", "p9", "p1", "p4"}
	gold := []string{"p1", "p3"}
	fmt.Println(eval.Recall(retrieved, gold, 2), eval.Recall(retrieved, gold, 5))
	// Output: 0.5 1
}

func ExampleF1() {
	golds := []string{"G. Stanley Hall"}
	fmt.Println(eval.ExactMatch("G. Stanley Hall [2]", golds), eval.F1("Stanley Hall", golds))
	// Output: 1 0.8
}

func ExampleMedian() {
	// Three rounds of x4/x1 ingest ratios, and two.
	fmt.Println(eval.Median([]float64{4.78, 4.40, 4.39}), eval.Median([]float64{4.2, 4.6}))
	// Output: 4.4 4.4
}
