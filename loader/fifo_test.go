//go:build unix

package loader_test

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/loader"
)

// TestLoadRefusesNamedPipe: a named pipe called x.txt must fail at once,
// not wait forever in open for a writer that never comes.
func TestLoadRefusesNamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.txt")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("cannot make a named pipe here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := loader.New().Load(context.Background(), p)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, loader.ErrUnsupported) {
			t.Fatalf("want ErrUnsupported for a named pipe, got %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Load blocked on a named pipe")
	}
}

// TestReadableNamedPipe: Readable looks into files with unknown names, but
// never waits on a named pipe.
func TestReadableNamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("cannot make a named pipe here:", err)
	}
	done := make(chan bool, 1)
	go func() { done <- loader.Readable(p) }()
	select {
	case got := <-done:
		if got {
			t.Error("Readable(named pipe) = true")
		}
	case <-time.After(time.Minute):
		t.Fatal("Readable blocked on a named pipe")
	}
}
