package loader_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/docgraph/docgraph/loader"
)

// FuzzLoadPDF checks that no input makes Load panic, and that every result
// is either a document with valid, non-empty UTF-8 text or a *FileError.
func FuzzLoadPDF(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join(pdfDir, "*.pdf"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seed PDFs in %s: %v", pdfDir, err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("%PDF-1.4\n%%EOF\n"))
	f.Add([]byte("%PDF-1.4\ntrailer\n<< /Root 1 0 R >>\nstartxref\n0\n%%EOF\n"))

	l := loader.New(loader.WithMaxBytes(1 << 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.pdf")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		doc, err := l.Load(context.Background(), path)
		if err != nil {
			var fe *loader.FileError
			if !errors.As(err, &fe) || fe.Path != path {
				t.Fatalf("error %v (%T) is not a *FileError for the file", err, err)
			}
			return
		}
		if !utf8.ValidString(doc.Text) || !utf8.ValidString(doc.Title) {
			t.Fatalf("invalid UTF-8 in text %q or title %q", doc.Text, doc.Title)
		}
		if strings.TrimSpace(doc.Text) == "" {
			t.Fatal("document with no text returned without ErrEmpty")
		}
		if want := loader.NewDocument(path, "pdf", doc.Title, doc.Text); doc.ID != want.ID || doc.Hash != want.Hash {
			t.Fatalf("ID/Hash %s/%s not derived from the text", doc.ID, doc.Hash)
		}
	})
}
