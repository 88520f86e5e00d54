package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/pipeline"
)

// hangGuard bounds a run that must not block: a regression fails the test
// instead of hanging it (what blocks is a read, which no context ends).
// It says nothing about speed: a run here takes well under a second.
const hangGuard = 2 * time.Minute

// ingestGuarded runs Ingest over paths, failing the test if it blocks.
func ingestGuarded(t *testing.T, p *pipeline.Pipeline, paths []string) *pipeline.Summary {
	t.Helper()
	type result struct {
		sum *pipeline.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := p.Ingest(context.Background(), paths, pipeline.Options{})
		done <- result{sum, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.sum
	case <-time.After(hangGuard):
		t.Fatalf("ingest of %v blocked", paths)
		return nil
	}
}

// kmsgReadable reports whether this process may open /proc/kmsg, whose
// read blocks until the kernel logs something. Opening it reads nothing.
func kmsgReadable() bool {
	f, err := os.OpenFile("/proc/kmsg", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// procLinks makes a folder with links named like documents to files of
// /proc: /proc/self/status (always there) and, when this process may
// open it, /proc/kmsg. It returns the folder and the links.
func procLinks(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "doc.md"), "# Doc\n\nAda Lovelace wrote the notes.")
	targets := map[string]string{"status.txt": "/proc/self/status"}
	if kmsgReadable() {
		targets["kmsg.txt"] = "/proc/kmsg"
	} else {
		t.Log("/proc/kmsg cannot be opened here: the blocking case is left out")
	}
	var links []string
	for name, target := range targets {
		l := filepath.Join(dir, name)
		must(t, os.Symlink(target, l))
		links = append(links, l)
	}
	return dir, links
}

// TestIngestDoesNotBlockOnProcLinks: a link to a file of /proc (kmsg
// blocks when read) is passed over without being read: it leads out of
// the folder.
func TestIngestDoesNotBlockOnProcLinks(t *testing.T) {
	dir, links := procLinks(t)
	p, _ := newPipeline(t, filepath.Join(t.TempDir(), "g.db"), pipeline.Settings{})
	sum := ingestGuarded(t, p, []string{dir})
	if sum.Added != 1 || sum.FilesRead != 1 || sum.Unsupported != len(links) {
		t.Errorf("%d added, %d read, %d unsupported %+v, failures %+v; want 1, 1, %d", sum.Added, sum.FilesRead, sum.Unsupported, sum.UnsupportedFiles, sum.Failures, len(links))
	}
}

// TestWalkRefusesPseudoFiles: files and folders of /proc and /sys named
// on the command line are refused by the walk with their reason, none
// opened: their reads can block (kmsg) or never end.
func TestWalkRefusesPseudoFiles(t *testing.T) {
	tests := []struct{ path, kind string }{
		{"/proc/self/status", "proc"},
		{"/proc/self/net", "proc"}, // a folder
		{"/proc/kmsg", "proc"},
		{"/sys/kernel/uevent_seqnum", "sysfs"},
		{"/sys/kernel", "sysfs"},
	}
	for _, tt := range tests {
		if _, err := os.Stat(tt.path); err != nil {
			t.Logf("%s: %v; left out", tt.path, err)
			continue
		}
		files, passed, err := pipeline.Walk([]string{tt.path})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 0 || len(passed) != 1 || passed[0].Outcome != pipeline.Failed ||
			!strings.Contains(passed[0].Error, "pseudo file system ("+tt.kind+")") {
			first := pipeline.FileResult{}
			if len(passed) > 0 {
				first = passed[0]
			}
			t.Errorf("%s: %d files, %d passed over, the first %s %q; want one failure naming the pseudo file system %s",
				tt.path, len(files), len(passed), first.Outcome, first.Error, tt.kind)
		}
	}
}

// TestIngestFollowingLinksRefusesProcFiles: with FollowOutsideLinks, a
// link to a file of /proc is followed as far as the walk, which refuses
// it, named, without opening it.
func TestIngestFollowingLinksRefusesProcFiles(t *testing.T) {
	dir, links := procLinks(t)
	p, _ := newPipeline(t, filepath.Join(t.TempDir(), "g.db"), pipeline.Settings{FollowOutsideLinks: true})
	sum := ingestGuarded(t, p, []string{dir})
	if sum.Added != 1 || sum.FilesRead != 1 || sum.Failed != len(links) {
		t.Fatalf("%d added, %d read, %d failed %+v; want 1, 1, %d", sum.Added, sum.FilesRead, sum.Failed, sum.Failures, len(links))
	}
	for _, f := range sum.Failures {
		if f.Loaded || !strings.Contains(f.Error, f.Path+": on a pseudo file system (proc)") {
			t.Errorf("%+v: want a failure naming the pseudo file system, unread", f)
		}
	}
}

// TestWalkDoesNotBlockOnIgnoreFiles: an ignore file that is a named pipe
// or a link to /proc/kmsg leaves its folder out, named, instead of
// blocking the walk.
func TestWalkDoesNotBlockOnIgnoreFiles(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "doc.md"), "# Doc\n\nAda Lovelace wrote the notes.")
	write(t, filepath.Join(root, "piped", "a.md"), "# A\n\nCharles Babbage built engines.")
	must(t, syscall.Mkfifo(filepath.Join(root, "piped", pipeline.IgnoreFile), 0o644))
	want := map[string]string{filepath.Join(root, "piped"): "not a regular file (a named pipe)"}
	if kmsgReadable() {
		write(t, filepath.Join(root, "kmsg", "b.md"), "# B\n\nGrace Hopper wrote compilers.")
		must(t, os.Symlink("/proc/kmsg", filepath.Join(root, "kmsg", pipeline.IgnoreFile)))
		want[filepath.Join(root, "kmsg")] = "on a pseudo file system (proc)"
	}
	type walked struct {
		files  []string
		passed []pipeline.FileResult
	}
	done := make(chan walked, 1)
	go func() {
		files, passed, _ := pipeline.Walk([]string{root})
		done <- walked{files, passed}
	}()
	var w walked
	select {
	case w = <-done:
	case <-time.After(hangGuard):
		t.Fatal("the walk blocked on an ignore file")
	}
	if len(w.files) != 1 || len(w.passed) != len(want) {
		t.Errorf("files %v, passed over %+v; want doc.md alone, %d folders left out", w.files, w.passed, len(want))
	}
	for _, r := range w.passed {
		if reason, ok := want[r.Path]; !ok || r.Outcome != pipeline.Failed || !strings.Contains(r.Error, "cannot read its .docgraphignore") || !strings.Contains(r.Error, reason) {
			t.Errorf("%+v: want the folder left out, saying %q", r, reason)
		}
	}
}
