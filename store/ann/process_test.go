//go:build linux || darwin

package ann

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestHelperWriter is the child process of TestCrossProcessWriter: it
// opens the writer (waiting for the parent's lock), reports that it holds
// it (by making path+".child-locked"), and applies generation 2.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv("ANN_HELPER_PATH")
	if path == "" {
		t.Skip("helper process only")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w, err := OpenWriter(ctx, path, Options{Dim: 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".child-locked", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(2, itemsOf(clustered(13, 300, 16, 4, 0.5), 1000), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCrossProcessWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idx")
	w := openTestWriter(t, path, 16)
	if err := w.Apply(1, itemsOf(clustered(14, 200, 16, 4, 0.5), 0), nil); err != nil {
		t.Fatal(err)
	}
	r := openTestReader(t, path)

	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.v")
	cmd.Env = append(os.Environ(), "ANN_HELPER_PATH="+path)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the other process did not wait for the lock: %v\n%s", err, out.String())
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := os.Stat(path + ".child-locked"); err == nil {
		t.Fatal("the other process took the lock while this one held it")
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatalf("helper: %v\n%s", err, out.String())
	}
	// The other process applied in place (500 nodes fit the file's first
	// 1024): this reader sees its changes through the shared mapping.
	if r.Generation() != 2 || r.Len() != 500 {
		t.Fatalf("after the other process: Generation %d Len %d, want 2 500", r.Generation(), r.Len())
	}
	hits, err := r.Search(clustered(13, 300, 16, 4, 0.5)[5], 1, SearchOptions{})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search: %v %v", hits, err)
	}
}
