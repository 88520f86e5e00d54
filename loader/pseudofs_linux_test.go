package loader_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docgraph/docgraph/loader"
)

// TestLoadRefusesPseudoFiles: a file of /proc or /sys, reached through a
// link named like a document, fails at once without being read: such
// files report no size, can block (/proc/kmsg waits for the kernel to
// log) or never end, and are no documents. The guard only turns a
// blocked read into a failure; it says nothing about speed.
func TestLoadRefusesPseudoFiles(t *testing.T) {
	tests := []struct{ target, fs string }{
		{"/proc/self/status", "proc"},
		{"/proc/kmsg", "proc"}, // blocks when read, with nothing new logged
		{"/sys/kernel/uevent_seqnum", "sysfs"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		f, err := os.OpenFile(tt.target, os.O_RDONLY|syscall.O_NONBLOCK, 0) // opening reads nothing
		if err != nil {
			t.Logf("%s: %v; left out", tt.target, err)
			continue
		}
		f.Close()
		bare := filepath.Join(dir, fmt.Sprintf("p%d", i)) // judged by its content
		link := bare + ".txt"
		for _, l := range []string{bare, link} {
			if err := os.Symlink(tt.target, l); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error, 1)
		go func() {
			_, err := loader.New().Load(context.Background(), link)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, loader.ErrUnsupported) || !strings.Contains(fmt.Sprint(err), "pseudo file system ("+tt.fs+")") {
				t.Errorf("%s: got %v, want ErrUnsupported naming the pseudo file system %s", tt.target, err, tt.fs)
			}
		case <-time.After(2 * time.Minute):
			t.Errorf("%s: Load blocked", tt.target)
		}
		if loader.Readable(bare) {
			t.Errorf("%s: readable by its content", tt.target)
		}
	}
}
