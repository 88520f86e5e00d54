package loader_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docgraph/docgraph/loader"
)

// TestReadableByContent: files whose names say nothing docgraph knows are
// read when their first bytes show a supported format, and only then.
func TestReadableByContent(t *testing.T) {
	dir := t.TempDir()
	var xlsx bytes.Buffer
	zw := zip.NewWriter(&xlsx)
	w, _ := zw.Create("xl/workbook.xml")
	w.Write([]byte("<workbook/>"))
	zw.Close()
	tarGz := gzipOf(t, append([]byte("notes.md\x00\x00\x00\x000000644\x00"), make([]byte, 600)...))
	cases := []struct {
		name, format, want string
		data               []byte
	}{
		{"report.bin", "docx", "Quarterly numbers", docxOf(t, "", wpara("", "Quarterly numbers"))},
		{"page", "html", "Tide.", []byte("<!DOCTYPE html><html><head><title>Harbour page</title></head><body><p>Tide.</p></body></html>")},
		{"notes.z", "txt", "# Notes", gzipOf(t, []byte("# Notes\n\nGzipped markdown under a made-up name.\n"))},
		{"slides.data", "odp", "Reefs", odfOf(t, "application/vnd.oasis.opendocument.presentation", "", `<office:presentation><draw:page><text:p>Reefs</text:p></draw:page></office:presentation>`)},
		{"photo.jpg", "", "", append([]byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, make([]byte, 100)...)},
		{"budget.xlsx", "", "", xlsx.Bytes()},
		{"backup.tgz", "", "", tarGz},
		{"Makefile", "", "", []byte("all:\n\tgo build ./...\n")},
		{"empty.bin", "", "", nil},
	}
	l := loader.New()
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := loader.Readable(p); got != (c.format != "") {
			t.Errorf("Readable(%s) = %v, want %v", c.name, got, c.format != "")
		}
		doc, err := l.Load(context.Background(), p)
		if c.format == "" {
			if !errors.Is(err, loader.ErrUnsupported) {
				t.Errorf("Load(%s) = %v, want ErrUnsupported", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Load(%s): %v", c.name, err)
			continue
		}
		if doc.Format != c.format || !strings.Contains(doc.Text, c.want) {
			t.Errorf("Load(%s) = %s %q, want %s with %q", c.name, doc.Format, doc.Text, c.format, c.want)
		}
	}
}
