package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docgraph/docgraph/pipeline"
)

// BenchmarkWalkDeepTree walks a single chain of nested folders with one
// document at each level, the shape that made the ignore rules' reload
// cost grow with the cube of the depth. ns/level is the cost per folder.
func BenchmarkWalkDeepTree(b *testing.B) {
	for _, depth := range []int{100, 300, 900} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			root := b.TempDir()
			dir := root
			for i := range depth {
				dir = filepath.Join(dir, "d")
				if err := os.Mkdir(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%d.md", i)), []byte("x"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			// One ignore file near the top, so the rules are consulted at every level.
			if err := os.WriteFile(filepath.Join(root, "d", pipeline.IgnoreFile), []byte("*.draft.md\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				files, failures, err := pipeline.Walk([]string{root})
				if err != nil || len(failures) != 0 || len(files) != depth {
					b.Fatalf("%d files, failures %v, %v", len(files), failures, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(depth), "ns/level")
		})
	}
}
