//go:build unix

package loader_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestLaTeXInputNamedPipe: an \input naming a named pipe is left out at
// once, not read forever.
func TestLaTeXInputNamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.tex"), 0o644); err != nil {
		t.Skip("cannot make a named pipe here:", err)
	}
	main := filepath.Join(dir, "main.tex")
	if err := os.WriteFile(main, []byte("Before. \\input{pipe} After."), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan *loader.Document, 1)
	go func() {
		doc, err := loader.New().Load(context.Background(), main)
		if err != nil {
			t.Error(err)
		}
		done <- doc
	}()
	select {
	case doc := <-done:
		if doc != nil && (strings.Join(strings.Fields(doc.Text), " ") != "Before. After." || !strings.Contains(strings.Join(doc.Warnings, "\n"), `\input{pipe} left out: not a regular file`)) {
			t.Errorf("text %q, warnings %q", doc.Text, doc.Warnings)
		}
	case <-time.After(time.Minute):
		t.Fatal("Load blocked on an \\input of a named pipe")
	}
}
