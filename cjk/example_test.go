package cjk_test

import (
	"fmt"

	"github.com/docgraph/docgraph/cjk"
)

func ExampleTermList() {
	fmt.Println(cjk.TermList("稻花香2号的亲本是哪个品种？"))
	fmt.Println(cjk.IndexText("Go语言"))
	// Output:
	// [稻花 花香 2 号的 的亲 亲本 本是 是哪 哪个 个品 品种]
	// Go 语言
}
