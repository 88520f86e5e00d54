package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"docgraph/loader"
)

func FuzzHang(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(pdfDir, "*.pdf"))
	for _, p := range seeds {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	l := loader.New(loader.WithMaxBytes(1 << 20))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.pdf")
		os.WriteFile(path, data, 0o644)
		done := make(chan struct{})
		go func() { l.Load(context.Background(), path); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			os.WriteFile("/tmp/hang.pdf", data, 0o644)
			t.Fatal("hang")
		}
	})
}
