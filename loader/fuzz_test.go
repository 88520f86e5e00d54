package loader_test

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadPDF checks PDFs as fuzzLoad does, from the fixture PDFs.
func FuzzLoadPDF(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join(pdfDir, "*.pdf"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed PDFs in %s: %v", pdfDir, err)
	}
	seeds := [][]byte{[]byte("%PDF-1.4\n%%EOF\n"), []byte("%PDF-1.4\ntrailer\n<< /Root 1 0 R >>\nstartxref\n0\n%%EOF\n")}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	fuzzLoad(f, "fuzz.pdf", seeds...)
}
