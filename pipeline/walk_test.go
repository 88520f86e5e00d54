//go:build unix

package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/docgraph/docgraph/pipeline"
)

// deepTree makes a chain of folders under root whose full path outgrows
// PATH_MAX (built relative to open folders: a path that long cannot be
// named), with a document at level shallow (reachable) and one at the
// bottom (not). It returns the reachable document's path.
func deepTree(t *testing.T, root string, shallow int) string {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 200)
	levels := unix.PathMax/len(name) + 3
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := root
	reachable := ""
	for i := range levels {
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
		path = filepath.Join(path, name)
		if i == shallow || i == levels-1 {
			f, err := unix.Openat(fd, "note.md", unix.O_WRONLY|unix.O_CREAT, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			unix.Write(f, []byte("Ada Lovelace wrote notes."))
			unix.Close(f)
			if i == shallow {
				reachable = filepath.Join(path, "note.md")
			}
		}
	}
	unix.Close(fd)
	return reachable
}

// TestWalkPassesOverOddPaths: one odd path never aborts the walk; each is
// reported with its reason and everything else is found.
func TestWalkPassesOverOddPaths(t *testing.T) {
	root := t.TempDir()
	put := func(rel, text string) string {
		p := filepath.Join(root, rel)
		write(t, p, text)
		return p
	}
	good := put("a.md", "# A")
	inner := put("sub/b.txt", "b")
	put("LICENSE", "no extension")
	put("main.go", "package main")
	page := put("page", "<!DOCTYPE html><html><body><p>An HTML page saved without an extension.</p></body></html>") // read by its content
	put("photo.bin", "\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	outside := filepath.Join(t.TempDir(), "linked.md")
	write(t, outside, "linked")
	must(t, os.Symlink(outside, filepath.Join(root, "link.md")))                   // leads out: not followed
	must(t, os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "subdir"))) // a folder: not followed
	must(t, os.Symlink(filepath.Join(root, "gone.md"), filepath.Join(root, "broken.md")))
	fifo := filepath.Join(root, "pipe.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// An ignore file that cannot be read leaves its folder out, named.
	must(t, os.MkdirAll(filepath.Join(root, "odd", pipeline.IgnoreFile), 0o755))
	put("odd/c.md", "c")
	deep := deepTree(t, filepath.Join(root, "deep"), 3)
	named := filepath.Join(t.TempDir(), "named.md")
	must(t, syscall.Mkfifo(named, 0o644))

	files, passed, err := pipeline.Walk([]string{root, named})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{good, deep, inner, page}
	if strings.Join(files, "\n") != strings.Join(slices.Sorted(slices.Values(want)), "\n") {
		t.Errorf("files:\n%s\nwant:\n%s", strings.Join(files, "\n"), strings.Join(slices.Sorted(slices.Values(want)), "\n"))
	}
	got := map[string]pipeline.FileResult{}
	for _, r := range passed {
		got[r.Path] = r
	}
	tooDeep := ""
	for p, r := range got {
		if strings.Contains(r.Error, "longer than the system allows") {
			tooDeep = p
		}
	}
	tests := []struct {
		path    string
		outcome pipeline.Outcome
		reason  string
	}{
		{fifo, pipeline.Failed, "not a regular file (a named pipe)"},
		{named, pipeline.Failed, "not a regular file (a named pipe)"},
		{filepath.Join(root, "broken.md"), pipeline.Failed, "broken symbolic link"},
		{filepath.Join(root, "odd"), pipeline.Failed, "cannot read its .docgraphignore"},
		{tooDeep, pipeline.Failed, "file name too long"},
		{filepath.Join(root, "LICENSE"), pipeline.Unsupported, "no file extension"},
		{filepath.Join(root, "main.go"), pipeline.Unsupported, "unsupported file type .go"},
		{filepath.Join(root, "photo.bin"), pipeline.Unsupported, "unsupported file type .bin"},
		{filepath.Join(root, "subdir"), pipeline.Unsupported, "symbolic link to a folder"},
		{filepath.Join(root, "link.md"), pipeline.Unsupported, "symbolic link leading outside the folders given"},
	}
	for _, tt := range tests {
		r, ok := got[tt.path]
		if !ok || r.Outcome != tt.outcome || !strings.Contains(r.Error, tt.reason) {
			t.Errorf("%s: got %+v, want %s %q", tt.path, r, tt.outcome, tt.reason)
		}
	}
	if len(passed) != len(tests) {
		t.Errorf("%d paths passed over, want %d: %+v", len(passed), len(tests), passed)
	}

	// The same tree ingested: the documents are stored, every odd path is
	// a failure or an unsupported file of the summary, and nothing blocks
	// on the named pipes.
	p, _ := newPipeline(t, filepath.Join(t.TempDir(), "g.db"), pipeline.Settings{})
	sum, err := p.Ingest(context.Background(), []string{root, named}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Added != 4 || sum.Failed != 5 || sum.Unsupported != 5 || len(sum.Failures) != 5 || len(sum.UnsupportedFiles) != 5 {
		t.Errorf("summary: %d added, %d failed, %d unsupported; failures %+v", sum.Added, sum.Failed, sum.Unsupported, sum.Failures)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
