//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/docgraph/docgraph/internal/clitest"
)

// TestIngestLinksLeadingOutside: symbolic links in a folder that lead out
// of it (to a secret, to files of /proc, one of which blocks when read)
// are listed as not ingested and never read, and the run ends; with
// --follow-outside-links the secret is read, and the files of /proc fail
// at once, named. Each run is a child process, killed (and the test
// failed) if it blocks.
func TestIngestLinksLeadingOutside(t *testing.T) {
	base := t.TempDir()
	docs, away := filepath.Join(base, "docs"), filepath.Join(base, "away")
	for _, d := range []string{docs, away} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(docs, name)); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(docs, "a.md"), "# A\n\nAda Lovelace met Charles Babbage in London.")
	write(filepath.Join(away, "secret.txt"), "root:x:0:0:Quixotrysecret:/root:/bin/bash\n")
	link(filepath.Join(away, "secret.txt"), "p.txt")
	var proc []string // links to files of a pseudo file system
	if _, err := os.Stat("/proc/self/status"); err == nil {
		link("/proc/self/status", "status.txt")
		proc = append(proc, "status.txt")
	}
	if f, err := os.OpenFile("/proc/kmsg", os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil { // opening reads nothing
		f.Close()
		link("/proc/kmsg", "kmsg.txt")
		proc = append(proc, "kmsg.txt")
	}

	// The files of /proc fail with --follow-outside-links: exit status 2.
	followCode := 0
	var procFailed []string
	for _, p := range proc {
		followCode = 2
		procFailed = append(procFailed, "failed: "+filepath.Join(docs, p)+": on a pseudo file system (proc)")
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"links stay in the folder", nil, 0, []string{
			"documents: 1 added",
			"not ingested, as of no supported type: " + strconv.Itoa(1+len(proc)) + " symbolic link leading outside the folders given",
		}},
		{"--follow-outside-links", []string{"--follow-outside-links"}, followCode, append([]string{"documents: 2 added"}, procFailed...)},
	}
	for i, tt := range tests {
		args := append([]string{"--store", "sqlite://" + filepath.Join(base, "g"+strconv.Itoa(i)+".db")}, tt.args...)
		cmd := clitest.Command(t, "TestIngestChild", append(args, docs)...)
		cmd.Dir = base
		r := clitest.Run(t, cmd)
		if r.Code != tt.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", tt.name, r.Code, tt.code, r.Stdout, r.Stderr)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("%s: summary lacks %q:\n%s", tt.name, w, r.Stdout)
			}
		}
	}
}
