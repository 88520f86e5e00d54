package loader_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"docgraph/loader"
)

func TestDebugCorpusTiming(t *testing.T) {
	dir := os.Getenv("HOME") + "/.cache/go-build/fuzz/docgraph/loader/FuzzLoadPDF"
	files, _ := filepath.Glob(dir + "/*")
	l := loader.New(loader.WithMaxBytes(1 << 20))
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		s := string(raw)
		i := strings.Index(s, "[]byte(")
		q, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(s[i+7:]), ")"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "x.pdf")
		os.WriteFile(p, []byte(q), 0o644)
		start := time.Now()
		_, err = l.Load(context.Background(), p)
		if d := time.Since(start); d > 50*time.Millisecond {
			fmt.Println(filepath.Base(f), len(q), d, err)
		}
	}
}
