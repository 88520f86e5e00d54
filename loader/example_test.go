package loader_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docgraph/docgraph/loader"
)

func ExampleLoader_Load() {
	dir, _ := os.MkdirTemp("", "loader-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "notes.md")
	os.WriteFile(path, []byte("# Meeting Notes\r\n\r\nShip on Friday.\r\n"), 0o644)

	l := loader.New(loader.WithMaxBytes(1 << 20))
	doc, err := l.Load(context.Background(), path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (%s): %q\n", doc.Title, doc.Format, doc.Text)

	_, err = l.Load(context.Background(), filepath.Join(dir, "sheet.xlsx"))
	fmt.Println(errors.Is(err, loader.ErrUnsupported))
	// Output:
	// Meeting Notes (md): "# Meeting Notes\n\nShip on Friday.\n"
	// true
}

func ExampleNewDocument() {
	doc := loader.NewDocument("eval/q17", "txt", "Question 17", "Rivers carry sediment.")
	fmt.Println(doc.ID, len(doc.Hash))
	// Output:
	// d0751b97896313d7430abde74cd8d97f 64
}

// Warnings come in two forms: one line per problem for people, and the
// same problems counted by kind for programs that store or filter them.
func ExampleDocument_issues() {
	dir, _ := os.MkdirTemp("", "loader-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "latin1.txt")
	os.WriteFile(path, []byte("caf\xe9 cr\xe8me\n"), 0o644)

	doc, err := loader.New().Load(context.Background(), path)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range doc.Issues {
		fmt.Printf("%s ×%d: %s\n", w.Kind, w.Count, w.Message)
	}
	fmt.Println(doc.Warnings[0] == doc.Issues[0].Message)
	// Output:
	// invalid-utf8 ×2: invalid UTF-8 repaired: 2 bytes replaced with U+FFFD
	// true
}
