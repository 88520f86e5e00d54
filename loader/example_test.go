package loader_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"docgraph/loader"
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

	_, err = l.Load(context.Background(), filepath.Join(dir, "slides.pptx"))
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
